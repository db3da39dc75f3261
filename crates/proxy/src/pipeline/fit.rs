//! Fitting the prompt into the context window (docs/architecture.md, Fitting the context
//! window).
//!
//! Drops the oldest non-system turns until the prompt fits `window − max output tokens`,
//! keeping an assistant tool call together with its results. Without a tokenizer, tokens are
//! estimated conservatively as one per three bytes of JSON (real text averages about four).

use serde_json::{Map, Value};

use crate::seams::Protocol;

const DEFAULT_MAX_OUTPUT: u64 = 4096;

/// Returns how many messages were dropped.
pub fn apply(protocol: Protocol, body: &mut Map<String, Value>, window: u32) -> usize {
    if window == 0 {
        return 0;
    }
    let max_out = ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .unwrap_or(DEFAULT_MAX_OUTPUT);
    let budget = u64::from(window).saturating_sub(max_out);
    let fixed: u64 = ["system", "tools"]
        .iter()
        .filter_map(|k| body.get(*k))
        .map(estimate)
        .sum();
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return 0;
    };
    let total: u64 = fixed + messages.iter().map(estimate).sum::<u64>();
    if total <= budget {
        return 0;
    }
    let units = units(protocol, messages);
    let mut over = total - budget;
    let mut drop = vec![false; messages.len()];
    let droppable = units.len().saturating_sub(1);
    let mut dropped_units = 0;
    for unit in units.iter().take(droppable) {
        if over == 0 {
            break;
        }
        let cost: u64 = unit.iter().map(|&i| estimate(&messages[i])).sum();
        for &i in unit {
            drop[i] = true;
        }
        over = over.saturating_sub(cost);
        dropped_units += 1;
    }
    // Anthropic wants the conversation to open with a user turn.
    if protocol == Protocol::Anthropic {
        for unit in units
            .iter()
            .skip(dropped_units)
            .take(droppable - dropped_units.min(droppable))
        {
            let first = unit.first().map(|&i| &messages[i]);
            if first.and_then(|m| m.get("role")).and_then(Value::as_str) == Some("user") {
                break;
            }
            for &i in unit {
                drop[i] = true;
            }
        }
    }
    let mut i = 0;
    messages.retain(|_| {
        let keep = !drop[i];
        i += 1;
        keep
    });
    let n = drop.iter().filter(|d| **d).count();
    if n > 0 {
        tracing::warn!(
            dropped = n,
            window,
            "prompt exceeded the context window; dropped the oldest turns"
        );
    }
    n
}

fn estimate(v: &Value) -> u64 {
    // Counted as it is written, so a huge message is not copied to be measured. serde_json's
    // writer cannot fail on a Value; an empty count only under-estimates by 4.
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, v);
    counter.0 / 3 + 4
}

/// A writer that only counts bytes.
struct Counter(u64);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Groups droppable messages; system messages belong to no unit and are never dropped.
fn units(protocol: Protocol, messages: &[Value]) -> Vec<Vec<usize>> {
    let role = |i: usize| {
        messages[i]
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        if matches!(role(i), "system" | "developer") {
            i += 1;
            continue;
        }
        let mut unit = vec![i];
        if opens_tool_call(protocol, &messages[i]) {
            let mut j = i + 1;
            while j < messages.len() && answers_tool_call(protocol, &messages[j]) {
                unit.push(j);
                j += 1;
            }
            i = j;
        } else {
            i += 1;
        }
        units.push(unit);
    }
    units
}

fn opens_tool_call(protocol: Protocol, m: &Value) -> bool {
    if m.get("role").and_then(Value::as_str) != Some("assistant") {
        return false;
    }
    match protocol {
        Protocol::Openai => m
            .get("tool_calls")
            .and_then(Value::as_array)
            .is_some_and(|c| !c.is_empty()),
        Protocol::Anthropic => has_block(m, "tool_use"),
    }
}

fn answers_tool_call(protocol: Protocol, m: &Value) -> bool {
    match protocol {
        Protocol::Openai => m.get("role").and_then(Value::as_str) == Some("tool"),
        Protocol::Anthropic => {
            m.get("role").and_then(Value::as_str) == Some("user") && has_block(m, "tool_result")
        }
    }
}

fn has_block(m: &Value, kind: &str) -> bool {
    m.get("content").and_then(Value::as_array).is_some_and(|b| {
        b.iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some(kind))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn big(n: usize) -> String {
        "x".repeat(n)
    }

    #[test]
    fn fits_untouched_when_small_or_disabled() {
        let mut b = json!({"messages":[{"role":"user","content":"hi"}]})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(apply(Protocol::Openai, &mut b, 0), 0);
        assert_eq!(apply(Protocol::Openai, &mut b, 100_000), 0);
    }

    #[test]
    fn drops_oldest_but_keeps_system_tool_pairs_and_newest() {
        let mut b = json!({"max_tokens": 100, "messages":[
            {"role":"system","content":"sys"},
            {"role":"user","content": big(3000)},
            {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c1","content": big(3000)},
            {"role":"user","content":"newest"}
        ]}).as_object().cloned().unwrap();
        // Budget ~ 1100 − 100: the big user turn and the tool pair must go, together.
        let dropped = apply(Protocol::Openai, &mut b, 1100);
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(dropped, 3);
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0]["role"], "system");
        assert_eq!(msgs[1]["content"], "newest");
    }

    #[test]
    fn never_splits_a_tool_call_from_its_result() {
        let mut b = json!({"max_tokens": 10, "messages":[
            {"role":"user","content": big(600)},
            {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c1","content": big(30)},
            {"role":"user","content":"q"}
        ]}).as_object().cloned().unwrap();
        apply(Protocol::Openai, &mut b, 200);
        let msgs = b["messages"].as_array().unwrap();
        let has_call = msgs.iter().any(|m| m.get("tool_calls").is_some());
        let has_result = msgs.iter().any(|m| m["role"] == "tool");
        assert_eq!(has_call, has_result);
        assert_eq!(msgs.last().unwrap()["content"], "q");
    }

    #[test]
    fn anthropic_keeps_a_user_first() {
        let mut b = json!({"max_tokens": 10, "messages":[
            {"role":"user","content": big(900)},
            {"role":"assistant","content": "a"},
            {"role":"user","content":"q"}
        ]})
        .as_object()
        .cloned()
        .unwrap();
        apply(Protocol::Anthropic, &mut b, 150);
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["role"], "user");
        assert_eq!(msgs.last().unwrap()["content"], "q");
    }
}
