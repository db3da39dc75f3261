//! The persisted skill generation: it goes up by one each time the library's content changes
//! (an evolution, an edit, a skill added or removed), across restarts. Every recorded turn
//! keeps the generation it was served under, so training can tell which skills shaped it.

use metaclaw_store::{Store, StoreError};

const GENERATION: &str = "skills.generation";
const FINGERPRINT: &str = "skills.fingerprint";

/// The generation for a library with `fingerprint`: unchanged if the library is the one last
/// seen, else one more than before (the first library ever seen is generation 1).
pub fn advance(store: &mut Store, fingerprint: u64) -> Result<u64, StoreError> {
    let current: u64 = store
        .state_get(GENERATION)?
        .and_then(|g| g.parse().ok())
        .unwrap_or(0);
    let seen = store.state_get(FINGERPRINT)?;
    let fingerprint = fingerprint.to_string();
    if current > 0 && seen.as_deref() == Some(fingerprint.as_str()) {
        return Ok(current);
    }
    let next = current + 1;
    store.state_set(GENERATION, &next.to_string())?;
    store.state_set(FINGERPRINT, &fingerprint)?;
    Ok(next)
}

/// The last persisted generation (0 before any library was loaded).
pub fn read(store: &Store) -> Result<u64, StoreError> {
    Ok(store
        .state_get(GENERATION)?
        .and_then(|g| g.parse().ok())
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goes_up_only_when_the_content_changes_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("m.db");
        let mut store = Store::open(&db).unwrap();
        assert_eq!(read(&store).unwrap(), 0);
        assert_eq!(advance(&mut store, 7).unwrap(), 1);
        assert_eq!(advance(&mut store, 7).unwrap(), 1);
        assert_eq!(advance(&mut store, 8).unwrap(), 2);
        drop(store);
        let mut store = Store::open(&db).unwrap();
        assert_eq!(advance(&mut store, 8).unwrap(), 2);
        assert_eq!(
            advance(&mut store, 7).unwrap(),
            3,
            "going back is a change too"
        );
    }
}
