//! `learning.holdout`: a share of sessions is served without MetaClaw's block, so what
//! learning buys can be measured on the user's own traffic. A session's arm comes from a
//! hash of its id: the same session stays in its arm across turns and restarts, and no
//! table of choices has to be kept. Changing the share moves sessions between arms from
//! their next turn on; each turn records the arm it was served in.

/// Whether `session_id` is in the held-out share `share` (0 = nobody, 0.5 = half).
pub fn held_out(session_id: &str, share: f64) -> bool {
    if share <= 0.0 {
        return false;
    }
    // FNV-1a, stable across builds and platforms unlike the standard library's hasher,
    // then a finalizer: FNV alone barely moves the top bits for ids that differ at the end.
    let fnv = session_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let hash = mix(fnv);
    // The top 53 bits as a uniform fraction in [0, 1).
    let fraction = (hash >> 11) as f64 / (1_u64 << 53) as f64;
    fraction < share
}

/// MurmurHash3's 64-bit finalizer: every input bit reaches every output bit.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_holds_out_nobody_and_a_share_holds_out_about_that_share() {
        let ids: Vec<String> = (0..10_000).map(|i| format!("session-{i}")).collect();
        assert!(!ids.iter().any(|id| held_out(id, 0.0)));
        for share in [0.1, 0.5] {
            let n = ids.iter().filter(|id| held_out(id, share)).count() as f64;
            let expected = share * ids.len() as f64;
            assert!(
                (n - expected).abs() < expected * 0.1,
                "{n} held out at share {share}"
            );
        }
    }

    #[test]
    fn a_session_stays_in_its_arm_and_a_larger_share_keeps_the_smaller_ones() {
        for i in 0..1000 {
            let id = format!("agent:main:{i}");
            assert_eq!(held_out(&id, 0.2), held_out(&id, 0.2));
            if held_out(&id, 0.1) {
                assert!(held_out(&id, 0.3), "{id}");
            }
        }
    }
}
