//! `metaclaw setup` through the real binary, over a temp HOME with a CoPaw install (its
//! config and a stand-in `copaw` program on PATH) and the fake upstream: non-interactive
//! (connect, start, test request; re-run keeping other settings; a refused key writing
//! nothing; a missing flag), interactive in a pseudo-terminal (hidden key, Ctrl-C), and the
//! import of the Python version's config with its plaintext key.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::daemon::{bin, free_port, stdout};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::Value;

const KEY: &str = "sk-setup-e2e-SECRET-1234567890";
const WRONG_KEY: &str = "sk-setup-e2e-WRONG-0987654321";
const KEY_VAR: &str = "METACLAW_SETUP_TEST_KEY";

/// Settings setup does not ask about; every run must keep them.
fn other_settings(port: u16) -> String {
    format!(
        "proxy:\n  port: {port}\nmemory:\n  scope: work\nskills:\n  top_k: 3\nmy_own_note: keep me\n"
    )
}

/// A machine: `home/` is `$HOME` (CoPaw installed), `mc/` is `$METACLAW_HOME`, `bin/` on PATH.
struct Machine {
    dir: tempfile::TempDir,
    port: u16,
}

impl Machine {
    fn new() -> Machine {
        let dir = tempfile::tempdir().unwrap();
        let m = Machine {
            port: free_port(),
            dir,
        };
        // CoPaw 1.0: the global active model and the built-in provider it names.
        let providers = m.home().join(".copaw.secret/providers");
        std::fs::create_dir_all(providers.join("builtin")).unwrap();
        std::fs::write(
            m.copaw_config(),
            "{\n  \"provider_id\": \"openai\",\n  \"model\": \"gpt-4o\"\n}",
        )
        .unwrap();
        std::fs::write(
            providers.join("builtin/openai.json"),
            r#"{"id": "openai", "base_url": "https://api.openai.com/v1", "api_key": ""}"#,
        )
        .unwrap();
        std::fs::create_dir_all(m.mc()).unwrap();
        std::fs::write(m.config(), other_settings(m.port)).unwrap();
        let bin_dir = m.dir.path().join("bin");
        std::fs::create_dir_all(&bin_dir).unwrap();
        let copaw = bin_dir.join("copaw");
        // Records how it was called (CoPaw has no reload command: setup runs none).
        std::fs::write(
            &copaw,
            format!(
                "#!/bin/sh\necho \"$@\" >> '{}'\nexit 0\n",
                m.dir.path().join("copaw-calls").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&copaw, std::fs::Permissions::from_mode(0o755)).unwrap();
        m
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn mc(&self) -> PathBuf {
        self.dir.path().join("mc")
    }
    fn config(&self) -> PathBuf {
        self.mc().join("config.yaml")
    }
    /// CoPaw's global active model, the main file MetaClaw edits.
    fn copaw_config(&self) -> PathBuf {
        self.home()
            .join(".copaw.secret/providers/active_model.json")
    }
    fn copaw(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.copaw_config()).unwrap()).unwrap()
    }
    /// The CoPaw provider MetaClaw registers.
    fn copaw_provider(&self) -> Value {
        let p = self
            .home()
            .join(".copaw.secret/providers/custom/metaclaw.json");
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    /// `metaclaw ARGS` on this machine, secrets in the 0600 file backend.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args)
            .env("HOME", self.home())
            .env("METACLAW_HOME", self.mc())
            .env("METACLAW_SECRET_BACKEND", "file")
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.dir.path().join("bin").display()),
            )
            .env_remove("METACLAW_LLM_API_KEY")
            .env_remove("METACLAW_PROXY_API_KEY")
            .env_remove("HERMES_HOME")
            .env_remove("XDG_CONFIG_HOME");
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn setup(&self, args: &[&str], key: Option<&str>) -> Output {
        let mut full = vec!["setup", "--non-interactive"];
        full.extend_from_slice(args);
        let mut c = self.cmd(&full);
        match key {
            Some(k) => c.env(KEY_VAR, k),
            None => c.env_remove(KEY_VAR),
        };
        c.output().unwrap()
    }

    /// Every file MetaClaw wrote (config, logs, run files, agent backups), as text.
    fn all_written_text(&self) -> String {
        let mut out = String::new();
        collect_text(&self.mc(), &mut out, &["secrets.yaml"]);
        out
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        // Never leave a daemon behind, whatever the test did.
        let _ = self.run(&["stop"]);
    }
}

fn collect_text(dir: &Path, out: &mut String, skip: &[&str]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if skip.iter().any(|s| p.file_name().is_some_and(|n| n == *s)) {
            continue;
        }
        if p.is_dir() {
            collect_text(&p, out, skip);
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

async fn fake() -> FakeUpstream {
    FakeUpstream::start(FakeOptions {
        api_key: Some(KEY.into()),
        ..FakeOptions::default()
    })
    .await
    .unwrap()
}

/// Runs blocking work (the binary) off the runtime driving the fake upstream.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn non_interactive_setup_connects_copaw_starts_and_a_rerun_keeps_other_settings() {
    let fake = fake().await;
    let base = fake.base_url_openai();
    let m = std::sync::Arc::new(Machine::new());

    let m2 = m.clone();
    let b = base.clone();
    let o = blocking(move || {
        m2.setup(
            &[
                "--provider",
                "custom",
                "--api-base",
                &b,
                "--model",
                "m",
                "--api-key-env",
                KEY_VAR,
                "--agent",
                "copaw",
                "--mode",
                "skills_only",
            ],
            Some(KEY),
        )
    })
    .await;
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("Testing the connection to 127.0.0.1"), "{out}");
    assert!(out.contains("copaw: pointed at MetaClaw"), "{out}");
    assert!(
        out.contains("it loads the new config by itself or on its next start"),
        "{out}"
    );
    assert!(
        !m.dir.path().join("copaw-calls").exists(),
        "setup ran copaw"
    );
    assert!(out.contains("MetaClaw started in the background"), "{out}");
    assert!(out.contains("Test request as copaw sends it: ok"), "{out}");

    // The config: 0600, the answers in it, every other setting kept, no key.
    let text = std::fs::read_to_string(m.config()).unwrap();
    assert_eq!(mode_of(&m.config()), 0o600);
    for expected in [
        "provider: custom",
        "model_id: m",
        "claw_type: copaw",
        "mode: skills_only",
        "scope: work",
        "top_k: 3",
        "my_own_note: keep me",
        &format!("port: {}", m.port),
    ] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
    // The key: in the store, shown masked.
    let shown = stdout(&m.run(&["config", "get", "llm.api_key"]));
    assert_eq!(shown.trim(), "sk-s****7890");

    // CoPaw's active model is MetaClaw's provider, at the proxy with the proxy key.
    let copaw = m.copaw();
    assert_eq!(copaw["provider_id"], "metaclaw");
    assert_eq!(copaw["model"], "m");
    let provider = m.copaw_provider();
    assert_eq!(
        provider["base_url"],
        format!("http://127.0.0.1:{}/v1", m.port)
    );
    assert!(provider["api_key"].as_str().unwrap().starts_with("mc-"));

    // The proxy used the stored key upstream for the test request.
    let chats: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect();
    assert!(!chats.is_empty());
    assert_eq!(
        chats[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );

    // The key is nowhere but the secret store.
    let written = m.all_written_text();
    assert!(written.contains("my_own_note"), "the walk saw the config");
    for (what, text) in [("stdout", &out), ("stderr", &err), ("files", &written)] {
        assert!(!text.contains(KEY), "the key leaked into {what}");
    }

    // (b) A re-run that changes only the model: the daemon restarts on it, every other
    // setting and the stored key stay.
    let m2 = m.clone();
    let o = blocking(move || m2.setup(&["--model", "m2"], None)).await;
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("Stopping the running MetaClaw"), "{out}");
    assert!(out.contains("Test request as copaw sends it: ok"), "{out}");
    let text = std::fs::read_to_string(m.config()).unwrap();
    for expected in [
        "provider: custom",
        &base,
        "model_id: m2",
        "claw_type: copaw",
        "scope: work",
        "top_k: 3",
        "my_own_note: keep me",
    ] {
        assert!(text.contains(expected), "{expected} lost:\n{text}");
    }
    assert_eq!(m.copaw()["model"], "m2");
    assert_eq!(
        stdout(&m.run(&["config", "get", "llm.api_key"])).trim(),
        "sk-s****7890"
    );
    assert!(!out.contains(KEY) && !err.contains(KEY));

    let o = m.run(&["stop"]);
    assert!(o.status.success(), "{o:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_model_server_is_a_preset_that_needs_no_key() {
    // Ollama's OpenAI-compatible server takes no key: the connection test passes without one
    // and none is stored (the preset's base is moved to where the stand-in listens).
    let local = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let base = local.base_url_openai();
    let m = std::sync::Arc::new(Machine::new());
    let m2 = m.clone();
    let o = blocking(move || {
        m2.setup(
            &[
                "--provider",
                "ollama",
                "--api-base",
                &base,
                "--mode",
                "skills_only",
                "--no-start",
            ],
            None,
        )
    })
    .await;
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let text = std::fs::read_to_string(m.config()).unwrap();
    for expected in ["provider: ollama", "model_id: qwen2.5:7b"] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
    assert!(
        stdout(&m.run(&["config", "get", "llm.api_key"]))
            .trim()
            .is_empty()
            || !stdout(&m.run(&["config", "get", "llm.api_key"])).contains("sk-"),
    );
    assert!(
        local
            .requests()
            .iter()
            .any(|r| r.path == "/v1/chat/completions"),
        "the connection test reached the local server"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_or_a_missing_flag_writes_nothing() {
    let fake = fake().await;
    let base = fake.base_url_openai();
    let m = std::sync::Arc::new(Machine::new());
    let config_before = std::fs::read(m.config()).unwrap();
    let copaw_before = std::fs::read(m.copaw_config()).unwrap();

    let m2 = m.clone();
    let b = base.clone();
    let o = blocking(move || {
        m2.setup(
            &[
                "--provider",
                "custom",
                "--api-base",
                &b,
                "--model",
                "m",
                "--api-key-env",
                KEY_VAR,
                "--agent",
                "copaw",
            ],
            Some(WRONG_KEY),
        )
    })
    .await;
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(out.contains("the provider refused the key"), "{out}");
    assert!(err.contains("nothing was written"), "{err}");
    assert!(!out.contains(WRONG_KEY) && !err.contains(WRONG_KEY));
    assert_eq!(std::fs::read(m.config()).unwrap(), config_before);
    assert_eq!(std::fs::read(m.copaw_config()).unwrap(), copaw_before);
    assert!(!m.mc().join("secrets.yaml").exists());
    assert!(!m.mc().join("run/metaclaw.pid").exists(), "nothing started");

    // Nothing configured and no --provider: a usage error naming the flag.
    let o = m.setup(&["--model", "m"], None);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stderr(&o).contains("--provider"), "{}", stderr(&o));
    // A preset that needs a key, and none given or stored.
    let o = m.setup(&["--provider", "openai", "--no-start"], None);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stderr(&o).contains("--api-key-env"), "{}", stderr(&o));
    // An agent that is not installed.
    let o = m.setup(
        &[
            "--provider",
            "custom",
            "--api-base",
            &base,
            "--model",
            "m",
            "--agent",
            "hermes",
            "--skip-test",
            "--no-start",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        stderr(&o).contains("hermes is not installed"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(m.config()).unwrap(), config_before);
}

#[tokio::test(flavor = "multi_thread")]
async fn importing_a_python_config_moves_its_plaintext_key_into_the_store() {
    let fake = fake().await;
    let m = std::sync::Arc::new(Machine::new());
    std::fs::remove_file(m.config()).unwrap();
    // The Python version's file: every key in plain text, beside its other settings.
    let reference = m.dir.path().join("python-config.yaml");
    std::fs::write(
        &reference,
        format!(
            "mode: skills_only\nllm:\n  provider: custom\n  api_base: {}\n  model_id: m\n  api_key: {KEY}\nproxy:\n  port: {}\nmemory:\n  scope: imported\nclaw_type: none\n",
            fake.base_url_openai(),
            m.port
        ),
    )
    .unwrap();
    let m2 = m.clone();
    let r = reference.clone();
    let o =
        blocking(move || m2.setup(&["--import", r.to_str().unwrap(), "--no-start"], None)).await;
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("Moved llm.api_key"), "{out}");
    assert!(out.contains("ok: model m"), "{out}");
    for file in [m.config(), reference.clone()] {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains(KEY),
            "{} still holds the key",
            file.display()
        );
        assert!(text.contains("model_id: m"), "{text}");
    }
    assert!(
        std::fs::read_to_string(m.config())
            .unwrap()
            .contains("scope: imported")
    );
    assert_eq!(
        stdout(&m.run(&["config", "get", "llm.api_key"])).trim(),
        "sk-s****7890"
    );
    assert!(!out.contains(KEY) && !err.contains(KEY));

    // Our own config with a plaintext key (the Python version used the same path).
    std::fs::write(
        m.config(),
        format!(
            "{}llm:\n  api_key: sk-own-plain-1234567890\n",
            other_settings(m.port)
        ),
    )
    .unwrap();
    std::fs::remove_file(m.mc().join("secrets.yaml")).unwrap();
    let o = m.setup(
        &[
            "--provider",
            "custom",
            "--api-base",
            &fake.base_url_openai(),
            "--model",
            "m",
            "--skip-test",
            "--no-start",
        ],
        None,
    );
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).contains("Moved llm.api_key from"),
        "{}",
        stdout(&o)
    );
    let text = std::fs::read_to_string(m.config()).unwrap();
    assert!(
        !text.contains("sk-own-plain") && text.contains("my_own_note"),
        "{text}"
    );
    assert_eq!(
        stdout(&m.run(&["config", "get", "llm.api_key"])).trim(),
        "sk-o****7890"
    );
}

mod pty {
    //! The interactive wizard in a pseudo-terminal, echo on as in a real terminal.

    use super::*;
    use rexpect::process::WaitStatus;
    use rexpect::session::{PtySession, spawn_command};

    const TIMEOUT_MS: u64 = 30_000;

    /// `metaclaw setup ARGS` in a pty with echo on; everything it prints is kept.
    struct Wizard {
        session: PtySession,
        transcript: String,
    }

    impl Wizard {
        fn start(m: &Machine, args: &[&str]) -> Wizard {
            let mut c = m.cmd(&[]);
            let mut script = format!("stty echo; exec '{}' setup", bin().display());
            for a in args {
                script.push_str(&format!(" '{a}'"));
            }
            c.env_remove(KEY_VAR);
            let mut sh = Command::new("/bin/sh");
            sh.arg("-c").arg(script);
            for (k, v) in c.get_envs() {
                match v {
                    Some(v) => sh.env(k, v),
                    None => sh.env_remove(k),
                };
            }
            Wizard {
                session: spawn_command(sh, Some(TIMEOUT_MS)).unwrap(),
                transcript: String::new(),
            }
        }

        /// Waits for `prompt`, then types `answer` and Enter.
        fn answer(&mut self, prompt: &str, answer: &str) {
            self.expect(prompt);
            self.session.send_line(answer).unwrap();
        }

        fn expect(&mut self, text: &str) {
            match self.session.exp_string(text) {
                Ok(before) => {
                    self.transcript.push_str(&before);
                    self.transcript.push_str(text);
                }
                Err(e) => panic!(
                    "waiting for {text:?}: {e}\n--- so far:\n{}",
                    self.transcript
                ),
            }
        }

        /// Reads to the end; the exit code.
        fn finish(&mut self) -> i32 {
            match self.session.exp_eof() {
                Ok(rest) => self.transcript.push_str(&rest),
                Err(e) => panic!("waiting for the end: {e}\n--- so far:\n{}", self.transcript),
            }
            match self.session.process().wait().unwrap() {
                WaitStatus::Exited(_, code) => code,
                other => panic!("{other:?}\n{}", self.transcript),
            }
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn every_question_answered_at_a_terminal_with_the_key_hidden() {
        let fake = fake().await;
        let base = fake.base_url_openai();
        let m = std::sync::Arc::new(Machine::new());
        let m2 = m.clone();
        let (code, transcript) = blocking(move || {
            let mut w = Wizard::start(&m2, &["--no-start"]);
            w.answer("Connect which agents?", "1");
            w.answer("Provider (number or name)", "custom");
            // A base where nothing listens first: the test fails, and "edit" asks again.
            w.answer("Base URL", "http://127.0.0.1:1/v1");
            w.answer("Protocol (openai or anthropic) [openai]", "");
            w.answer("Model", "m");
            w.answer("API key (not shown as you type)", WRONG_KEY);
            w.expect("cannot reach 127.0.0.1:1");
            w.answer("abort)? [key]", "edit");
            w.answer("Provider (number or name) [custom]", "");
            w.answer("Base URL [http://127.0.0.1:1/v1]", &base);
            w.answer("Protocol (openai or anthropic) [openai]", "");
            w.answer("Model [m]", "");
            // The key typed before is kept by Enter; it is wrong, so another is asked for.
            w.answer("API key (not shown as you type) [as entered]", "");
            w.expect("the provider refused the key");
            w.answer("abort)? [key]", "");
            w.answer("API key", KEY);
            w.expect("ok: model m");
            w.answer("Mode [skills_only]", "rl");
            w.expect("Config saved to");
            let code = w.finish();
            (code, w.transcript)
        })
        .await;
        assert_eq!(code, 0, "{transcript}");
        assert!(transcript.contains("copaw"), "{transcript}");
        // Echo is on for ordinary answers (the model typed shows), never for the key.
        assert!(
            transcript.contains("Model [") || transcript.contains("Model: m"),
            "{transcript}"
        );
        assert!(
            transcript.contains("rl\r\n") || transcript.contains("rl\n"),
            "typed answers echo:\n{transcript}"
        );
        assert!(
            !transcript.contains(KEY),
            "the key was echoed:\n{transcript}"
        );
        assert!(
            !transcript.contains(WRONG_KEY),
            "the key was echoed:\n{transcript}"
        );
        assert!(
            transcript.contains("copaw: pointed at MetaClaw"),
            "{transcript}"
        );

        let text = std::fs::read_to_string(m.config()).unwrap();
        for expected in [
            "model_id: m",
            "mode: rl",
            "claw_type: copaw",
            "my_own_note: keep me",
        ] {
            assert!(text.contains(expected), "{expected} missing:\n{text}");
        }
        assert!(!text.contains(KEY));
        assert_eq!(
            stdout(&m.run(&["config", "get", "llm.api_key"])).trim(),
            "sk-s****7890"
        );
        assert_eq!(m.copaw()["model"], "m");

        // A re-run where Enter keeps everything, the key included.
        let m2 = m.clone();
        let (code, transcript) = blocking(move || {
            let mut w = Wizard::start(&m2, &["--no-start", "--skip-test"]);
            w.answer(
                "Connect which agents? (numbers or names, comma-separated) [copaw]",
                "",
            );
            w.answer("Provider (number or name) [custom]", "");
            w.answer("Base URL [", "");
            w.answer("Protocol (openai or anthropic) [openai]", "");
            w.answer("Model [m]", "");
            w.answer("API key (not shown as you type) [stored]", "");
            w.answer("Mode [rl]", "");
            let code = w.finish();
            (code, w.transcript)
        })
        .await;
        assert_eq!(code, 0, "{transcript}");
        assert_eq!(std::fs::read_to_string(m.config()).unwrap(), text);
        assert_eq!(
            stdout(&m.run(&["config", "get", "llm.api_key"])).trim(),
            "sk-s****7890"
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn an_agent_with_a_plugin_is_asked_which_way_and_connected_that_way() {
        let fake = fake().await;
        let base = fake.base_url_openai();
        let m = std::sync::Arc::new(Machine::new());
        let openclaw = m.home().join(".openclaw/openclaw.json");
        std::fs::create_dir_all(openclaw.parent().unwrap()).unwrap();
        std::fs::write(&openclaw, "{\n  \"agents\": {}\n}\n").unwrap();
        let m2 = m.clone();
        let (code, transcript) = blocking(move || {
            let mut w = Wizard::start(&m2, &["--no-start"]);
            w.answer("Connect which agents?", "openclaw");
            w.expect("plugin: MetaClaw runs inside openclaw");
            w.answer("Connect openclaw as (proxy or plugin) [proxy]", "inside");
            w.expect("`inside` is neither proxy nor plugin");
            w.answer("Connect openclaw as (proxy or plugin) [proxy]", "plugin");
            w.answer("Provider (number or name)", "custom");
            w.answer("Base URL", &base);
            w.answer("Protocol (openai or anthropic) [openai]", "");
            w.answer("Model", "m");
            w.answer("API key (not shown as you type)", KEY);
            w.expect("ok: model m");
            w.answer("Mode [skills_only]", "");
            w.expect("openclaw: MetaClaw runs inside it as its plugin");
            let code = w.finish();
            (code, w.transcript)
        })
        .await;
        assert_eq!(code, 0, "{transcript}");
        let written = std::fs::read_to_string(&openclaw).unwrap();
        assert!(
            written.contains("\"contextEngine\": \"metaclaw\"") && !written.contains("metaclaw/m"),
            "{written}"
        );
        // A plugin is not the proxy agent the next start connects.
        let text = std::fs::read_to_string(m.config()).unwrap();
        assert!(text.contains("claw_type: none"), "{text}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn ctrl_c_or_end_of_input_midway_writes_nothing() {
        let m = std::sync::Arc::new(Machine::new());
        let config_before = std::fs::read(m.config()).unwrap();
        let copaw_before = std::fs::read(m.copaw_config()).unwrap();
        let m2 = m.clone();
        let results = blocking(move || {
            let mut results = Vec::new();
            // At an ordinary question.
            let mut w = Wizard::start(&m2, &[]);
            w.answer("Connect which agents?", "copaw");
            w.expect("Provider (number or name)");
            w.session.send_control('c').unwrap();
            results.push((w.finish(), w.transcript));
            // At the hidden key prompt, which has the terminal in raw mode.
            let mut w = Wizard::start(&m2, &[]);
            w.answer("Connect which agents?", "copaw");
            w.answer("Provider (number or name)", "openai");
            w.answer("Base URL", "");
            w.answer("Model", "");
            w.expect("API key");
            w.session.send("sk-half-typed").unwrap();
            w.session.send_control('c').unwrap();
            results.push((w.finish(), w.transcript));
            // End of input (Ctrl-D) at an ordinary question.
            let mut w = Wizard::start(&m2, &[]);
            w.expect("Connect which agents?");
            w.session.send_control('d').unwrap();
            results.push((w.finish(), w.transcript));
            // An interrupt signal while the key prompt waits (as a Ctrl-C that lands before
            // the prompt took the terminal): the terminal is put back and setup stops.
            let mut w = Wizard::start(&m2, &[]);
            w.answer("Connect which agents?", "copaw");
            w.answer("Provider (number or name)", "openai");
            w.answer("Base URL", "");
            w.answer("Model", "");
            w.expect("(not shown as you type): ");
            w.session
                .process_mut()
                .signal(rexpect::process::Signal::SIGINT)
                .unwrap();
            results.push((w.finish(), w.transcript));
            results
        })
        .await;
        let expected = [130, 130, 1, 130];
        for ((code, transcript), want) in results.into_iter().zip(expected) {
            assert_eq!(code, want, "{transcript}");
            assert!(transcript.contains("nothing was written"), "{transcript}");
            assert!(!transcript.contains("sk-half-typed"), "{transcript}");
        }
        assert_eq!(std::fs::read(m.config()).unwrap(), config_before);
        assert_eq!(std::fs::read(m.copaw_config()).unwrap(), copaw_before);
        assert!(!m.mc().join("secrets.yaml").exists());
    }
}

/// The OS keychain for real (`METACLAW_TEST_KEYCHAIN=1`, inside the test script's private
/// D-Bus session): setup stores the key there.
#[tokio::test(flavor = "multi_thread")]
async fn setup_stores_the_key_in_the_os_keychain() {
    if std::env::var("METACLAW_TEST_KEYCHAIN").as_deref() != Ok("1") {
        return;
    }
    let fake = fake().await;
    let base = fake.base_url_openai();
    let m = std::sync::Arc::new(Machine::new());
    let m2 = m.clone();
    let o = blocking(move || {
        let mut c = m2.cmd(&[
            "setup",
            "--non-interactive",
            "--provider",
            "custom",
            "--api-base",
            &base,
            "--model",
            "m",
            "--api-key-env",
            KEY_VAR,
            "--no-start",
        ]);
        c.env("METACLAW_SECRET_BACKEND", "keychain")
            .env(KEY_VAR, KEY);
        c.output().unwrap()
    })
    .await;
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).contains("Stored llm.api_key in the keychain"),
        "{}",
        stdout(&o)
    );
    assert!(!m.mc().join("secrets.yaml").exists());
    let keychain = |args: &[&str]| {
        let mut c = m.cmd(args);
        c.env("METACLAW_SECRET_BACKEND", "keychain");
        c.output().unwrap()
    };
    let shown = stdout(&keychain(&["config", "show"]));
    assert!(
        shown.contains("api_key: sk-s****7890 (keychain)"),
        "{shown}"
    );
    assert!(
        keychain(&["config", "unset", "llm.api_key"])
            .status
            .success()
    );
    let shown = stdout(&keychain(&["config", "get", "llm.api_key"]));
    assert!(shown.contains("not set"), "{shown}");
}
