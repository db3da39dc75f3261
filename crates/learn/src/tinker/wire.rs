//! JSON bodies sent to, and results read from, the Tinker protocol (SDK 0.16–0.22 JSON).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::error::LearnError;
use crate::types::{
    AdamParams, Datum, ForwardBackwardOutput, LossConfig, SampleOutput, SampledSequence,
    SamplingParams, Stop, StopReason,
};

pub(crate) fn model_input(tokens: &[u32]) -> Value {
    json!({"chunks": [{"type": "encoded_text", "tokens": tokens}]})
}

fn tensor_f32(data: &[f32]) -> Value {
    json!({"data": data, "dtype": "float32", "shape": [data.len()]})
}

fn tensor_i64(data: &[u32]) -> Value {
    json!({"data": data, "dtype": "int64", "shape": [data.len()]})
}

/// A datum with the loss inputs the Tinker loss functions accept (no mask key: the server
/// rejects unknown keys; masked tokens carry advantage 0). `loss_mask` is added for Weaver.
pub(crate) fn datum(d: &Datum, with_loss_mask: bool) -> Value {
    let mut inputs = Map::new();
    inputs.insert("target_tokens".into(), tensor_i64(d.target_tokens()));
    inputs.insert("logprobs".into(), tensor_f32(d.logprobs()));
    inputs.insert("advantages".into(), tensor_f32(d.advantages()));
    if with_loss_mask {
        let mask: Vec<f32> = d
            .advantages()
            .iter()
            .map(|a| if *a != 0.0 { 1.0 } else { 0.0 })
            .collect();
        inputs.insert("loss_mask".into(), tensor_f32(&mask));
    }
    json!({"model_input": model_input(d.input_tokens()), "loss_fn_inputs": inputs})
}

pub(crate) fn forward_backward_input(
    data: &[Datum],
    loss: &LossConfig,
    with_loss_mask: bool,
) -> Value {
    let mut input = json!({
        "data": data.iter().map(|d| datum(d, with_loss_mask)).collect::<Vec<_>>(),
        "loss_fn": loss.loss_fn.as_str(),
    });
    let mut config = Map::new();
    if let Some(low) = loss.clip_low_threshold {
        config.insert("clip_low_threshold".into(), json!(low));
    }
    if let Some(high) = loss.clip_high_threshold {
        config.insert("clip_high_threshold".into(), json!(high));
    }
    if !config.is_empty() {
        input["loss_fn_config"] = Value::Object(config);
    }
    input
}

pub(crate) fn adam(p: &AdamParams) -> Value {
    json!({
        "learning_rate": p.learning_rate,
        "beta1": p.beta1,
        "beta2": p.beta2,
        "eps": p.eps,
        "weight_decay": p.weight_decay,
        "grad_clip_norm": p.grad_clip_norm,
    })
}

pub(crate) fn sampling_params(p: &SamplingParams) -> Value {
    let mut v = json!({
        "max_tokens": p.max_tokens,
        "temperature": p.temperature,
        "top_k": p.top_k.map_or(-1, i64::from),
        "top_p": p.top_p.unwrap_or(1.0),
    });
    match &p.stop {
        Stop::Eos => {}
        Stop::Strings(s) => v["stop"] = json!(s),
        Stop::Tokens(t) => v["stop"] = json!(t),
    }
    if let Some(seed) = p.seed {
        v["seed"] = json!(seed);
    }
    v
}

pub(crate) fn metrics(v: Option<&Value>) -> BTreeMap<String, f64> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_f64().map(|f| (k.clone(), f)))
                .collect()
        })
        .unwrap_or_default()
}

fn floats(v: &Value) -> Option<Vec<f32>> {
    let arr = v.get("data").unwrap_or(v).as_array()?;
    arr.iter().map(|x| x.as_f64().map(|f| f as f32)).collect()
}

pub(crate) fn forward_backward_output(
    v: &Value,
    backend: &'static str,
    op: &str,
) -> Result<ForwardBackwardOutput, LearnError> {
    let outputs = v
        .get("loss_fn_outputs")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(backend, op, "no loss_fn_outputs"))?;
    let logprobs = outputs
        .iter()
        .map(|o| {
            o.get("logprobs")
                .and_then(floats)
                .ok_or_else(|| malformed(backend, op, "an output without logprobs"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ForwardBackwardOutput {
        logprobs,
        metrics: metrics(v.get("metrics")),
    })
}

/// Merges the results of chunked forward_backward calls: outputs in order, metrics by
/// their reduction suffix (`sum` adds, `min`/`max` keep the extreme, `mean` is weighted by
/// the chunk's datum count, anything else keeps the last value).
pub(crate) fn merge(parts: Vec<(usize, ForwardBackwardOutput)>) -> ForwardBackwardOutput {
    let total: usize = parts.iter().map(|(n, _)| *n).sum();
    let mut out = ForwardBackwardOutput::default();
    for (n, part) in parts {
        out.logprobs.extend(part.logprobs);
        for (k, v) in part.metrics {
            let entry = out.metrics.entry(k.clone());
            let reduction = k.rsplit(':').next().unwrap_or("");
            let weight = if total == 0 {
                1.0
            } else {
                n as f64 / total as f64
            };
            match entry {
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(if reduction == "mean" { v * weight } else { v });
                }
                std::collections::btree_map::Entry::Occupied(mut e) => {
                    let cur = *e.get();
                    *e.get_mut() = match reduction {
                        "sum" => cur + v,
                        "min" => cur.min(v),
                        "max" => cur.max(v),
                        "mean" => cur + v * weight,
                        _ => v,
                    };
                }
            }
        }
    }
    out
}

pub(crate) fn sample_output(
    v: &Value,
    backend: &'static str,
    op: &str,
) -> Result<SampleOutput, LearnError> {
    let seqs = v
        .get("sequences")
        .or_else(|| v.pointer("/result/sequences"))
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(backend, op, "no sequences"))?;
    let sequences = seqs
        .iter()
        .map(|s| {
            let tokens = s
                .get("tokens")
                .and_then(Value::as_array)
                .and_then(|a| {
                    a.iter()
                        .map(|t| t.as_u64().and_then(|t| u32::try_from(t).ok()))
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or_else(|| malformed(backend, op, "a sequence without valid tokens"))?;
            let logprobs = s
                .get("logprobs")
                .and_then(floats)
                .ok_or_else(|| malformed(backend, op, "a sequence without logprobs"))?;
            if logprobs.len() != tokens.len() {
                return Err(malformed(
                    backend,
                    op,
                    "a sequence whose logprobs do not match its tokens",
                ));
            }
            let stop_reason = match s.get("stop_reason").and_then(Value::as_str) {
                Some("length") => StopReason::Length,
                _ => StopReason::Stop,
            };
            Ok(SampledSequence {
                tokens,
                logprobs,
                stop_reason,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SampleOutput { sequences })
}

pub(crate) fn malformed(backend: &'static str, op: &str, what: &str) -> LearnError {
    LearnError::Backend {
        backend,
        op: op.to_owned(),
        status: None,
        message: format!("unexpected answer: {what}"),
    }
}

pub(crate) fn str_field(v: &Value, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}
