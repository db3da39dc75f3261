//! Which version is running, and Debian's ordering of versions (`dpkg --compare-versions`):
//! the repository's versions are package versions, so `0.2.0~beta1` comes before `0.2.0`.

use std::cmp::Ordering;
use std::sync::OnceLock;

static CURRENT: OnceLock<String> = OnceLock::new();

/// The running MetaClaw's version: what the host set at start (a build stamped with
/// `METACLAW_VERSION`, as channel builds are), else the workspace's.
pub fn current() -> &'static str {
    CURRENT
        .get()
        .map_or(env!("CARGO_PKG_VERSION"), String::as_str)
}

/// Sets the running version once, at start; later calls are ignored.
pub fn set_current(version: &str) {
    let _ = CURRENT.set(version.to_owned());
}

/// Compares two Debian versions (`[epoch:]upstream[-revision]`) as dpkg does.
pub fn compare(a: &str, b: &str) -> Ordering {
    let (ea, ua, ra) = split(a);
    let (eb, ub, rb) = split(b);
    ea.cmp(&eb)
        .then_with(|| compare_part(ua, ub))
        .then_with(|| compare_part(ra, rb))
}

/// (epoch, upstream, revision); a missing epoch is 0 and a missing revision is empty.
fn split(v: &str) -> (u64, &str, &str) {
    let v = v.trim();
    let (epoch, rest) = match v.split_once(':') {
        Some((e, rest)) if !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()) => {
            (e.parse().unwrap_or(u64::MAX), rest)
        }
        _ => (0, v),
    };
    match rest.rsplit_once('-') {
        Some((upstream, revision)) => (epoch, upstream, revision),
        None => (epoch, rest, ""),
    }
}

/// dpkg's `verrevcmp`: alternating non-digit and digit runs; in non-digit runs `~` sorts
/// before everything (even the end), letters before other characters.
fn compare_part(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    while !a.is_empty() || !b.is_empty() {
        let (na, ra) = a.split_at(a.iter().position(u8::is_ascii_digit).unwrap_or(a.len()));
        let (nb, rb) = b.split_at(b.iter().position(u8::is_ascii_digit).unwrap_or(b.len()));
        let order = compare_letters(na, nb);
        if order != Ordering::Equal {
            return order;
        }
        let (da, ra) = ra.split_at(
            ra.iter()
                .position(|c| !c.is_ascii_digit())
                .unwrap_or(ra.len()),
        );
        let (db, rb) = rb.split_at(
            rb.iter()
                .position(|c| !c.is_ascii_digit())
                .unwrap_or(rb.len()),
        );
        let order = compare_digits(da, db);
        if order != Ordering::Equal {
            return order;
        }
        (a, b) = (ra, rb);
    }
    Ordering::Equal
}

fn weight(c: Option<&u8>) -> i32 {
    match c {
        None => 0,
        Some(b'~') => -1,
        Some(c) if c.is_ascii_alphabetic() => i32::from(*c),
        Some(c) => i32::from(*c) + 256,
    }
}

fn compare_letters(a: &[u8], b: &[u8]) -> Ordering {
    let len = a.len().max(b.len());
    (0..len)
        .map(|i| weight(a.get(i)).cmp(&weight(b.get(i))))
        .find(|o| *o != Ordering::Equal)
        .unwrap_or(Ordering::Equal)
}

fn compare_digits(a: &[u8], b: &[u8]) -> Ordering {
    let strip = |d: &[u8]| -> usize { d.iter().position(|c| *c != b'0').unwrap_or(d.len()) };
    let (a, b) = (&a[strip(a)..], &b[strip(b)..]);
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn orders_as_dpkg_does() {
        let less = [
            ("0.1.0", "0.1.1"),
            ("0.1.9", "0.1.10"),
            ("0.2.0~beta1", "0.2.0"),
            ("0.2.0~beta1", "0.2.0~beta2"),
            ("0.2.0~~", "0.2.0~"),
            ("0.2.0", "0.2.0a"),
            ("0.2.0a", "0.2.0+1"),
            ("0.2.0", "0.2.0-1"),
            ("0.2.0-1", "0.2.0-2"),
            ("9.9", "1:0.1"),
            ("1.0.0-9", "1.0.1-1"),
        ];
        for (a, b) in less {
            assert_eq!(compare(a, b), Ordering::Less, "{a} < {b}");
            assert_eq!(compare(b, a), Ordering::Greater, "{b} > {a}");
        }
        assert_eq!(compare("0.01", "0.1"), Ordering::Equal);
        assert_eq!(compare("1:0.1", "1:0.1"), Ordering::Equal);
    }

    #[test]
    fn the_running_version_defaults_to_the_workspace() {
        assert_eq!(current(), env!("CARGO_PKG_VERSION"));
    }
}
