//! Weight learning in mode `rl`, end to end: the real binary serves main turns from a
//! (fake) training backend's sampler with the toy model's tokenizer, keeps each turn as a
//! sample, has it judged, trains when a batch is full and swaps the serving weights, and
//! copes with slow swaps, backend outages and restarts.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::collections::BTreeMap;

use common::daemon::{Home, free_port};
use common::rl_daemon::{MODEL, RlDaemon, RlSetup, TINKER_KEY, TokenizerFrom};
use metaclaw_e2e::fake_tinker::{
    FakeTinker, FakeTinkerOptions, Fault, FutureScript, SampledSequence,
};
use serde_json::{Value, json};

/// What the toy model "says" in the first scenario: thinking, text and one tool call.
const TOOL_REPLY: &str = "<think>plan</think>Sure.<tool_call>{\"name\":\"run\",\"arguments\":{\"cmd\":\"ls\"}}</tool_call><|im_end|>";
const ASK: &str = "List the files here.";
const TOOL_RESULT: &str = "README.md src";
const FOLLOW_UP: &str = "Show the hidden files too.";

fn run_tool_openai() -> Value {
    json!([{"type": "function", "function": {
        "name": "run", "description": "Run a shell command",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}}])
}

/// Checks an OpenAI assistant message (and finish reason) carries TOOL_REPLY's parts.
fn assert_tool_reply(msg: &Value, finish: &Value) {
    assert_eq!(msg["reasoning_content"], "plan", "{msg:#}");
    assert_eq!(msg["content"], "Sure.", "{msg:#}");
    let calls = msg["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{msg:#}");
    assert_eq!(calls[0]["function"]["name"], "run");
    let args: Value =
        serde_json::from_str(calls[0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"cmd": "ls"}));
    assert_eq!(finish, "tool_calls");
}

/// Reassembles an OpenAI SSE body into (message, finish_reason).
fn reassemble_sse(text: &str) -> (Value, Value) {
    let (mut content, mut reasoning) = (String::new(), String::new());
    let mut calls: BTreeMap<u64, (String, String)> = BTreeMap::new();
    let mut finish = Value::Null;
    let mut done = false;
    for data in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
        if data.trim() == "[DONE]" {
            done = true;
            continue;
        }
        let ev: Value = serde_json::from_str(data).unwrap();
        let Some(choice) = ev["choices"].get(0) else {
            continue;
        };
        let delta = &choice["delta"];
        content.push_str(delta["content"].as_str().unwrap_or(""));
        reasoning.push_str(delta["reasoning_content"].as_str().unwrap_or(""));
        for c in delta["tool_calls"].as_array().into_iter().flatten() {
            let entry = calls.entry(c["index"].as_u64().unwrap()).or_default();
            entry
                .0
                .push_str(c["function"]["name"].as_str().unwrap_or(""));
            entry
                .1
                .push_str(c["function"]["arguments"].as_str().unwrap_or(""));
        }
        if !choice["finish_reason"].is_null() {
            finish = choice["finish_reason"].clone();
        }
    }
    assert!(done, "the stream ends with [DONE]: {text}");
    let tool_calls: Vec<Value> = calls
        .values()
        .map(|(n, a)| json!({"function": {"name": n, "arguments": a}}))
        .collect();
    (
        json!({"content": content, "reasoning_content": reasoning, "tool_calls": tool_calls}),
        finish,
    )
}

/// Step `n` is over and recorded (the step counter moves before the step's row is written).
fn step_done(v: &Value, n: u64) -> bool {
    v["training"] == false
        && v["steps"]
            .as_array()
            .and_then(|s| s.last())
            .is_some_and(|s| s["step"] == n)
}

fn token_ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| u32::try_from(t.as_u64().unwrap()).unwrap())
        .collect()
}

/// Checks `datum` is the one the trainer must send for one of `sampled` (which one is
/// returned): prompt ++ completion shifted by one, the sampler's own logprobs on the
/// completion positions, zeros on the prompt.
fn datum_source(datum: &Value, sampled: &[SampledSequence]) -> usize {
    let input: Vec<u32> = datum["model_input"]["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| token_ids(&c["tokens"]))
        .collect();
    let joined =
        |s: &SampledSequence| -> Vec<u32> { s.prompt.iter().chain(&s.tokens).copied().collect() };
    let i = sampled
        .iter()
        .position(|s| {
            let all = joined(s);
            input == all[..all.len() - 1]
        })
        .unwrap_or_else(|| panic!("a datum matches no sampled sequence: {input:?}"));
    let (s, all) = (&sampled[i], joined(&sampled[i]));
    let inputs = &datum["loss_fn_inputs"];
    assert_eq!(token_ids(&inputs["target_tokens"]["data"]), all[1..]);
    let logprobs: Vec<f32> = inputs["logprobs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect();
    let p = s.prompt.len() - 1;
    assert!(logprobs[..p].iter().all(|x| *x == 0.0));
    assert_eq!(
        logprobs[p..],
        s.logprobs[..],
        "logprobs are the sampler's, token for token"
    );
    i
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_samples_trains_and_swaps_to_the_new_weights() {
    let d = RlDaemon::start(RlSetup {
        tokenizer: TokenizerFrom::Download,
        ..RlSetup::default()
    })
    .await;
    let v = d.wait_ready().await;
    assert_eq!(v["mode"], "rl");
    assert_eq!(v["active"], true);
    assert_eq!(v["backend"], "tinker");
    assert_eq!(v["model"], MODEL);
    assert_eq!(v["serving"], "base model");
    // The tokenizer came from the Hugging Face host, byte for byte.
    let dir = d.home.path().join("models").join(MODEL);
    assert_eq!(
        std::fs::read(dir.join("tokenizer.json")).unwrap(),
        d.toy.tokenizer_json
    );
    assert_eq!(
        std::fs::read(dir.join("tokenizer_config.json")).unwrap(),
        d.toy.tokenizer_config_json
    );
    assert_eq!(
        d.tinker
            .requests_to(&format!("/hf/{MODEL}/resolve/main/tokenizer.json"))
            .len(),
        1
    );

    // Turn 1, OpenAI JSON.
    d.script(TOOL_REPLY);
    let ask = json!({"role": "user", "content": ASK});
    let r = d
        .chat(
            "s1",
            &json!({"model": "agent", "messages": [ask], "tools": run_tool_openai()}),
            false,
        )
        .await;
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_tool_reply(
        &v["choices"][0]["message"],
        &v["choices"][0]["finish_reason"],
    );
    let sampled = d.tinker.sampled();
    assert_eq!(sampled.len(), 1);
    assert_eq!(sampled[0].tokens, d.toy.encode(TOOL_REPLY));
    assert_eq!(sampled[0].source, format!("base:{MODEL}"));
    let prompt = d.toy.decode(&sampled[0].prompt);
    assert!(
        prompt.contains(ASK) && prompt.contains("Run a shell command"),
        "the chat template rendered the turn and its tools: {prompt}"
    );
    assert!(prompt.ends_with("<|im_start|>assistant\n"), "{prompt}");
    let sample_req = &d.tinker.requests_to("/api/v1/asample")[0];
    let stop = sample_req.body["sampling_params"]["stop"]
        .as_array()
        .unwrap();
    assert!(stop.contains(&json!(d.toy.im_end)), "{stop:?}");

    // Turn 2, streamed: the tool's result is the evidence for turn 1.
    d.judge
        .push_reply("The command was right but the answer was thin.\nScore: 0");
    d.script(TOOL_REPLY);
    let call = v["choices"][0]["message"].clone();
    let tool_id = call["tool_calls"][0]["id"].clone();
    let tool = json!({"role": "tool", "tool_call_id": tool_id, "content": TOOL_RESULT});
    let r = d
        .chat(
            "s1",
            &json!({"model": "agent", "stream": true, "tools": run_tool_openai(),
                    "messages": [ask, call, tool]}),
            false,
        )
        .await;
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let (msg, finish) = reassemble_sse(&r.text().await.unwrap());
    assert_tool_reply(&msg, &finish);
    d.wait_judge("turn 1 judged with its follow-up", |reqs| {
        reqs.len() == 1 && reqs[0].1.to_string().contains(TOOL_RESULT)
    })
    .await;

    // Turn 3, Anthropic, ending the session.
    d.script(TOOL_REPLY);
    let body = json!({
    "model": "agent", "max_tokens": 256,
    "tools": [{"name": "run", "description": "Run a shell command",
               "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}}],
    "messages": [
        {"role": "user", "content": ASK},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "run", "input": {"cmd": "ls"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": TOOL_RESULT}]},
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": FOLLOW_UP},
    ]});
    let r = d.messages("s1", &body, true).await;
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    let blocks = v["content"].as_array().unwrap();
    let kinds: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use"], "{v:#}");
    assert_eq!(blocks[0]["thinking"], "plan");
    assert_eq!(blocks[1]["text"], "Sure.");
    assert_eq!(blocks[2]["name"], "run");
    assert_eq!(blocks[2]["input"], json!({"cmd": "ls"}));
    assert_eq!(v["stop_reason"], "tool_use");

    // Batch of 2 judged (scores 0 and 1) → one step by itself → the new weights serve.
    let v = d
        .wait_learning("step 1 by itself", 90, |v| step_done(v, 1))
        .await;
    let step = &v["steps"][0];
    assert_eq!(step["step"], 1);
    assert_eq!(step["samples"], 2);
    assert_eq!(
        step["mean_reward"], 0.5,
        "mean of the judge's 0 and 1: {v:#}"
    );
    assert!(step["error"].is_null(), "{v:#}");
    let sampler_path = step["sampler_path"].as_str().unwrap();
    assert!(sampler_path.contains("step_000001"), "{v:#}");
    assert_eq!(v["serving"], sampler_path);
    assert!(
        step["checkpoint_path"]
            .as_str()
            .is_some_and(|p| p.contains("step_000001"))
    );
    assert_eq!(v["last_checkpoint"], step["checkpoint_path"]);
    assert_eq!(v["samples"]["consumed"], 2);
    assert_eq!(v["served"]["sampled"], 3);
    assert_eq!(v["served"]["fallback"], 0);
    assert_eq!(
        d.upstream_chats(),
        0,
        "no main turn went to the upstream LLM"
    );
    d.wait_judge("turn 2 judged with the user's follow-up", |reqs| {
        reqs.iter().any(|r| r.1.to_string().contains(FOLLOW_UP))
    })
    .await;
    assert_judge_calls_counted(&d).await;

    // The trainer sent exactly what was sampled, never re-tokenised.
    let fb = d.tinker.requests_to("/api/v1/forward_backward");
    assert_eq!(fb.len(), 1);
    let datums = fb[0].body["forward_backward_input"]["data"]
        .as_array()
        .unwrap();
    assert_eq!(datums.len(), 2);
    let sampled = d.tinker.sampled();
    let mut sources: Vec<usize> = datums
        .iter()
        .map(|datum| datum_source(datum, &sampled[..2]))
        .collect();
    sources.sort_unstable();
    assert_eq!(sources, [0, 1], "the batch is turns 1 and 2");

    // The next turn samples on the new weights.
    d.script("Done.<|im_end|>");
    let msg = d.say("s2", "Thanks.", false).await;
    assert_eq!(msg["content"], "Done.");
    let last = d.tinker.sampled().pop().unwrap();
    assert_eq!(last.source, sampler_path);
    assert_ne!(last.sampling_session_id, sampled[0].sampling_session_id);
    d.assert_no_secrets_on_disk();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_during_the_weight_swap_are_served_by_the_trained_model() {
    const CONCURRENT: usize = 20;
    let d = RlDaemon::start(RlSetup::default()).await;
    d.wait_ready().await;
    // The swap's first call stays pending until released.
    d.tinker
        .push_script("save_weights_for_sampler", FutureScript::Hold);
    d.script("Sure.<|im_end|>");
    d.say("w", "Hello.", false).await;
    d.script("Sure.<|im_end|>");
    d.say("w", "How are you?", true).await;
    d.wait_learning("a step swapping its weights", 60, |v| {
        v["training"] == true && d.tinker.held() == 1
    })
    .await;

    for _ in 0..CONCURRENT {
        d.script("Sure.<|im_end|>");
    }
    let replies = futures_util::future::join_all((0..CONCURRENT).map(|i| {
        let d = &d;
        async move {
            let body =
                json!({"model": "agent", "messages": [{"role": "user", "content": "Hello."}]});
            let r = d.chat(&format!("swap-{i}"), &body, false).await;
            let status = r.status();
            let v: Value = r.json().await.unwrap_or(Value::Null);
            (status, v["choices"][0]["message"]["content"].clone())
        }
    }))
    .await;
    let served = replies
        .iter()
        .filter(|(s, c)| *s == 200 && *c == "Sure.")
        .count();
    println!("served during swap: {served}/{CONCURRENT}");
    // Still inside the swap: the step had not finished while they were answered.
    let v = d.learning().await;
    assert_eq!(v["training"], true);
    assert_eq!(d.tinker.held(), 1);
    assert_eq!(served, CONCURRENT, "{replies:?}");
    assert_eq!(v["served"]["fallback"], 0);
    assert_eq!(v["served"]["sampled"], 2 + CONCURRENT as u64);
    assert_eq!(d.upstream_chats(), 0);
    let sampled = d.tinker.sampled();
    assert_eq!(sampled.len(), 2 + CONCURRENT);
    assert!(
        sampled.iter().all(|s| s.source == format!("base:{MODEL}")),
        "requests in flight keep the old sampler"
    );

    let mut events = d.events().await;
    assert_eq!(d.tinker.release_holds(), 1);
    let finished = events.next_of("training_finished").await;
    assert_eq!(finished["step"], 1, "{finished}");
    assert_eq!(
        finished["reward"], 1.0,
        "the judge's default score: {finished}"
    );
    let v = d
        .wait_learning("the swap finishing", 60, |v| step_done(v, 1))
        .await;
    let serving = v["serving"].as_str().unwrap().to_owned();
    assert!(serving.contains("step_000001"), "{v:#}");
    d.script("Sure.<|im_end|>");
    d.say("after", "Hello.", false).await;
    assert_eq!(d.tinker.sampled().pop().unwrap().source, serving);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_outage_mid_step_keeps_the_batch_for_a_manual_step() {
    let d = RlDaemon::start(RlSetup::default()).await;
    d.wait_ready().await;
    // More 500s than the client retries.
    d.tinker.push_faults(
        "/api/v1/forward_backward",
        Fault::Status {
            status: 500,
            retry_after: None,
        },
        8,
    );
    d.script("Sure.<|im_end|>");
    d.say("o", "Hello.", false).await;
    d.script("Sure.<|im_end|>");
    d.say("o", "How are you?", true).await;
    let v = d
        .wait_learning("the failed step reported", 120, |v| {
            v["last_error"].is_string() && v["training"] == false
        })
        .await;
    let err = v["last_error"].as_str().unwrap();
    assert!(
        err.contains("forward_backward") || err.contains("500"),
        "{err}"
    );
    assert!(!err.contains(TINKER_KEY));
    assert_eq!(v["step"], 0);
    assert_eq!(v["samples"]["waiting"], 2, "nothing lost: {v:#}");
    assert_eq!(v["samples"]["unjudged"], 0);
    assert_eq!(v["samples"]["consumed"], 0);
    assert_eq!(v["steps"], json!([]));
    assert!(
        !d.tinker.requests_to("/api/v1/forward_backward").is_empty(),
        "the step reached the backend"
    );
    assert!(d.tinker.requests_to("/api/v1/optim_step").is_empty());

    d.tinker.clear_faults();
    let (status, report) = d.train_step(Some(&d.admin_token())).await;
    assert_eq!(status, 200, "{report:#}");
    assert_eq!(report["status"], "ok", "{report:#}");
    assert_eq!(report["step"], 1);
    assert_eq!(report["samples"], 2);
    let v = d.learning().await;
    assert_eq!(v["step"], 1);
    assert_eq!(v["samples"]["waiting"], 0);
    assert_eq!(v["samples"]["consumed"], 2);
    assert!(v["last_error"].is_null(), "{v:#}");
    assert!(v["serving"].as_str().unwrap().contains("step_000001"));
    d.assert_no_secrets_on_disk();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backend_down_at_start_falls_back_to_the_upstream_llm() {
    let d = RlDaemon::start(RlSetup {
        backend_down: true,
        ..RlSetup::default()
    })
    .await;
    let v = d
        .wait_learning("the backend reported unavailable", 90, |v| {
            v["state"] == "unavailable"
        })
        .await;
    let why = v["last_error"].as_str().unwrap();
    assert!(
        why.contains(&d.backend_url),
        "names the backend it tried: {why}"
    );
    assert!(!why.contains(TINKER_KEY));
    assert!(v["serving"].is_null());
    assert_eq!(v["served"]["fallback"], 0);

    let msg = d.say("f", "Hello there.", false).await;
    assert_eq!(msg["content"], "Echo: Hello there.");
    assert_eq!(d.upstream_chats(), 1);
    let v = d.learning().await;
    assert_eq!(v["served"]["fallback"], 1);
    assert_eq!(v["served"]["sampled"], 0);
    assert_eq!(v["samples"]["waiting"], 0, "an upstream turn is no sample");

    let (status, report) = d.train_step(Some(&d.admin_token())).await;
    assert_eq!(status, 500, "{report:#}");
    assert_eq!(report["status"], "error");
    assert!(report["message"].as_str().is_some_and(|m| !m.is_empty()));

    // The backend comes up where the config points: the next attempt connects, no restart.
    let port: u16 = d.backend_url.rsplit(':').next().unwrap().parse().unwrap();
    let late = FakeTinker::start_on_port(
        FakeTinkerOptions {
            api_key: TINKER_KEY.into(),
            vocab_size: d.toy.vocab_size,
            eos_token: Some(d.toy.im_end),
            ..FakeTinkerOptions::default()
        },
        port,
    )
    .await
    .unwrap();
    let v = d
        .wait_learning("connected once the backend is up", 90, |v| {
            v["state"] == "ready"
        })
        .await;
    assert_eq!(v["serving"], "base model");
    assert!(v["last_error"].is_null(), "{v:#}");
    late.push_completion(d.toy.encode("Sure.<|im_end|>"));
    let msg = d.say("f", "Hello again.", false).await;
    assert_eq!(msg["content"], "Sure.");
    assert_eq!(late.sampled().len(), 1);
    assert_eq!(d.upstream_chats(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_in_the_middle_of_a_batch_keeps_its_samples() {
    let d = RlDaemon::start(RlSetup {
        batch_size: 3,
        ..RlSetup::default()
    })
    .await;
    d.wait_ready().await;
    d.script("Sure.<|im_end|>");
    d.say("r1", "Hello.", false).await;
    d.script("Sure.<|im_end|>");
    d.say("r1", "How are you?", true).await;
    d.wait_learning("two judged samples", 60, |v| {
        v["samples"]["waiting"] == 2 && v["samples"]["unjudged"] == 0
    })
    .await;

    d.stop_process().await;
    d.start_process().await;
    let v = d.wait_ready().await;
    assert_eq!(v["step"], 0);
    assert_eq!(v["samples"]["waiting"], 2, "{v:#}");
    assert_eq!(v["samples"]["unjudged"], 0);
    assert_eq!(d.tinker.requests_to("/api/v1/forward_backward").len(), 0);

    d.script("Sure.<|im_end|>");
    d.say("r2", "One more thing.", true).await;
    let v = d
        .wait_learning("step 1 on the full batch", 90, |v| step_done(v, 1))
        .await;
    assert_eq!(v["steps"][0]["samples"], 3, "{v:#}");
    assert_eq!(v["samples"]["consumed"], 3);
    assert_eq!(v["samples"]["waiting"], 0);
    let checkpoint = v["last_checkpoint"].as_str().unwrap().to_owned();

    // Restarted after a step: training resumes from its checkpoint, which then serves.
    d.stop_process().await;
    d.start_process().await;
    let v = d.wait_ready().await;
    assert_eq!(v["step"], 1);
    assert_eq!(v["last_checkpoint"], checkpoint.as_str());
    let serving = v["serving"].as_str().unwrap().to_owned();
    assert!(serving.contains("resume_000001"), "{v:#}");
    let loads = d.tinker.requests_to("/api/v1/load_weights");
    assert_eq!(loads.len(), 1);
    assert_eq!(loads[0].body["path"], checkpoint.as_str());
    d.script("Sure.<|im_end|>");
    d.say("r3", "Still there?", false).await;
    assert_eq!(d.tinker.sampled().pop().unwrap().source, serving);

    // Back in skills_only: learning is off, its history is still shown.
    d.stop_process().await;
    let config_path = d.home.path().join("config.yaml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    std::fs::write(
        &config_path,
        config.replace("mode: rl\n", "mode: skills_only\n"),
    )
    .unwrap();
    d.start_process().await;
    let v = d.learning().await;
    assert_eq!(v["mode"], "skills_only");
    assert_eq!(v["active"], false);
    assert_eq!(v["state"], "off");
    assert_eq!(v["step"], 1, "{v:#}");
    assert_eq!(v["steps"].as_array().unwrap().len(), 1);
    assert_eq!(v["steps"][0]["samples"], 3);
    assert_eq!(v["samples"]["consumed"], 3);
    assert_eq!(
        v["samples"]["waiting"], 1,
        "the last turn's sample, untrained"
    );
    let before = d.tinker.sampled().len();
    let msg = d.say("r4", "Hello.", false).await;
    assert!(
        msg["content"].as_str().unwrap().starts_with("Echo: "),
        "{msg:#}"
    );
    assert_eq!(
        d.tinker.sampled().len(),
        before,
        "no sampling outside rl modes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_swap_after_the_optimizer_step_trains_nothing_twice() {
    let d = RlDaemon::start(RlSetup::default()).await;
    d.wait_ready().await;
    d.tinker.push_script(
        "save_weights_for_sampler",
        FutureScript::Fail {
            message: "disk full".into(),
            category: "server".into(),
        },
    );
    d.script("Sure.<|im_end|>");
    d.say("x", "Hello.", false).await;
    d.script("Sure.<|im_end|>");
    d.say("x", "How are you?", true).await;
    let v = d
        .wait_learning("the step recorded with its error", 60, |v| {
            v["steps"].as_array().is_some_and(|s| s.len() == 1) && v["training"] == false
        })
        .await;
    let step = &v["steps"][0];
    assert_eq!(step["step"], 1);
    assert!(
        step["error"]
            .as_str()
            .is_some_and(|e| e.contains("disk full")),
        "{v:#}"
    );
    assert!(step["sampler_path"].is_null());
    assert!(step["checkpoint_path"].is_null());
    assert_eq!(v["step"], 1);
    assert_eq!(v["serving"], "base model", "{v:#}");
    assert!(
        v["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("disk full"))
    );
    assert_eq!(v["samples"]["consumed"], 2, "the optimizer applied them");
    assert_eq!(v["samples"]["waiting"], 0);

    // The next step first serves what was trained; nothing is trained twice.
    let (status, report) = d.train_step(Some(&d.admin_token())).await;
    assert_eq!(status, 200, "{report:#}");
    assert_eq!(report["status"], "skipped", "{report:#}");
    let v = d.learning().await;
    let serving = v["serving"].as_str().unwrap().to_owned();
    assert!(serving.contains("step_000001"), "{v:#}");
    assert_eq!(v["step"], 1);
    assert_eq!(d.tinker.requests_to("/api/v1/forward_backward").len(), 1);
    assert_eq!(d.tinker.requests_to("/api/v1/optim_step").len(), 1);
    d.script("Sure.<|im_end|>");
    d.say("y", "Hello again.", false).await;
    assert_eq!(d.tinker.sampled().pop().unwrap().source, serving);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn train_step_contract() {
    let d = RlDaemon::start(RlSetup::default()).await;
    d.wait_ready().await;
    let (status, _) = d.train_step(None).await;
    assert_eq!(status, 401);
    let (status, _) = d.train_step(Some(common::daemon::PROXY_KEY)).await;
    assert_eq!(status, 401, "the agent's key is not the admin token");
    let (status, report) = d.train_step(Some(&d.admin_token())).await;
    assert_eq!(status, 200, "{report:#}");
    assert_eq!(report["status"], "skipped", "{report:#}");
    assert_eq!(report["samples"], 0);
    assert!(report["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert_eq!(d.learning().await["step"], 0);
    assert!(d.tinker.requests_to("/api/v1/forward_backward").is_empty());

    // skills_only: no weight learning to step.
    let port = free_port();
    let home = Home::new(&format!(
        "mode: skills_only\nllm:\n  api: openai\n  api_base: {}\n  model_id: m\nproxy:\n  port: {port}\nskills:\n  enabled: false\n",
        d.upstream.base_url_openai()
    ));
    home.start_daemon().await;
    let r = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/admin/train_step"))
        .bearer_auth(home.admin_token())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    let v: Value = r.json().await.unwrap();
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("skills_only") && message.contains("rl"),
        "{message}"
    );
    let view: Value = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/api/learning"))
        .bearer_auth(home.admin_token())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(view["active"], false);
    assert_eq!(view["state"], "off");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_outage_holds_the_sample_and_retries_it_later() {
    let d = RlDaemon::start(RlSetup {
        batch_size: 1,
        ..RlSetup::default()
    })
    .await;
    d.wait_ready().await;
    // One vote and all its retries fail.
    d.judge.push_fault(503, 4);
    d.script("Sure.<|im_end|>");
    d.say("j", "Hello.", true).await;
    let v = d
        .wait_learning("the sample held with the judge's error", 60, |v| {
            v["samples"]["held"] == 1 && v["last_error"].is_string()
        })
        .await;
    assert!(v["last_error"].as_str().unwrap().contains("503"), "{v:#}");
    assert_eq!(v["step"], 0);
    assert_eq!(v["samples"]["waiting"], 1, "{v:#}");
    assert_eq!(d.judge.requests().len(), 4);

    // "Train now" runs a judge round with nothing due (the hold has not expired): nothing
    // to train, and the reason the sample waits is still shown.
    let (status, report) = d.train_step(Some(&d.admin_token())).await;
    assert_eq!(status, 200, "{report:#}");
    assert_eq!(report["status"], "skipped", "{report:#}");
    let v = d.learning().await;
    assert_eq!(v["samples"]["held"], 1, "{v:#}");
    assert!(
        v["last_error"].as_str().is_some_and(|e| e.contains("503")),
        "the held sample's error stays visible until it is judged: {v:#}"
    );
    assert_eq!(d.judge.requests().len(), 4);

    // The judge is back; the held sample is judged again later and trains.
    let v = d
        .wait_learning("the held sample judged and trained", 120, |v| {
            step_done(v, 1)
        })
        .await;
    assert_eq!(v["samples"]["held"], 0);
    assert_eq!(v["steps"][0]["samples"], 1);
    assert_eq!(v["steps"][0]["mean_reward"], 1.0);
    assert_eq!(d.judge.requests().len(), 5);
}

/// Reassembles an Anthropic SSE body: (thinking, text, tool uses as (name, input), stop).
fn reassemble_anthropic_sse(text: &str) -> (String, String, Vec<(String, Value)>, Value) {
    let (mut thinking, mut out) = (String::new(), String::new());
    let mut tools: Vec<(String, String)> = Vec::new();
    let mut stop = Value::Null;
    for data in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
        let ev: Value = serde_json::from_str(data).unwrap();
        match ev["type"].as_str().unwrap_or("") {
            "content_block_start" if ev["content_block"]["type"] == "tool_use" => tools.push((
                ev["content_block"]["name"].as_str().unwrap().to_owned(),
                String::new(),
            )),
            "content_block_delta" => {
                let d = &ev["delta"];
                match d["type"].as_str().unwrap_or("") {
                    "thinking_delta" => thinking.push_str(d["thinking"].as_str().unwrap()),
                    "text_delta" => out.push_str(d["text"].as_str().unwrap()),
                    "input_json_delta" => tools
                        .last_mut()
                        .unwrap()
                        .1
                        .push_str(d["partial_json"].as_str().unwrap()),
                    _ => {}
                }
            }
            "message_delta" => stop = ev["delta"]["stop_reason"].clone(),
            _ => {}
        }
    }
    let tools = tools
        .into_iter()
        .map(|(n, a)| (n, serde_json::from_str(&a).unwrap()))
        .collect();
    (thinking, out, tools, stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn side_turns_length_cuts_and_anthropic_streams() {
    let d = RlDaemon::start(RlSetup {
        batch_size: 10,
        ..RlSetup::default()
    })
    .await;
    d.wait_ready().await;

    // A side turn goes to the upstream LLM and is no sample.
    let r = reqwest::Client::new()
        .post(d.url("/v1/chat/completions"))
        .bearer_auth(common::daemon::PROXY_KEY)
        .header("x-session-id", "side")
        .header("x-turn-type", "side")
        .json(&json!({"model": "agent", "messages": [{"role": "user", "content": "Summarise."}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "Echo: Summarise.");
    assert!(d.tinker.sampled().is_empty());

    // The token limit cuts the reply: finish_reason length, and the sample keeps the cut.
    d.script("Sure. I will list them now.<|im_end|>");
    let r = d
        .chat(
            "cut",
            &json!({"model": "agent", "max_tokens": 2,
                    "messages": [{"role": "user", "content": "Hello."}]}),
            false,
        )
        .await;
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["choices"][0]["finish_reason"], "length", "{v:#}");
    let s = d.tinker.sampled().pop().unwrap();
    assert_eq!(s.tokens.len(), 2);
    assert_eq!(
        v["choices"][0]["message"]["content"],
        d.toy.decode(&s.tokens).trim()
    );

    // The sampler failing on a turn: the upstream LLM answers it, and it is no sample.
    d.tinker.push_script(
        "sample",
        FutureScript::Fail {
            message: "sampler crashed".into(),
            category: "server".into(),
        },
    );
    let msg = d.say("fail", "Hello?", false).await;
    assert_eq!(msg["content"], "Echo: Hello?");
    let v = d.learning().await;
    assert_eq!(v["served"]["fallback"], 1, "{v:#}");
    assert_eq!(v["served"]["sampled"], 1);
    assert_eq!(v["samples"]["waiting"], 1);

    // Anthropic client, streamed.
    d.script(TOOL_REPLY);
    let body = json!({
        "model": "agent", "max_tokens": 256, "stream": true,
        "tools": [{"name": "run", "description": "Run a shell command",
                   "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}}],
        "messages": [{"role": "user", "content": ASK}]});
    let r = d.messages("anth", &body, false).await;
    assert_eq!(r.status(), 200);
    let (thinking, text, tools, stop) = reassemble_anthropic_sse(&r.text().await.unwrap());
    assert_eq!(thinking, "plan");
    assert_eq!(text, "Sure.");
    assert_eq!(tools, [("run".to_owned(), json!({"cmd": "ls"}))]);
    assert_eq!(stop, "tool_use");

    let v = d.learning().await;
    assert_eq!(v["served"]["sampled"], 2);
    assert_eq!(v["served"]["fallback"], 1);
    assert_eq!(v["samples"]["waiting"], 2, "{v:#}");
    assert_eq!(
        d.upstream_chats(),
        2,
        "the side turn and the failed sample went upstream"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn samples_of_an_older_skill_generation_are_dropped() {
    let d = RlDaemon::start(RlSetup {
        skills: true,
        ..RlSetup::default()
    })
    .await;
    d.wait_ready().await;
    let (status, skills) = d.admin(reqwest::Method::GET, "/api/skills").await;
    assert_eq!(status, 200);
    let before = skills["generation"].as_u64().unwrap();
    let name = skills["skills"][0]["name"].as_str().unwrap().to_owned();

    d.script("Sure.<|im_end|>");
    d.say("g1", "Hello.", true).await;
    d.wait_learning("the first sample judged", 60, |v| {
        v["samples"]["waiting"] == 1 && v["samples"]["unjudged"] == 0
    })
    .await;

    // The library changes: a new generation.
    let (status, _) = d
        .admin(
            reqwest::Method::POST,
            &format!("/api/skills/{name}/disable"),
        )
        .await;
    assert_eq!(status, 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (_, skills) = d.admin(reqwest::Method::GET, "/api/skills").await;
        if skills["generation"].as_u64().unwrap() > before {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the generation did not change"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // Two judged samples wait, but one is of the old generation: dropped, no step.
    d.script("Sure.<|im_end|>");
    d.say("g2", "Hello again.", true).await;
    let v = d
        .wait_learning("the old sample dropped", 60, |v| {
            v["samples"]["dropped"] == 1
        })
        .await;
    assert_eq!(v["samples"]["waiting"], 1, "{v:#}");
    assert_eq!(v["step"], 0);
    assert!(d.tinker.requests_to("/api/v1/forward_backward").is_empty());

    d.script("Sure.<|im_end|>");
    d.say("g3", "And once more.", true).await;
    let v = d
        .wait_learning("a step on the new generation", 60, |v| step_done(v, 1))
        .await;
    assert_eq!(v["steps"][0]["samples"], 2, "{v:#}");
    assert_eq!(v["samples"]["dropped"], 1);
    assert_eq!(v["samples"]["consumed"], 2);
    let fb = d.tinker.requests_to("/api/v1/forward_backward");
    let datums = fb[0].body["forward_backward_input"]["data"]
        .as_array()
        .unwrap();
    let sampled = d.tinker.sampled();
    let mut sources: Vec<usize> = datums.iter().map(|x| datum_source(x, &sampled)).collect();
    sources.sort_unstable();
    assert_eq!(sources, [1, 2], "turns 2 and 3 trained, not turn 1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_step_is_retried_by_itself_after_its_pause() {
    // The pause is 30 s; the learning back-off override shortens it to 3 s here.
    let d = RlDaemon::start(RlSetup {
        backoff_ms: Some(3_000),
        ..RlSetup::default()
    })
    .await;
    d.wait_ready().await;
    d.tinker.push_script(
        "forward_backward",
        FutureScript::Fail {
            message: "worker lost".into(),
            category: "server".into(),
        },
    );
    d.script("Sure.<|im_end|>");
    d.say("t", "Hello.", false).await;
    d.script("Sure.<|im_end|>");
    d.say("t", "How are you?", true).await;
    let v = d
        .wait_learning("the failed step reported", 60, |v| {
            v["last_error"]
                .as_str()
                .is_some_and(|e| e.contains("worker lost"))
                && v["training"] == false
        })
        .await;
    assert_eq!(v["samples"]["waiting"], 2, "{v:#}");
    let failed_at = std::time::Instant::now();
    // The trainer waits its pause after a failure, then tries the kept batch again.
    let v = d
        .wait_learning("the step retried by itself", 45, |v| step_done(v, 1))
        .await;
    assert!(
        failed_at.elapsed() >= std::time::Duration::from_millis(2_500),
        "retried only after the pause"
    );
    assert_eq!(v["steps"][0]["samples"], 2);
    assert!(v["last_error"].is_null(), "{v:#}");
    assert_eq!(d.tinker.requests_to("/api/v1/forward_backward").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distillation_adds_the_teachers_per_token_penalty_to_the_step() {
    let d = RlDaemon::start(RlSetup {
        opd: true,
        ..RlSetup::default()
    })
    .await;
    d.wait_ready().await;
    d.script("One.<|im_end|>");
    d.say("opd", "First question.", false).await;
    d.script("Two.<|im_end|>");
    d.say("opd", "Second question.", true).await;
    d.wait_learning("a step with distillation", 90, |v| step_done(v, 1))
        .await;

    // The teacher was asked for the logprobs of exactly what was sampled, echoing the prompt.
    let sampled = d.tinker.sampled();
    let teacher: Vec<Value> = d
        .judge
        .requests()
        .into_iter()
        .filter(|(path, _)| path.ends_with("/completions") && !path.contains("chat"))
        .map(|(_, body)| body)
        .collect();
    assert_eq!(
        teacher.len(),
        2,
        "one teacher call per sample: {teacher:#?}"
    );
    for body in &teacher {
        assert_eq!(body["echo"], true);
        assert_eq!(body["model"], "teacher");
        let prompt = token_ids(&body["prompt"]);
        assert!(
            sampled[..2].iter().any(|s| {
                prompt
                    == s.prompt
                        .iter()
                        .chain(&s.tokens)
                        .copied()
                        .collect::<Vec<u32>>()
            }),
            "the teacher saw a sampled prompt and completion"
        );
    }

    // Each completion token's advantage is the sample's advantage minus
    // kl_penalty_coef × (student logprob − teacher logprob).
    let fb = d.tinker.requests_to("/api/v1/forward_backward");
    let floats = |v: &Value| -> Vec<f64> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    for datum in fb[0].body["forward_backward_input"]["data"]
        .as_array()
        .unwrap()
    {
        let inputs = &datum["loss_fn_inputs"];
        let targets = token_ids(&inputs["target_tokens"]["data"]);
        let student = floats(&inputs["logprobs"]);
        let advantages = floats(&inputs["advantages"]);
        let source = datum_source(datum, &sampled[..2]);
        let first = sampled[source].prompt.len() - 1;
        let base: Vec<f64> = (first..targets.len())
            .map(|i| {
                let teacher = f64::from(metaclaw_e2e::fake_judge::teacher_logprob(targets[i]));
                advantages[i] + (student[i] - teacher)
            })
            .collect();
        assert!(
            base.iter().all(|b| (b - base[0]).abs() < 1e-4),
            "one batch advantage under the per-token penalty: {base:?}"
        );
        let penalties: Vec<f64> = (first..targets.len())
            .map(|i| advantages[i] - base[0])
            .collect();
        assert!(
            penalties.iter().any(|p| p.abs() > 1e-6),
            "the penalty is not zero everywhere: {penalties:?}"
        );
    }
}

/// Every judge call is counted with learning's costs, with the tokens its answer reported.
async fn assert_judge_calls_counted(d: &RlDaemon) {
    let http = reqwest::Client::new();
    let admin = |method: reqwest::Method, path: &str| {
        http.request(method, d.url(path))
            .bearer_auth(d.admin_token())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        admin(reqwest::Method::POST, "/api/recorder/flush")
            .send()
            .await
            .unwrap();
        let v: Value = admin(reqwest::Method::GET, "/api/learning/usage?days=1")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let asked = d.judge.requests();
        let row = v["days"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["purpose"] == "judge")
            .cloned();
        if let Some(row) = row.filter(|r| r["calls"].as_u64() == Some(asked.len() as u64)) {
            let tokens: u64 = asked
                .iter()
                .map(|(_, body)| body["messages"].to_string().len() as u64 / 4)
                .sum();
            assert_eq!(row["failed"], 0, "{row}");
            assert_eq!(row["input_tokens"], tokens, "{row}");
            assert!(row["output_tokens"].as_u64().unwrap() > 0, "{row}");
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} judge calls, counted: {v}",
            asked.len()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
