//! Timing of retries, back-off and polling, shared by the backend clients.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after a connection error or a 5xx, on requests that are safe to resend.
    pub max_retries: u32,
    /// First back-off delay; doubles each retry up to `max_delay`, with jitter.
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// How many 429 answers in a row are waited out before giving up.
    pub max_rate_limited: u32,
    /// Wait after a 429 without `Retry-After`.
    pub default_retry_after: Duration,
    /// Longest `Retry-After` honoured; longer values are capped.
    pub max_retry_after: Duration,
    /// Pause between polls of a pending result (tripled while the server reports paused
    /// capacity, six-fold while it is rate limiting).
    pub poll_interval: Duration,
    /// Longest wait for one submitted request to finish.
    pub op_timeout: Duration,
    /// Timeout of one HTTP exchange (long polls included).
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    /// Interval of session heartbeats.
    pub heartbeat_interval: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 6,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(10),
            max_rate_limited: 20,
            default_retry_after: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(60),
            poll_interval: Duration::from_millis(300),
            op_timeout: Duration::from_secs(900),
            request_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(5),
            heartbeat_interval: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// Back-off before retry number `attempt` (0-based): exponential, capped, with jitter
    /// between half and the full delay so that many clients do not retry in lockstep.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX));
        let capped = exp.min(self.max_delay);
        let frac = 0.5 + 0.5 * random_unit();
        capped.mul_f64(frac)
    }
}

/// A random number in [0, 1) from the standard library's randomly keyed hasher.
fn random_unit() -> f64 {
    let bits = RandomState::new().build_hasher().finish() >> 11;
    bits as f64 / (1u64 << 53) as f64
}

/// A random 128-bit hex string, for `X-Idempotency-Key`.
pub(crate) fn random_key() -> String {
    let a = RandomState::new().build_hasher().finish();
    let b = RandomState::new().build_hasher().finish();
    format!("{a:016x}{b:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            ..RetryPolicy::default()
        };
        let first = p.backoff(0);
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
        let third = p.backoff(2);
        assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
        let late = p.backoff(30);
        assert!(late >= Duration::from_millis(500) && late <= Duration::from_millis(1000));
        let distinct: std::collections::HashSet<_> = (0..20).map(|_| p.backoff(3)).collect();
        assert!(distinct.len() > 1, "jitter varies the delay");
    }

    #[test]
    fn idempotency_keys_differ() {
        assert_ne!(random_key(), random_key());
        assert_eq!(random_key().len(), 32);
    }
}
