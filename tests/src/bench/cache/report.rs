//! The cache benchmark's table and its target.

use super::play::read_share;
use super::run::Outcome;

/// Through MetaClaw, the cache-read share must be at least this share of the direct one.
pub const TARGET_RATIO: f64 = 0.98;

/// MetaClaw's recorded cache reads over its recorded prompt tokens.
pub fn recorded_share(o: &Outcome) -> f64 {
    let prompt: u64 = o.recorded.iter().filter_map(|r| r.input_tokens).sum();
    let read: u64 = o.recorded.iter().filter_map(|r| r.cache_read_tokens).sum();
    if prompt == 0 {
        0.0
    } else {
        read as f64 / prompt as f64
    }
}

pub fn ratio(o: &Outcome) -> f64 {
    let direct = read_share(&o.direct);
    if direct == 0.0 {
        0.0
    } else {
        read_share(&o.through) / direct
    }
}

pub fn meets(o: &Outcome) -> bool {
    ratio(o) >= TARGET_RATIO
}

/// Of the tokens each call resent from the call before it, the share read from the cache
/// through MetaClaw (1 when MetaClaw keeps every resent byte identical and cached).
pub fn resent_read(o: &Outcome) -> f64 {
    let (mut read, mut resent) = (0u64, 0u64);
    for pair in o.through.windows(2) {
        resent += pair[0].prompt.unwrap_or(0);
        read += pair[1].read.min(pair[0].prompt.unwrap_or(0));
    }
    if resent == 0 {
        0.0
    } else {
        read as f64 / resent as f64
    }
}

/// Mean estimated tokens MetaClaw added per call (all its blocks in the request).
fn injected_per_call(o: &Outcome) -> f64 {
    let n = o.recorded.len().max(1) as f64;
    o.recorded
        .iter()
        .filter_map(|r| r.injected_tokens)
        .sum::<u64>() as f64
        / n
}

pub fn table(rows: &[Outcome]) -> String {
    let mut out = String::from(
        "| client (agent) | upstream | calls | cache-read share direct | through MetaClaw | ratio | recorded by MetaClaw | resent prefix read | injected tokens per call |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for o in rows {
        let mark = if meets(o) { "" } else { " (below target)" };
        out.push_str(&format!(
            "| {} ({}) | {} | {} | {:.3} | {:.3} | **{:.3}**{mark} | {:.3} | {:.3} | {:.0} |\n",
            o.combo.client.label(),
            o.combo.agent(),
            o.combo.upstream.label(),
            o.through.len(),
            read_share(&o.direct),
            read_share(&o.through),
            ratio(o),
            recorded_share(o),
            resent_read(o),
            injected_per_call(o),
        ));
    }
    out
}

/// Each call's figures, for finding where a share was lost.
pub fn calls(o: &Outcome) -> String {
    let mut out = format!(
        "{} → {}: call, direct read/prompt, through read/prompt, recorded read/write/prompt, block tokens\n",
        o.combo.client.label(),
        o.combo.upstream.label()
    );
    for (i, ((d, t), r)) in o.direct.iter().zip(&o.through).zip(&o.recorded).enumerate() {
        out.push_str(&format!(
            "  {i}: {}/{} {}/{} {}/{}/{} {} {:?} {:?}\n",
            d.read,
            d.prompt.unwrap_or(0),
            t.read,
            t.prompt.unwrap_or(0),
            r.cache_read_tokens.unwrap_or(0),
            r.cache_write_tokens.unwrap_or(0),
            r.input_tokens.unwrap_or(0),
            r.block_tokens.unwrap_or(0),
            r.injected_skills,
            r.injected_memories,
        ));
    }
    out
}
