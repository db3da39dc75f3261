//! A short sentence saying why a unit was found, for people (admin API, UI, CLI).

use crate::unit::MemoryUnit;

const MS_PER_DAY: i64 = 86_400_000;
/// Terms named in a reason; the rest are counted.
const MAX_NAMED: usize = 6;

/// For example "matched 'timezone', 'iso'; similar in meaning (cosine 0.71); pinned;
/// importance 0.9; used 3 days ago". `cosine` is 0 without embeddings.
pub fn reason(unit: &MemoryUnit, matched: &[String], cosine: f32, now_ms: i64) -> String {
    let mut parts = Vec::with_capacity(5);
    if matched.is_empty() && cosine <= 0.0 {
        parts.push("matched by full-text search".to_string());
    } else if !matched.is_empty() {
        let mut named: Vec<String> = matched
            .iter()
            .take(MAX_NAMED)
            .map(|t| format!("'{t}'"))
            .collect();
        if matched.len() > MAX_NAMED {
            named.push(format!("{} more", matched.len() - MAX_NAMED));
        }
        parts.push(format!("matched {}", named.join(", ")));
    }
    if cosine > 0.0 {
        parts.push(format!("similar in meaning (cosine {:.2})", cosine));
    }
    if unit.pinned {
        parts.push("pinned".to_string());
    }
    parts.push(format!("importance {}", short_number(unit.importance)));
    parts.push(match unit.last_accessed_ms {
        Some(at) => format!("used {}", ago(now_ms, at)),
        None => format!("updated {}", ago(now_ms, unit.updated_ms)),
    });
    parts.join("; ")
}

/// 0.9 → "0.9", 0.85 → "0.85", 1 → "1".
fn short_number(v: f32) -> String {
    let s = format!("{:.2}", v);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn ago(now_ms: i64, at_ms: i64) -> String {
    match now_ms.saturating_sub(at_ms).max(0) / MS_PER_DAY {
        0 => "today".to_string(),
        1 => "yesterday".to_string(),
        d => format!("{d} days ago"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_ages_read_naturally() {
        assert_eq!(short_number(0.9), "0.9");
        assert_eq!(short_number(0.85), "0.85");
        assert_eq!(short_number(1.0), "1");
        assert_eq!(ago(10 * MS_PER_DAY, 7 * MS_PER_DAY), "3 days ago");
        assert_eq!(ago(MS_PER_DAY, MS_PER_DAY + 5), "today");
    }
}
