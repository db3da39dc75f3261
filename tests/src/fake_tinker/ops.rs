//! The fake's operations on its world: validating and running training requests in
//! sequence order, saving and loading weights, and sampling. Shared by the Tinker and the
//! Weaver routes.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::model::{self, Adam, Policy, SampleRequest};
use super::state::{FakeTinkerOptions, Job, JobResult, Model, ModelState, SampledSequence, World};

type OpResult = Result<Value, String>;

/// Validated datums, the loss name and its clip thresholds.
type Batch = (Vec<model::Datum>, String, (f64, f64));

fn tokens_of(model_input: &Value) -> Result<Vec<u32>, String> {
    let chunks = model_input
        .get("chunks")
        .and_then(Value::as_array)
        .ok_or("model_input has no chunks")?;
    let mut out = Vec::new();
    for c in chunks {
        if c.get("type").and_then(Value::as_str) != Some("encoded_text") {
            return Err("only encoded_text chunks are supported".into());
        }
        for t in c
            .get("tokens")
            .and_then(Value::as_array)
            .ok_or("chunk without tokens")?
        {
            out.push(
                t.as_u64()
                    .and_then(|t| u32::try_from(t).ok())
                    .ok_or("a token is not a non-negative integer")?,
            );
        }
    }
    Ok(out)
}

pub(crate) fn prompt_tokens(body: &Value) -> Result<Vec<u32>, String> {
    tokens_of(body.get("prompt").ok_or("no prompt")?)
}

fn tensor(inputs: &Value, key: &str, dtype: &str, n: usize) -> Result<Vec<f64>, String> {
    let t = inputs
        .get(key)
        .ok_or(format!("loss_fn_inputs lacks {key}"))?;
    if t.get("dtype").and_then(Value::as_str) != Some(dtype) {
        return Err(format!("{key} must have dtype {dtype}"));
    }
    let data: Vec<f64> = t
        .get("data")
        .and_then(Value::as_array)
        .ok_or(format!("{key} has no data"))?
        .iter()
        .map(|x| {
            x.as_f64()
                .filter(|f| f.is_finite())
                .ok_or(format!("{key} holds a non-finite or non-numeric value"))
        })
        .collect::<Result<_, _>>()?;
    if data.len() != n {
        return Err(format!(
            "{key} has length {} but model_input has {n} tokens",
            data.len()
        ));
    }
    if let Some(shape) = t.get("shape").filter(|s| **s != json!([n])) {
        return Err(format!("{key} has shape {shape}, expected [{n}]"));
    }
    Ok(data)
}

/// Reads and validates the datums: only the keys the loss accepts (Weaver additionally
/// requires `loss_mask`), int64 targets below the vocabulary, float32 otherwise, all of the
/// model_input's length.
fn datums(input: &Value, vocab: u32, weaver: bool) -> Result<Batch, String> {
    let loss_fn = input.get("loss_fn").and_then(Value::as_str).unwrap_or("");
    if !["importance_sampling", "ppo", "cispo"].contains(&loss_fn) {
        return Err(format!("unknown loss_fn `{loss_fn}`"));
    }
    let mut clip = (0.8, 1.2);
    if let Some(cfg) = input.get("loss_fn_config").and_then(Value::as_object) {
        if loss_fn == "importance_sampling" {
            return Err("loss_fn_config is only for ppo and cispo".into());
        }
        for (k, v) in cfg {
            match k.as_str() {
                "clip_low_threshold" => clip.0 = v.as_f64().ok_or("bad clip_low_threshold")?,
                "clip_high_threshold" => clip.1 = v.as_f64().ok_or("bad clip_high_threshold")?,
                other => return Err(format!("unknown loss_fn_config key `{other}`")),
            }
        }
    }
    let mut allowed: HashSet<&str> = ["target_tokens", "logprobs", "advantages"].into();
    if weaver {
        allowed.insert("loss_mask");
    }
    let data = input
        .get("data")
        .and_then(Value::as_array)
        .ok_or("no data")?;
    if data.is_empty() {
        return Err("no datums".into());
    }
    let mut out = Vec::new();
    for d in data {
        let input_tokens = tokens_of(d.get("model_input").ok_or("datum without model_input")?)?;
        let n = input_tokens.len();
        let inputs = d
            .get("loss_fn_inputs")
            .and_then(Value::as_object)
            .ok_or("datum without loss_fn_inputs")?;
        if let Some(k) = inputs.keys().find(|k| !allowed.contains(k.as_str())) {
            return Err(format!(
                "loss_fn_inputs key `{k}` is not accepted by {loss_fn}"
            ));
        }
        let inputs = Value::Object(inputs.clone());
        if weaver {
            tensor(&inputs, "loss_mask", "float32", n)?;
        }
        let targets = tensor(&inputs, "target_tokens", "int64", n)?;
        let targets: Vec<u32> = targets
            .iter()
            .map(|t| {
                if *t >= 0.0 && *t < f64::from(vocab) && t.fract() == 0.0 {
                    Ok(*t as u32)
                } else {
                    Err(format!("target token {t} is outside the vocabulary"))
                }
            })
            .collect::<Result<_, _>>()?;
        if input_tokens.iter().any(|t| *t >= vocab) {
            return Err("an input token is outside the vocabulary".into());
        }
        // Logprobs travel as f32; reading them back as f32 keeps ratios exact on-policy.
        let old: Vec<f64> = tensor(&inputs, "logprobs", "float32", n)?
            .iter()
            .map(|x| f64::from(*x as f32))
            .collect();
        let advantages = tensor(&inputs, "advantages", "float32", n)?;
        out.push(model::Datum {
            input: input_tokens,
            targets,
            old_logprobs: old,
            advantages,
        });
    }
    Ok((out, loss_fn.to_owned(), clip))
}

pub(crate) fn create_model(
    world: &mut World,
    opts: &FakeTinkerOptions,
    model_id: String,
    body: &Value,
) -> Result<(), String> {
    let base = body.get("base_model").and_then(Value::as_str).unwrap_or("");
    if base.is_empty()
        || (!opts.supported_models.is_empty() && !opts.supported_models.iter().any(|m| m == base))
    {
        return Err(format!("base model `{base}` is not supported"));
    }
    let rank = body
        .pointer("/lora_config/rank")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if rank == 0 {
        return Err("lora_config.rank must be positive".into());
    }
    world.models.insert(
        model_id,
        Model {
            state: ModelState {
                base_model: base.to_owned(),
                lora_rank: rank,
                seq_log: Vec::new(),
                forward_backward_calls: 0,
                weights_version: 0,
                checkpoints: Vec::new(),
            },
            policy: Policy::new(opts.vocab_size),
            next_seq: 1,
            waiting: Default::default(),
        },
    );
    Ok(())
}

/// Runs one training-run operation (`op` is the Tinker operation name).
pub(crate) fn run(
    world: &mut World,
    opts: &FakeTinkerOptions,
    scheme: &str,
    model_id: &str,
    op: &str,
    body: &Value,
) -> OpResult {
    let weaver = scheme == "weaver";
    match op {
        "forward_backward" | "forward" => {
            let input = body
                .get("forward_backward_input")
                .or_else(|| body.get("forward_input"))
                .ok_or("no forward_backward_input")?;
            let (data, loss_fn, clip) = datums(input, opts.vocab_size, weaver)?;
            let m = world.models.get_mut(model_id).ok_or("unknown model")?;
            m.state.forward_backward_calls += u64::from(op == "forward_backward");
            Ok(model::forward_backward(
                &mut m.policy,
                &data,
                &loss_fn,
                clip,
                op == "forward_backward",
            ))
        }
        "optim_step" => {
            let p = body.get("adam_params").ok_or("no adam_params")?;
            let f = |k: &str| {
                p.get(k)
                    .and_then(Value::as_f64)
                    .ok_or(format!("adam_params.{k} missing"))
            };
            let adam = Adam {
                lr: f("learning_rate")?,
                beta1: f("beta1")?,
                beta2: f("beta2")?,
                eps: f("eps")?,
            };
            if adam.lr < 0.0
                || !(0.0..1.0).contains(&adam.beta1)
                || !(0.0..1.0).contains(&adam.beta2)
                || adam.eps <= 0.0
            {
                return Err("invalid Adam parameters".into());
            }
            let m = world.models.get_mut(model_id).ok_or("unknown model")?;
            model::optim_step(&mut m.policy, &adam);
            m.state.weights_version += 1;
            Ok(json!({"metrics": {"step:max": m.state.weights_version as f64}}))
        }
        "save_weights_for_sampler" => {
            let theta = world
                .models
                .get(model_id)
                .ok_or("unknown model")?
                .policy
                .theta
                .clone();
            match body.get("path").and_then(Value::as_str) {
                Some(name) if !name.is_empty() => {
                    let path = format!("{scheme}://{model_id}/sampler_weights/{name}");
                    world.sampler_weights.insert(path.clone(), theta);
                    if let Some(m) = world.models.get_mut(model_id) {
                        m.state.checkpoints.push(path.clone());
                    }
                    Ok(if weaver {
                        json!({"model_path": path})
                    } else {
                        json!({"path": path})
                    })
                }
                _ => {
                    let id = world.next_id("sampler");
                    world.samplers.insert(id.clone(), (theta, HashSet::new()));
                    Ok(json!({"path": null, "sampling_session_id": id}))
                }
            }
        }
        "save_weights" => {
            let name = body
                .get("path")
                .or_else(|| body.get("name"))
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or("no checkpoint name")?;
            let path = format!("{scheme}://{model_id}/weights/{name}");
            let m = world.models.get_mut(model_id).ok_or("unknown model")?;
            m.state.checkpoints.push(path.clone());
            let policy = m.policy.clone();
            world.states.insert(path.clone(), policy);
            Ok(json!({"path": path}))
        }
        "load_weights" => {
            let path = body.get("path").and_then(Value::as_str).ok_or("no path")?;
            let saved = world
                .states
                .get(path)
                .cloned()
                .ok_or(format!("checkpoint {path} does not exist"))?;
            let with_opt = body
                .get("optimizer")
                .or_else(|| body.get("include_optimizer"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let m = world.models.get_mut(model_id).ok_or("unknown model")?;
            m.policy.theta = saved.theta;
            if with_opt {
                m.policy.m = saved.m;
                m.policy.v = saved.v;
                m.policy.steps = saved.steps;
            }
            Ok(json!({"path": path}))
        }
        other => Err(format!("unknown operation {other}")),
    }
}

fn finish(result: OpResult) -> JobResult {
    match result {
        Ok(v) => JobResult::Done(v),
        Err(message) => JobResult::Failed {
            message,
            category: "user".into(),
        },
    }
}

/// Submits a training-run request: runs it now if it is the next in sequence (then any
/// waiting successors), queues it if it is ahead, refuses a sequence id already used.
pub(crate) fn submit_training(
    world: &mut World,
    opts: &FakeTinkerOptions,
    scheme: &str,
    model_id: &str,
    op: &str,
    body: &Value,
    job: Job,
) -> Result<String, (u16, String)> {
    let seq = body
        .get("seq_id")
        .and_then(Value::as_u64)
        .ok_or((400, "seq_id is required".to_owned()))?;
    let next = world
        .models
        .get(model_id)
        .ok_or((404, format!("unknown model {model_id}")))?
        .next_seq;
    if seq < next {
        return Err((
            409,
            format!("seq_id {seq} was already used (next is {next})"),
        ));
    }
    let id = world.next_id("req");
    world.jobs.insert(id.clone(), job);
    if let Some(m) = world.models.get_mut(model_id) {
        m.waiting
            .insert(seq, (id.clone(), op.to_owned(), body.clone()));
    }
    while let Some(m) = world.models.get_mut(model_id) {
        let next = m.next_seq;
        let Some((rid, op, body)) = m.waiting.remove(&next) else {
            break;
        };
        m.next_seq += 1;
        m.state.seq_log.push(next);
        let result = finish(run(world, opts, scheme, model_id, &op, &body));
        if let Some(j) = world.jobs.get_mut(&rid) {
            j.result = result;
        }
    }
    Ok(id)
}

pub(crate) fn create_sampler(
    world: &mut World,
    vocab: u32,
    body: &Value,
) -> Result<String, String> {
    let (theta, source) = match (
        body.get("model_path").and_then(Value::as_str),
        body.get("base_model").and_then(Value::as_str),
    ) {
        (Some(p), _) => (
            world
                .sampler_weights
                .get(p)
                .cloned()
                .ok_or(format!("no sampler weights at {p}"))?,
            p.to_owned(),
        ),
        (None, Some(b)) => (vec![0.0; vocab as usize], format!("base:{b}")),
        (None, None) => return Err("model_path or base_model is required".into()),
    };
    let id = world.next_id("sampler");
    world.samplers.insert(id.clone(), (theta, HashSet::new()));
    world.sampler_sources.insert(id.clone(), source);
    Ok(id)
}

/// Samples `num_samples` sequences; `seq` (Tinker) must be new within the session.
pub(crate) fn sample(
    world: &mut World,
    opts: &FakeTinkerOptions,
    session: &str,
    seq: Option<u64>,
    body: &Value,
) -> OpResult {
    let vocab = opts.vocab_size;
    let (theta, seen) = world
        .samplers
        .get_mut(session)
        .ok_or(format!("unknown sampling session {session}"))?;
    if let Some(s) = seq.filter(|s| !seen.insert(*s)) {
        return Err(format!(
            "seq_id {s} was already used in this sampling session"
        ));
    }
    let theta = theta.clone();
    let prompt = prompt_tokens(body)?;
    if prompt.is_empty() || prompt.iter().any(|t| *t >= vocab) {
        return Err("the prompt is empty or has a token outside the vocabulary".into());
    }
    let p = body.get("sampling_params").ok_or("no sampling_params")?;
    let max_tokens = p
        .get("max_tokens")
        .and_then(Value::as_u64)
        .filter(|m| *m >= 1)
        .ok_or("max_tokens must be at least 1")?;
    let temperature = p.get("temperature").and_then(Value::as_f64).unwrap_or(1.0);
    let mut stop_tokens: Vec<u32> = Vec::new();
    match p.get("stop") {
        None | Some(Value::Null) => stop_tokens.extend(opts.eos_token),
        Some(Value::Array(a)) if a.iter().all(Value::is_u64) => {
            stop_tokens.extend(
                a.iter()
                    .filter_map(Value::as_u64)
                    .filter_map(|t| u32::try_from(t).ok()),
            );
        }
        // Stop strings need a tokenizer, which the fake does not have: EOS still applies.
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
            stop_tokens.extend(opts.eos_token)
        }
        Some(Value::String(_)) => stop_tokens.extend(opts.eos_token),
        Some(_) => {
            return Err("stop must be a string, a list of strings or a list of token ids".into());
        }
    }
    let n = body
        .get("num_samples")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1);
    let source = world
        .sampler_sources
        .get(session)
        .cloned()
        .unwrap_or_else(|| "unsaved".to_owned());
    let mut answered = Vec::new();
    let base_seed = p.get("seed").and_then(Value::as_u64).unwrap_or_else(|| {
        model::hash_tokens(
            model::hash_tokens(seq.unwrap_or(0), &prompt),
            session
                .as_bytes()
                .iter()
                .map(|b| u32::from(*b))
                .collect::<Vec<_>>()
                .as_slice(),
        )
    });
    // Scripted completions replace sampling, one per sequence, with their true logprobs.
    let take = usize::try_from(n)
        .unwrap_or(usize::MAX)
        .min(world.canned.len());
    let canned: Vec<Vec<u32>> = world.canned.drain(..take).collect();
    if canned.iter().flatten().any(|t| *t >= vocab) {
        return Err("a scripted completion has a token outside the vocabulary".into());
    }
    let sequences: Vec<Value> = (0..n)
        .map(|i| {
            let req = SampleRequest {
                prompt: &prompt,
                max_tokens: u32::try_from(max_tokens).unwrap_or(u32::MAX),
                temperature,
                stop_tokens: &stop_tokens,
                seed: model::mix(base_seed ^ i),
            };
            let (tokens, logprobs, reason) = match canned.get(i as usize) {
                Some(script) => model::score(&theta, &req, script),
                None => model::sample(&theta, &req),
            };
            let answer = json!({"tokens": tokens, "logprobs": logprobs, "stop_reason": reason});
            answered.push(SampledSequence {
                sampling_session_id: session.to_owned(),
                source: source.clone(),
                prompt: prompt.clone(),
                tokens,
                logprobs,
            });
            answer
        })
        .collect();
    world.sampled.extend(answered);
    Ok(json!({"type": "sample", "sequences": sequences}))
}

pub(crate) fn job(result: OpResult, script: Option<super::state::FutureScript>) -> Job {
    Job {
        result: finish(result),
        script,
        polls: 0,
    }
}
