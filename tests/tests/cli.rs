//! The `metaclaw` binary: start/status/stop/config, exit codes, secrets kept out of files, and
//! a kill -9 under load that leaves an intact database.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::daemon::{Home, PROXY_KEY, free_port, run_with_stdin, stdout, wait_healthy};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::{Value, json};

#[test]
fn not_running_is_exit_3() {
    let home = Home::new("");
    let o = home.run(&["status"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stdout(&o).contains("not running"));
    let o = home.run(&["status", "--json"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&o)).unwrap(),
        json!({"running": false})
    );
    assert_eq!(home.run(&["stop"]).status.code(), Some(3));
}

#[test]
fn usage_errors_are_exit_2() {
    let home = Home::new("");
    assert_eq!(home.run(&["start", "--bogus"]).status.code(), Some(2));
    assert_eq!(
        home.run(&["start", "--mode", "banana"]).status.code(),
        Some(2)
    );
}

#[test]
fn config_edits_keep_the_files_comments() {
    let original = "# my MetaClaw\nmode: skills_only  # for now\nllm:\n  # my provider\n  api_base: https://a.example/v1\n  model_id: m1\n  api_key: sk-plaintext-to-move-123456\n";
    let home = Home::new(original);
    let o = home.run(&["config", "set", "llm.model_id", "m2"]);
    assert!(o.status.success(), "{o:?}");
    let o = home.run(&["config", "set", "proxy.port", "31999"]);
    assert!(o.status.success(), "{o:?}");
    // Moving the plaintext key out of the file removes that line only.
    let o = home.run(&["config", "set", "llm.api_key", "sk-now-in-the-store-123456"]);
    assert!(o.status.success(), "{o:?}");
    let text = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(
        text.starts_with("# my MetaClaw\nmode: skills_only  # for now\nllm:\n  # my provider\n  api_base: https://a.example/v1\n  model_id: m2\n"),
        "{text}"
    );
    assert!(!text.contains("sk-"), "{text}");
    assert_eq!(
        stdout(&home.run(&["config", "get", "proxy.port"])).trim(),
        "31999"
    );
}

#[test]
fn config_set_get_unset_and_secrets_never_in_the_file() {
    let home = Home::new("");
    let o = home.run(&["config", "set", "llm.model_id", "gpt-test"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        stdout(&home.run(&["config", "get", "llm.model_id"])).trim(),
        "gpt-test"
    );
    // The legacy form.
    assert!(
        home.run(&["config", "proxy.port", "31999"])
            .status
            .success()
    );
    assert_eq!(stdout(&home.run(&["config", "proxy.port"])).trim(), "31999");
    let o = home.run(&["config", "set", "proxy.port", "abc"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("proxy.port"));

    let secret = "sk-very-secret-value-123456";
    assert!(
        home.run(&["config", "set", "llm.api_key", secret])
            .status
            .success()
    );
    let file = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(!file.contains(secret), "secret leaked into config.yaml");
    let shown = stdout(&home.run(&["config", "get", "llm.api_key"]));
    assert!(!shown.contains(secret) && shown.contains("sk-v"), "{shown}");
    assert!(!stdout(&home.run(&["config", "show"])).contains(secret));
    assert!(
        home.run(&["config", "unset", "llm.model_id"])
            .status
            .success()
    );

    // A secret can come from stdin instead of the command line.
    let o = home.run_with_stdin(
        &["config", "set", "rl.prm_api_key"],
        "sk-from-stdin-abcdef123\n",
    );
    assert!(o.status.success(), "{o:?}");
    let secrets = std::fs::read_to_string(home.path().join("secrets.yaml")).unwrap();
    assert!(secrets.contains("sk-from-stdin-abcdef123"));
    let config = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(!config.contains("sk-from-stdin"));
    let o = home.run_with_stdin(&["config", "set", "llm.model_id"], "x\n");
    assert_eq!(o.status.code(), Some(2), "only secrets may be prompted for");
    assert_eq!(
        stdout(&home.run(&["config", "path"])).trim(),
        home.path().join("config.yaml").display().to_string()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn daemon_start_status_stop_and_the_key_goes_upstream() {
    let fake = FakeUpstream::start(FakeOptions {
        api_key: Some("sk-up".into()),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n",
        fake.base_url_openai()
    ));
    let h = home.run(&["config", "set", "llm.api_key", "sk-up"]);
    assert!(h.status.success());
    let o = home.start_daemon().await;
    assert!(stdout(&o).contains("started in the background"));

    let r: Value = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(PROXY_KEY)
        .json(&json!({"model":"x","messages":[{"role":"user","content":"via daemon"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["choices"][0]["message"]["content"], "Echo: via daemon");

    let o = home.run(&["status", "--json"]);
    assert!(o.status.success(), "{o:?}");
    let s: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(s["running"], true);
    assert_eq!(s["requests"], 1);
    assert_eq!(s["mode"], "skills_only");
    assert_eq!(s["upstreams"][0]["key_source"], "file");
    let text = stdout(&home.run(&["status"]));
    assert!(
        text.contains("running") && text.contains("1 served"),
        "{text}"
    );

    let o = home.run(&["stop"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(home.run(&["status"]).status.code(), Some(3));
    assert!(!home.path().join("run/metaclaw.pid").exists());
    // The turn was drained to the database on the clean stop.
    let store = metaclaw_store::Store::open_read_only(&home.path().join("metaclaw.db")).unwrap();
    assert_eq!(store.stats().unwrap().turns, 1);
    let installed = std::fs::read_dir(home.path().join("skills"))
        .unwrap()
        .count();
    assert!(
        installed >= 40,
        "start installed the built-in skills ({installed})"
    );
    let o = home.run(&["logs", "-n", "50"]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("MetaClaw is serving"), "{}", stdout(&o));
    assert!(
        !stdout(&o).contains("sk-up"),
        "the upstream key never reaches the log"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_under_load_leaves_an_intact_database() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\nproxy:\n  port: {port}\n",
        fake.base_url_openai()
    ));
    let mut child = home
        .cmd("file", &["start", "--headless"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    wait_healthy(&client, &base, "metaclaw did not start").await;
    // 8 clients hammering; kill -9 once 200 requests have succeeded.
    let ok = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..8 {
        let (client, base, ok) = (client.clone(), base.clone(), ok.clone());
        tasks.push(tokio::spawn(async move {
            for j in 0..10_000 {
                let r = client
                    .post(format!("{base}/v1/chat/completions"))
                    .bearer_auth(PROXY_KEY)
                    .header("x-session-id", format!("load-{i}"))
                    .json(&json!({"model":"x","stream": j % 2 == 0,"messages":[{"role":"user","content":format!("n{j}")}]}))
                    .send()
                    .await;
                match r {
                    Ok(r) if r.status() == 200 => {
                        let _ = r.bytes().await;
                        ok.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    _ => return,
                }
            }
        }));
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while ok.load(std::sync::atomic::Ordering::Relaxed) < 200 {
        assert!(
            std::time::Instant::now() < deadline,
            "load did not get going"
        );
        tokio::time::sleep(Duration::from_millis(5)).await; // watching a counter, bounded
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    for t in tasks {
        let _ = t.await;
    }
    let db = home.path().join("metaclaw.db");
    let store = metaclaw_store::Store::open_read_only(&db).unwrap();
    store.integrity_check().unwrap();
    let turns = store.stats().unwrap().turns;
    assert!(turns > 0, "turns committed before the kill survive");
    assert!(turns as usize <= ok.load(std::sync::atomic::Ordering::Relaxed) + 8);
    // A restart opens the same database and serves again.
    drop(store);
    let mut again = home
        .cmd("file", &["start", "--headless"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_healthy(&client, &base, "metaclaw did not restart after kill -9").await;
    let o = home.run(&["stop"]);
    assert!(o.status.success(), "{o:?}");
    again.wait().unwrap();
}

/// The OS keychain for real: `config set` stores the upstream key there and the daemon reads it
/// back. Runs where the test command provides a Secret Service (`METACLAW_TEST_KEYCHAIN=1`, as
/// scripts/test.sh does inside a private D-Bus session with gnome-keyring); elsewhere the
/// keychain cannot be reached without touching the user's own.
#[tokio::test(flavor = "multi_thread")]
async fn upstream_key_round_trips_through_the_os_keychain() {
    if std::env::var("METACLAW_TEST_KEYCHAIN").as_deref() != Ok("1") {
        return;
    }
    let key = "sk-keychain-e2e-0123456789";
    let fake = FakeUpstream::start(FakeOptions {
        api_key: Some(key.into()),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\nproxy:\n  port: {port}\n",
        fake.base_url_openai()
    ));
    let with_keychain = |args: &[&str], stdin: Option<&str>| {
        run_with_stdin(home.cmd("keychain", args), stdin.unwrap_or_default())
    };
    let o = with_keychain(&["config", "set", "llm.api_key"], Some(&format!("{key}\n")));
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("keychain"), "{}", stdout(&o));
    assert!(
        !home.path().join("secrets.yaml").exists(),
        "no file fallback when a keychain exists"
    );
    let o = with_keychain(&["start", "--daemon"], None);
    assert!(o.status.success(), "{o:?}");
    let r = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(PROXY_KEY)
        .json(&json!({"model":"x","messages":[{"role":"user","content":"keychain"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        200,
        "the fake accepted the key read from the keychain"
    );
    let s: Value =
        serde_json::from_str(&stdout(&with_keychain(&["status", "--json"], None))).unwrap();
    assert_eq!(s["upstreams"][0]["key_source"], "keychain");
    assert!(with_keychain(&["stop"], None).status.success());
    assert!(
        with_keychain(&["config", "unset", "llm.api_key"], None)
            .status
            .success()
    );
    let shown = stdout(&with_keychain(&["config", "get", "llm.api_key"], None));
    assert!(shown.contains("not set"), "{shown}");
}

#[test]
fn skills_list_show_search_work_on_files_without_a_running_engine() {
    let home = Home::new("");
    let o = home.run(&["skills", "list", "--json"]);
    assert!(o.status.success(), "{o:?}");
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let skills = v["skills"].as_array().unwrap();
    assert!(skills.len() >= 40, "the built-in bank was installed");
    assert!(skills.iter().all(|s| s["source"] == "builtin"));
    assert!(home.path().join("skills/trip-planning/SKILL.md").is_file());

    let o = home.run(&[
        "skills",
        "search",
        "what's the latest news about the election",
    ]);
    let out = stdout(&o);
    let injected: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with('*') && !l.starts_with("* ="))
        .collect();
    assert_eq!(injected.len(), 1, "{out}");
    assert!(injected[0].contains("news-and-current-events"), "{out}");
    assert!(
        stdout(&home.run(&["skills", "search", "thanks!"])).contains("nothing would be injected")
    );

    // The user's edit survives the next run that installs built-ins.
    let file = home.path().join("skills/trip-planning/SKILL.md");
    let edited = std::fs::read_to_string(&file)
        .unwrap()
        .replace("# ", "# My ");
    std::fs::write(&file, &edited).unwrap();
    let shown = stdout(&home.run(&["skills", "show", "trip-planning"]));
    assert!(shown.contains("# My "), "{shown}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    assert_eq!(
        home.run(&["skills", "show", "no-such-skill"]).status.code(),
        Some(1)
    );
}

#[test]
fn memory_commands_work_on_the_database_without_a_running_engine() {
    let home = Home::new("");
    let o = home.run(&[
        "memory",
        "add",
        "The user's laptop runs Debian 13 with KDE.",
        "--kind",
        "project_state",
        "--pin",
    ]);
    assert!(o.status.success(), "{o:?}");
    let id = stdout(&o)
        .trim()
        .trim_start_matches("remembered ")
        .to_string();
    assert_eq!(
        home.run(&["memory", "add", "x", "--kind", "mood"])
            .status
            .code(),
        Some(2)
    );

    let listed = stdout(&home.run(&["memory", "list"]));
    assert!(
        listed.contains(&id) && listed.contains("[pinned]"),
        "{listed}"
    );
    let found = stdout(&home.run(&["memory", "search", "which Debian version"]));
    assert!(
        found.contains("Debian 13") && found.contains("debian"),
        "{found}"
    );

    assert!(
        home.run(&[
            "memory",
            "edit",
            &id,
            "The laptop runs Debian 13 with GNOME."
        ])
        .status
        .success()
    );
    let shown = stdout(&home.run(&["memory", "show", &id]));
    assert!(
        shown.contains("GNOME") && shown.contains("KDE"),
        "history keeps the old text: {shown}"
    );

    let export = home.run(&["memory", "export"]);
    assert!(export.status.success());
    let file = home.path().join("export.jsonl");
    std::fs::write(&file, &export.stdout).unwrap();
    assert!(
        home.run(&["memory", "forget", &id, "--purge"])
            .status
            .success()
    );
    assert!(!stdout(&home.run(&["memory", "list"])).contains(&id));
    let o = home.run(&["memory", "import", file.to_str().unwrap()]);
    assert!(stdout(&o).contains("imported 1"), "{o:?}");
    assert!(stdout(&home.run(&["memory", "list"])).contains("GNOME"));
    let stats: Value = serde_json::from_str(&stdout(&home.run(&["memory", "stats"]))).unwrap();
    assert_eq!(
        (stats["active"].as_u64(), stats["pinned"].as_u64()),
        (Some(1), Some(1))
    );

    // Two units saying the same thing become one; the pinned one is never touched.
    for _ in 0..2 {
        let o = home.run(&[
            "memory",
            "add",
            "Deploys happen on Tuesdays.",
            "--kind",
            "semantic",
        ]);
        assert!(o.status.success(), "{o:?}");
    }
    let o = home.run(&["memory", "consolidate"]);
    assert!(stdout(&o).contains("1 change(s)"), "{o:?}");
    let stats: Value = serde_json::from_str(&stdout(&home.run(&["memory", "stats"]))).unwrap();
    assert_eq!(
        (stats["active"].as_u64(), stats["superseded"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(stdout(&home.run(&["memory", "list"])).contains("GNOME"));
}

/// `metaclaw skills list | head -1` and `metaclaw logs | head -1`: the reader goes away after
/// one line; the command ends quietly with success instead of panicking or reporting an error.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::{BufRead, BufReader};
    let home = Home::new("");
    // A log far larger than a pipe's buffer, so the writer surely meets the closed pipe.
    let logs = home.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let big: String = (0..20_000)
        .map(|i| format!("2026-12-03T10:00:00Z INFO line {i} of a long log\n"))
        .collect();
    std::fs::write(logs.join("metaclaw.2026-12-03.log"), big).unwrap();
    for args in [&["skills", "list"][..], &["logs", "-n", "20000"][..]] {
        let mut child = home
            .cmd("file", args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first).unwrap();
        // The reader is dropped here, closing the pipe while the output is being written.
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!first.is_empty(), "{args:?}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            !err.to_lowercase().contains("broken pipe"),
            "{args:?}: {err}"
        );
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
}
