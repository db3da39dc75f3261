//! Random bearer tokens (proxy key, admin token).

use rand::RngExt;

const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `prefix` followed by 32 URL-safe characters (192 bits) from the thread-local CSPRNG.
pub fn random_token(prefix: &str) -> String {
    let mut rng = rand::rng();
    let mut token = String::with_capacity(prefix.len() + 32);
    token.push_str(prefix);
    for _ in 0..32 {
        token.push(char::from(URL_SAFE[rng.random_range(0..URL_SAFE.len())]));
    }
    token
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_prefixed_url_safe_and_distinct() {
        let a = random_token("mc-");
        let b = random_token("mc-");
        assert_ne!(a, b);
        assert_eq!(a.len(), 35);
        assert!(a.starts_with("mc-"));
        assert!(a[3..].bytes().all(|c| URL_SAFE.contains(&c)));
    }
}
