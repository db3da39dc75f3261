//! The `usage:` lines of `metaclaw status`: the last 24 hours' tokens, the prompt cache's
//! share with and without MetaClaw's blocks, what MetaClaw added and what learning cost.

use metaclaw_engine::providers::CostReport;

pub fn lines(r: &CostReport) -> Vec<String> {
    let mut out = vec![format!(
        "{} turn{} in the last {} h: {} tokens in, {} out{}",
        r.turns,
        if r.turns == 1 { "" } else { "s" },
        r.hours,
        r.input_tokens,
        r.output_tokens,
        cost(r.turns_cost_usd)
    )];
    if let Some(share) = r.cache_read_share {
        let without = r
            .cache_read_share_without_metaclaw
            .map(|w| format!(" (about {} without MetaClaw's blocks)", percent(w)))
            .unwrap_or_default();
        out.push(format!(
            "prompt cache: {} of the prompt read from the cache{without}",
            percent(share)
        ));
    }
    out.push(format!(
        "added by MetaClaw: {} tokens{}",
        r.injected_tokens,
        r.injected_cost_usd
            .map(|c| format!(", at most {}", usd(c)))
            .unwrap_or_default()
    ));
    let l = &r.learning;
    out.push(format!(
        "learning since {} (UTC): {} call{}, {} tokens in, {} out{}",
        l.since_day,
        l.calls,
        if l.calls == 1 { "" } else { "s" },
        l.input_tokens,
        l.output_tokens,
        cost(l.cost_usd)
    ));
    if !r.unpriced_models.is_empty() || !l.unpriced.is_empty() {
        let mut names = r.unpriced_models.clone();
        names.extend(l.unpriced.iter().map(|p| format!("{p} (learning)")));
        out.push(format!(
            "no price for {}: tokens only (add one with `metaclaw config set prices …`)",
            names.join(", ")
        ));
    }
    out
}

fn cost(usd_total: Option<f64>) -> String {
    usd_total
        .map(|c| format!(", {}", usd(c)))
        .unwrap_or_default()
}

fn usd(c: f64) -> String {
    if c > 0.0 && c < 0.01 {
        format!("${c:.4}")
    } else {
        format!("${c:.2}")
    }
}

fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaclaw_engine::providers::LearningCost;

    #[test]
    fn shares_costs_and_unpriced_names_are_spelled_out() {
        let r = CostReport {
            hours: 24,
            turns: 3,
            input_tokens: 10_000,
            output_tokens: 300,
            cache_read_tokens: 9_000,
            cache_write_tokens: 0,
            cache_read_share: Some(0.9),
            cache_read_share_without_metaclaw: Some(0.911),
            injected_tokens: 1_000,
            injected_cost_usd: Some(0.003),
            turns_cost_usd: Some(1.5),
            unpriced_models: vec!["local".into()],
            models: vec![],
            learning: LearningCost {
                since_day: "2026-12-03".into(),
                calls: 1,
                unpriced: vec!["embeddings".into()],
                ..LearningCost::default()
            },
            daily: vec![],
        };
        let text = lines(&r).join("\n");
        assert!(text.contains("3 turns in the last 24 h: 10000 tokens in, 300 out, $1.50"));
        assert!(text.contains("90.0% of the prompt read from the cache (about 91.1% without"));
        assert!(text.contains("added by MetaClaw: 1000 tokens, at most $0.0030"));
        assert!(text.contains("learning since 2026-12-03 (UTC): 1 call, 0 tokens in, 0 out\n"));
        assert!(text.contains("no price for local, embeddings (learning): tokens only"));
    }
}
