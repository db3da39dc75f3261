//! The weight-learning commands through the real binary: `models download` against the fake
//! Hugging Face host (a loadable toy tokenizer, a revision, the token sent and never shown, a
//! missing model, a bad id, no server), `train-step` when MetaClaw is not running and in
//! skills_only, a step on the fake backend and the weights it leaves serving, and `status` in
//! rl mode with a training backend nobody answers at.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::daemon::{Home, free_port, stdout};
use common::rl_daemon::{RlDaemon, RlSetup};
use metaclaw_e2e::fake_tinker::{FakeTinker, FakeTinkerOptions};
use metaclaw_e2e::toy_model::{self, ToyModel};
use serde_json::Value;

const MODEL: &str = "Toy/toy-model";
const HF_TOKEN: &str = "hf-test-token-never-shown-5b2f";
const RL_KEY: &str = "tml-rl-cli-test-key";

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `metaclaw ARGS` with no Hugging Face settings from the caller's environment.
fn cmd(home: &Home, args: &[&str]) -> Command {
    let mut c = home.cmd("file", args);
    c.env_remove("HF_ENDPOINT")
        .env_remove("HF_TOKEN")
        .env("METACLAW_RL_API_KEY", RL_KEY);
    c
}

/// Runs off the runtime's workers: the fake host answers on this test's runtime.
async fn output(mut c: Command) -> Output {
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

fn toy() -> ToyModel {
    toy_model::build().unwrap()
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    free_port()
}

#[tokio::test(flavor = "multi_thread")]
async fn models_download_saves_the_configured_models_tokenizer_and_proves_it_loads() {
    let fake = FakeTinker::start(FakeTinkerOptions::default())
        .await
        .unwrap();
    let toy = toy();
    toy.serve_on(&fake, MODEL);
    let home = Home::new(&format!(
        "llm:\n  model_id: served-name\nrl:\n  model: {MODEL}\n"
    ));

    let mut c = cmd(
        &home,
        &[
            "models",
            "download",
            "--tokenizer",
            "--hf-endpoint",
            &fake.hf_base_url(),
        ],
    );
    c.env("HF_TOKEN", HF_TOKEN)
        .env("HF_ENDPOINT", "http://127.0.0.1:1/not-used");
    let o = output(c).await;
    assert!(o.status.success(), "{o:?}");
    let dir = home.path().join("models").join(MODEL);
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "Saved {MODEL} tokenizer ({} tokens, chat template ok) to {}",
            toy.vocab_size,
            dir.display()
        )),
        "{out}"
    );
    assert_eq!(
        std::fs::read(dir.join("tokenizer.json")).unwrap(),
        toy.tokenizer_json
    );
    assert_eq!(
        std::fs::read(dir.join("tokenizer_config.json")).unwrap(),
        toy.tokenizer_config_json
    );
    // The flag won over HF_ENDPOINT, the token went to the host and nowhere else.
    let fetched = fake.requests_to(&format!("/hf/{MODEL}/resolve/main/tokenizer.json"));
    assert_eq!(fetched.len(), 1, "{fetched:?}");
    assert_eq!(
        fetched[0].header("authorization"),
        Some(format!("Bearer {HF_TOKEN}").as_str())
    );
    assert!(!out.contains(HF_TOKEN) && !stderr(&o).contains(HF_TOKEN));
}

#[tokio::test(flavor = "multi_thread")]
async fn models_download_takes_a_named_model_a_revision_and_hf_endpoint_from_the_env() {
    let fake = FakeTinker::start(FakeTinkerOptions::default())
        .await
        .unwrap();
    let toy = toy();
    let named = "Org/other-model";
    // Only the v2 revision exists, with the template in its own file.
    let mut config: Value = serde_json::from_slice(&toy.tokenizer_config_json).unwrap();
    let template = config["chat_template"].as_str().unwrap().to_owned();
    config.as_object_mut().unwrap().remove("chat_template");
    for (name, bytes) in [
        ("tokenizer.json", toy.tokenizer_json.clone()),
        (
            "tokenizer_config.json",
            serde_json::to_vec(&config).unwrap(),
        ),
        ("chat_template.jinja", template.clone().into_bytes()),
    ] {
        fake.put_hf_file(&format!("{named}/resolve/v2/{name}"), bytes);
    }
    let home = Home::new("");

    let mut c = cmd(&home, &["models", "download", named, "--revision", "v2"]);
    c.env("HF_ENDPOINT", fake.hf_base_url());
    let o = output(c).await;
    assert!(o.status.success(), "{o:?}");
    let dir = home.path().join("models").join(named);
    assert!(
        stdout(&o).contains(&format!(
            "Saved {named} tokenizer ({} tokens",
            toy.vocab_size
        )),
        "{o:?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("chat_template.jinja")).unwrap(),
        template
    );
    assert!(
        fake.requests_to(&format!("/hf/{named}/resolve/main/tokenizer.json"))
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn models_download_explains_a_missing_model_a_bad_id_and_no_server() {
    let fake = FakeTinker::start(FakeTinkerOptions::default())
        .await
        .unwrap();
    let home = Home::new("");
    let hf = fake.hf_base_url();

    let o = output(cmd(
        &home,
        &[
            "models",
            "download",
            "Org/no-such-model",
            "--hf-endpoint",
            &hf,
        ],
    ))
    .await;
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stderr(&o).contains("check the model id"), "{o:?}");
    assert!(
        !home
            .path()
            .join("models/Org/no-such-model/tokenizer.json")
            .exists()
    );

    let asked = fake.requests().len();
    let o = output(cmd(
        &home,
        &["models", "download", "../escape", "--hf-endpoint", &hf],
    ))
    .await;
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stderr(&o).contains("is not a model id"), "{o:?}");
    assert_eq!(fake.requests().len(), asked, "a bad id must not be fetched");

    let nowhere = format!("http://127.0.0.1:{}", closed_port());
    let o = output(cmd(
        &home,
        &["models", "download", MODEL, "--hf-endpoint", &nowhere],
    ))
    .await;
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = stderr(&o);
    assert!(
        err.contains(&format!("cannot download the {MODEL} tokenizer")) && err.contains(&nowhere),
        "{err}"
    );

    // The configured model's tokenizer, with none configured, is a usage error that says what
    // to do.
    let o = output(cmd(&home, &["models", "download", "--tokenizer"])).await;
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stderr(&o).contains("set rl.model"), "{o:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn train_step_needs_a_running_metaclaw_in_a_weight_mode() {
    let port = free_port();
    let home = Home::new(&format!("proxy:\n  port: {port}\n"));
    let o = output(cmd(&home, &["train-step"])).await;
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert!(stderr(&o).contains("MetaClaw is not running"), "{o:?}");

    home.start_daemon().await;
    let o = output(cmd(&home, &["train-step"])).await;
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        stderr(&o).contains("weight learning is off in mode skills_only"),
        "{o:?}"
    );
    let o = output(cmd(&home, &["train-step", "--json"])).await;
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let answer: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("skills_only")
    );

    // status: weights are off, and the JSON carries the learning view.
    let o = output(cmd(&home, &["status"])).await;
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).lines().any(|l| l == "  weights:    off"),
        "{o:?}"
    );
    let o = output(cmd(&home, &["status", "--json"])).await;
    let status: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(status["learning"]["active"], false, "{status}");
    assert_eq!(status["learning"]["mode"], "skills_only", "{status}");
}

#[tokio::test(flavor = "multi_thread")]
async fn status_in_rl_mode_says_the_backend_is_unavailable_and_why() {
    let port = free_port();
    let backend = format!("http://127.0.0.1:{}", closed_port());
    let home = Home::new(&format!(
        "proxy:\n  port: {port}\nmode: rl\nllm:\n  api_base: http://127.0.0.1:{}/v1\n  model_id: toy-served\nrl:\n  backend: tinker\n  base_url: {backend}\n  model: {MODEL}\n  prm_url: ''\n",
        closed_port()
    ));
    // The tokenizer is there, so what fails is the backend.
    toy().install(home.path(), MODEL).unwrap();
    let o = output(cmd(&home, &["start", "--daemon"])).await;
    assert!(o.status.success(), "{o:?}");

    // The engine connects in the background (with retries); poll until it gives up once.
    let deadline = Instant::now() + Duration::from_secs(120);
    let learning = loop {
        let o = output(cmd(&home, &["status", "--json"])).await;
        assert!(o.status.success(), "{o:?}");
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        if v["learning"]["state"] == "unavailable" {
            break v["learning"].clone();
        }
        assert_eq!(v["learning"]["state"], "connecting", "{v}");
        assert!(Instant::now() < deadline, "still not unavailable: {v}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(learning["active"], true, "{learning}");
    assert_eq!(learning["backend"], "tinker", "{learning}");
    let why = learning["last_error"].as_str().unwrap().to_owned();
    assert!(why.contains(&backend), "{why}");

    let o = output(cmd(&home, &["status"])).await;
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("  weights:"))
        .unwrap_or_else(|| panic!("no weights line: {out}"));
    assert!(
        line.starts_with("  weights:    rl · tinker · unavailable · step 0 · 0 samples waiting"),
        "{line}"
    );
    // The reason names the backend's address (the retry may word it anew, so not verbatim).
    let reason = line.split("last error: ").nth(1).unwrap_or_default();
    assert!(reason.contains(&backend), "{line}");
    assert!(!out.contains(RL_KEY), "{out}");

    // A step now cannot run without the backend, and says so.
    let o = output(cmd(&home, &["train-step"])).await;
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        stderr(&o).contains("Training step failed: the training backend is not connected"),
        "{o:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn train_step_trains_on_what_waits_and_status_shows_the_new_weights() {
    // A batch larger than the test's samples: only train-step trains.
    let d = RlDaemon::start(RlSetup {
        batch_size: 8,
        ..RlSetup::default()
    })
    .await;
    d.wait_ready().await;

    let o = output(cmd(&d.home, &["train-step"])).await;
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        stdout(&o),
        "Nothing to train: 0 judged sample(s) waiting; a step needs 1\n"
    );

    d.script("Sure.<|im_end|>");
    d.say("cli-1", "Please list the files.", true).await;
    d.wait_learning("the turn kept as a judged sample", 60, |v| {
        v["samples"]["waiting"] == 1 && v["samples"]["unjudged"] == 0
    })
    .await;

    let o = output(cmd(&d.home, &["train-step"])).await;
    assert!(o.status.success(), "{o:?}\n{}", d.log_tail());
    let v = d.learning().await;
    let row = &v["steps"][0];
    assert_eq!(row["step"], 1, "{v:#}");
    let mut said = format!(
        "Step 1 done: 1 samples, mean reward {:.2}",
        row["mean_reward"].as_f64().unwrap()
    );
    if let Some(loss) = row["loss"].as_f64() {
        said.push_str(&format!(", loss {loss:.2}"));
    }
    assert_eq!(stdout(&o), format!("{said}\n"));

    let o = output(cmd(&d.home, &["status"])).await;
    let out = stdout(&o);
    assert!(
        out.lines().any(|l| l
            == "  weights:    rl · tinker · ready · serving step_000001 · step 1 · 0 samples waiting"),
        "{out}"
    );
    let o = output(cmd(&d.home, &["status", "--json"])).await;
    let status: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(status["learning"]["step"], 1, "{status}");
    assert_eq!(status["learning"]["samples"]["consumed"], 1, "{status}");
}
