//! Mode `madmax` through the real binary: the trained model serves chat at all times, but
//! weight updates wait for a training window. Windows are opened and closed the way the
//! user does: `metaclaw pause` / `resume` inside the sleep hours, or (no display) by idle
//! time since the last proxy request, which a new request ends. The training backend, the
//! judge and the upstream LLM are local fakes; children run with TZ=UTC.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_judge::FakeJudge;
use metaclaw_e2e::fake_tinker::{FakeTinker, FutureScript};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_e2e::toy_model::{self, ToyModel};
use serde_json::{Value, json};

/// How long a step, a window change or an answer may take before the test calls it stuck.
/// Generous because the suite also runs on a loaded machine (`scripts/test.sh --stress`):
/// what is waited for here is either prompt or never happens (a held step, a missing stop).
const PATIENCE: Duration = Duration::from_secs(20);
const MODEL: &str = "Toy/toy-model";
const REPLY: &str = "Sure. Done.";
const FORWARD_BACKWARD: &str = "/api/v1/forward_backward";
const OPTIM_STEP: &str = "/api/v1/optim_step";

fn hhmm(secs: u64) -> String {
    let of_day = secs % (24 * 3600);
    format!("{:02}:{:02}", of_day / 3600, (of_day % 3600) / 60)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// How the training windows come and go in a test.
enum Windows {
    /// Inside the sleep hours, started paused: only the pause keeps the window shut.
    PausedInSleepHours,
    /// Sleep hours far from now; the window opens after 8 s without proxy requests.
    IdleOnly,
}

struct Madmax {
    toy: ToyModel,
    tinker: FakeTinker,
    judge: FakeJudge,
    upstream: FakeUpstream,
    home: Home,
    port: u16,
    token: String,
    http: reqwest::Client,
}

impl Madmax {
    async fn start(windows: Windows) -> Madmax {
        let toy = toy_model::build().unwrap();
        let tinker = FakeTinker::start(toy.fake_options()).await.unwrap();
        let judge = FakeJudge::start().await.unwrap();
        let upstream = FakeUpstream::start(FakeOptions::default()).await.unwrap();
        let port = free_port();
        let now = now_secs();
        let scheduler = match windows {
            Windows::PausedInSleepHours => format!(
                "scheduler:\n  sleep_start: '{}'\n  sleep_end: '{}'\n",
                hhmm(now - 3600),
                hhmm(now + 3 * 3600)
            ),
            Windows::IdleOnly => format!(
                "scheduler:\n  sleep_start: '{}'\n  sleep_end: '{}'\n  idle_threshold_minutes: 1\n",
                hhmm(now + 6 * 3600),
                hhmm(now + 7 * 3600)
            ),
        };
        // Skills off: an evolution would raise the skill generation and drop the samples.
        let home = Home::new(&format!(
            "mode: madmax\nllm:\n  api: openai\n  api_base: {}\n  model_id: toy-served\n\
             proxy:\n  port: {port}\nskills:\n  enabled: false\nmemory:\n  enabled: false\n\
             rl:\n  backend: tinker\n  base_url: {}\n  model: {MODEL}\n  batch_size: 2\n\
             \x20 prm_url: {}\n  prm_model: judge\n  prm_m: 1\n  checkpoint_every: 1\n{scheduler}",
            upstream.base_url_openai(),
            tinker.base_url(),
            judge.base_url(),
        ));
        toy.install(home.path(), MODEL).unwrap();
        if matches!(windows, Windows::PausedInSleepHours) {
            run_ok(&home, &["pause"]);
        }
        run_ok(&home, &["start", "--daemon"]);
        let token = home.admin_token();
        let m = Madmax {
            toy,
            tinker,
            judge,
            upstream,
            home,
            port,
            token,
            http: reqwest::Client::new(),
        };
        m.wait_for("/api/learning", Duration::from_secs(30), |l| {
            l["state"] == "ready"
        })
        .await;
        m
    }

    async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("http://127.0.0.1:{}{path}", self.port))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Polls `path` until `done` holds (bounded: the work is in the background).
    async fn wait_for(&self, path: &str, within: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let v = self.get(path).await;
            if done(&v) {
                return v;
            }
            assert!(
                Instant::now() < deadline,
                "{path} after {within:?}: {v}\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// One main turn; the trained model's next completion is scripted as `REPLY`.
    async fn chat(&self, session: &str, text: &str, done: bool) -> Value {
        self.tinker
            .push_completion(self.toy.encode(&format!("{REPLY}<|im_end|>")));
        let mut req = self
            .http
            .post(format!(
                "http://127.0.0.1:{}/v1/chat/completions",
                self.port
            ))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", session)
            .json(&json!({"model": "agent", "messages": [{"role": "user", "content": text}]}));
        if done {
            req = req.header("x-session-done", "true");
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "chat is never held by training");
        r.json().await.unwrap()
    }

    /// A session of two turns, ended: both samples become due for the judge.
    async fn two_turn_session(&self, session: &str) {
        for (text, done) in [("Please list the files.", false), ("Thanks!", true)] {
            let reply = self.chat(session, text, done).await;
            assert_eq!(
                reply["choices"][0]["message"]["content"], REPLY,
                "answered by the trained model: {reply}"
            );
        }
    }

    async fn wait_judged(&self, n: u64) -> Value {
        self.wait_for("/api/learning", Duration::from_secs(30), |l| {
            l["samples"]["waiting"].as_u64().unwrap_or(0) >= n
                && l["samples"]["waiting"].as_u64().unwrap_or(0)
                    - l["samples"]["unjudged"].as_u64().unwrap_or(0)
                    >= n
        })
        .await
    }

    fn calls(&self, path: &str) -> usize {
        self.tinker.requests_to(path).len()
    }

    fn log(&self) -> String {
        let o = self.home.run(&["logs", "-n", "80"]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

fn run_ok(home: &Home, args: &[&str]) {
    let key = "tml-fake-key-0123456789";
    let o = home
        .cmd("file", args)
        .env("TZ", "UTC")
        .env("METACLAW_RL_API_KEY", key)
        // The idle window opens after 8 s without requests instead of a minute.
        .env("METACLAW_IDLE_THRESHOLD_MS", "8000")
        .env("METACLAW_IDLE_SOURCE", "last-request")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("HF_ENDPOINT")
        .output()
        .unwrap();
    assert!(o.status.success(), "metaclaw {args:?}: {o:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_step_without_a_window_then_the_window_trains_while_chat_is_served() {
    let m = Madmax::start(Windows::PausedInSleepHours).await;
    assert_eq!(m.tinker.api_key(), "tml-fake-key-0123456789");

    // A full batch is judged while the window is shut (paused).
    m.two_turn_session("madmax-a").await;
    let judged = m.wait_judged(2).await;
    assert_eq!(m.judge.requests().len(), 2, "one vote per sample");
    let sched = m.get("/api/scheduler").await;
    assert_eq!(sched["state"], "paused", "{sched}");
    assert_eq!(judged["step"], 0, "{judged}");
    assert_eq!(judged["training"], false, "{judged}");
    assert_eq!(judged["served"]["sampled"], 2, "{judged}");
    assert_eq!(judged["served"]["fallback"], 0, "{judged}");
    assert_eq!(judged["serving"], "base model", "{judged}");

    // Another turn makes a round trip through the engine after the trainer was woken by
    // the judge: still no step, and still the trained model answering.
    let reply = m.chat("madmax-a2", "Hello, how are you?", false).await;
    assert_eq!(reply["choices"][0]["message"]["content"], REPLY, "{reply}");
    let still = m.get("/api/learning").await;
    assert_eq!(still["step"], 0, "{still}");
    assert_eq!(
        m.calls(FORWARD_BACKWARD),
        0,
        "no forward_backward without a window"
    );
    assert_eq!(m.calls(OPTIM_STEP), 0);
    assert_eq!(
        m.upstream.request_count(),
        0,
        "main turns never fell back to the upstream LLM"
    );

    // The window opens: the step starts by itself. Its forward_backward is held so chat can
    // be tried while it runs.
    m.tinker.push_script("forward_backward", FutureScript::Hold);
    run_ok(&m.home, &["resume"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while m.tinker.held() == 0 {
        assert!(Instant::now() < deadline, "no step started: {}", m.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let running = m.get("/api/scheduler").await;
    assert_eq!(running["state"], "running", "{running}");
    assert_eq!(running["owner"], "rl.trainer", "{running}");
    let during = m.get("/api/learning").await;
    assert_eq!(during["training"], true, "{during}");

    let started = Instant::now();
    let reply = m
        .chat("madmax-a3", "What's the weather in Paris?", false)
        .await;
    assert!(
        started.elapsed() < PATIENCE,
        "chat waited for the step: {:?}",
        started.elapsed()
    );
    assert_eq!(reply["choices"][0]["message"]["content"], REPLY, "{reply}");
    assert_eq!(m.tinker.held(), 1, "the step was still in flight");

    assert_eq!(m.tinker.release_holds(), 1);
    let done = m
        .wait_for("/api/learning", Duration::from_secs(30), |l| {
            l["step"] == 1 && l["training"] == false
        })
        .await;
    assert_eq!(done["samples"]["consumed"], 2, "{done}");
    assert_eq!(done["samples"]["waiting"], 2, "the two later turns: {done}");
    let steps = done["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{done}");
    assert_eq!(steps[0]["samples"], 2, "{done}");
    assert_eq!(steps[0]["mean_reward"], 1.0, "the judge's score: {done}");
    assert!(steps[0]["error"].is_null(), "{done}");
    let path = steps[0]["sampler_path"].as_str().unwrap();
    assert_eq!(done["serving"], path, "the new weights serve: {done}");
    assert_eq!(m.calls(FORWARD_BACKWARD), 1);
    assert_eq!(m.calls(OPTIM_STEP), 1);
    let run = m.tinker.requests_to(OPTIM_STEP)[0].body["model_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(m.tinker.model(&run).unwrap().weights_version, 1);

    // The window is handed back once the step is done.
    m.wait_for("/api/scheduler", PATIENCE, |s| s["state"] == "open")
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_user_returning_stops_the_step_and_the_next_window_finishes_the_batch() {
    let m = Madmax::start(Windows::IdleOnly).await;
    // The step's forward_backward stays in flight until released.
    m.tinker.push_script("forward_backward", FutureScript::Hold);

    // The user is active (requests just now) and it is not night: no window.
    m.two_turn_session("madmax-c").await;
    let judged = m.wait_judged(2).await;
    let closed = m.get("/api/scheduler").await;
    assert_eq!(closed["state"], "waiting", "{closed}");
    assert_eq!(judged["step"], 0, "{judged}");
    assert_eq!(
        m.calls(FORWARD_BACKWARD),
        0,
        "no step while the user is active"
    );

    // Quiet for the idle threshold opens the idle window; the step starts by itself.
    let deadline = Instant::now() + Duration::from_secs(120);
    while m.tinker.held() == 0 {
        assert!(
            Instant::now() < deadline,
            "no step in the idle window: {}",
            m.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let running = m.get("/api/scheduler").await;
    assert_eq!(running["state"], "running", "{running}");
    assert_eq!(running["owner"], "rl.trainer", "{running}");
    assert_eq!(m.get("/api/learning").await["training"], true);

    // The user comes back: their request is answered at once and closes the window.
    let back = Instant::now();
    let reply = m.chat("madmax-c2", "Hello, how are you?", false).await;
    assert_eq!(reply["choices"][0]["message"]["content"], REPLY, "{reply}");
    assert!(back.elapsed() < PATIENCE, "chat waited for the step");
    let told = m
        .wait_for("/api/scheduler", PATIENCE, |s| {
            s["stopping"] == "rl.trainer"
        })
        .await;
    assert_ne!(told["state"], "open", "{told}");
    // forward_backward answers; the step stops before optim_step.
    assert_eq!(m.tinker.release_holds(), 1);
    let stopped = m
        .wait_for("/api/learning", PATIENCE, |l| l["training"] == false)
        .await;
    assert!(
        back.elapsed() < PATIENCE,
        "the step took {:?} to stop",
        back.elapsed()
    );
    assert_eq!(stopped["step"], 0, "{stopped}");
    assert_eq!(stopped["samples"]["consumed"], 0, "{stopped}");
    assert_eq!(stopped["samples"]["waiting"], 3, "batch kept: {stopped}");
    assert!(stopped["steps"].as_array().unwrap().is_empty(), "{stopped}");
    assert_eq!(m.calls(OPTIM_STEP), 0, "stopped before optim_step");
    let fb = m.tinker.requests_to(FORWARD_BACKWARD);
    assert_eq!(fb.len(), 1);
    let run = fb[0].body["model_id"].as_str().unwrap().to_owned();
    assert_eq!(m.tinker.model(&run).unwrap().weights_version, 0);
    m.wait_for("/api/scheduler", PATIENCE, |s| {
        s["stopping"].is_null() && s["state"] == "waiting"
    })
    .await;

    // The next idle window trains the kept batch: only optim_step is left to do, on the
    // gradients forward_backward already computed.
    let done = m
        .wait_for("/api/learning", Duration::from_secs(150), |l| {
            l["step"] == 1
        })
        .await;
    assert_eq!(done["samples"]["consumed"], 2, "{done}");
    assert_eq!(
        done["samples"]["waiting"], 1,
        "the returning user's turn: {done}"
    );
    let steps = done["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{done}");
    assert_eq!(steps[0]["samples"], 2, "{done}");
    assert_eq!(m.calls(FORWARD_BACKWARD), 1, "no second forward_backward");
    assert_eq!(m.calls(OPTIM_STEP), 1);
    assert_eq!(m.tinker.model(&run).unwrap().weights_version, 1);
}
