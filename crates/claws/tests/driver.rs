//! The shared driver over a temp home, with a test-only `KEY=value` format and agent so
//! it does not depend on the real format editors or adapters.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use metaclaw_claws::doc::EditError;
use metaclaw_claws::driver::{self, Options, Restart, Reverted};
use metaclaw_claws::{
    Adapter, ClawError, CommandOutput, Doc, Edit, Endpoint, Env, Format, Protocol, Runner,
    SystemRunner, Target,
};
use serde_json::Value;

// ---- a test-only format: `KEY=value` lines, `#` comments, one level of keys ----

struct Lines {
    lines: Vec<String>,
}

fn open_lines(_format: Format, text: &str) -> Result<Box<dyn Doc>, EditError> {
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if !t.is_empty() && !t.starts_with('#') && !t.contains('=') {
            return Err(EditError(format!("line {}: expected KEY=value", i + 1)));
        }
    }
    Ok(Box::new(Lines {
        lines: text.lines().map(str::to_owned).collect(),
    }))
}

impl Lines {
    fn find(&self, key: &str) -> Option<usize> {
        self.lines.iter().position(|l| {
            !l.trim_start().starts_with('#')
                && l.split_once('=').is_some_and(|(k, _)| k.trim() == key)
        })
    }
}

impl Doc for Lines {
    fn get(&self, path: &[&str]) -> Option<Value> {
        let [key] = path else { return None };
        let i = self.find(key)?;
        let (_, v) = self.lines[i].split_once('=')?;
        Some(Value::String(v.to_owned()))
    }

    fn set(&mut self, path: &[&str], value: &Value) -> Result<(), EditError> {
        let [key] = path else {
            return Err(EditError("one level only".into()));
        };
        let v = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let line = format!("{key}={v}");
        match self.find(key) {
            Some(i) => self.lines[i] = line,
            None => self.lines.push(line),
        }
        Ok(())
    }

    fn remove(&mut self, path: &[&str]) -> Result<bool, EditError> {
        let [key] = path else {
            return Err(EditError("one level only".into()));
        };
        Ok(match self.find(key) {
            Some(i) => {
                self.lines.remove(i);
                true
            }
            None => false,
        })
    }

    fn render(&self) -> String {
        let mut s = self.lines.join("\n");
        if !s.is_empty() {
            s.push('\n');
        }
        s
    }
}

// ---- a test-only agent ----

struct TestAgent {
    file: PathBuf,
    creates: bool,
    restart: Option<Vec<String>>,
}

impl Adapter for TestAgent {
    fn name(&self) -> &'static str {
        "testclaw"
    }
    fn protocol(&self) -> Protocol {
        Protocol::OpenAi
    }
    fn binary(&self) -> Option<&'static str> {
        Some("testclaw")
    }
    fn config_file(&self, _env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(self.file.clone()))
    }
    fn format(&self) -> Format {
        Format::Dotenv
    }
    fn creates_config(&self) -> bool {
        self.creates
    }
    fn edits(&self, _doc: &dyn Doc, t: &Target) -> Result<Vec<Edit>, String> {
        Ok(vec![
            Edit::set(&["BASE_URL"], Value::String(t.openai_base.clone())),
            Edit::set(&["API_KEY"], Value::String(t.api_key.clone())),
            Edit::set(&["MODEL"], Value::String(t.model.clone())),
            Edit::remove(&["OPENAI_ORG"]),
        ])
    }
    fn read_back(&self, doc: &dyn Doc) -> Option<Endpoint> {
        let s = |k: &str| doc.get(&[k]).and_then(|v| v.as_str().map(str::to_owned));
        Some(Endpoint {
            protocol: Protocol::OpenAi,
            base: s("BASE_URL")?,
            api_key: s("API_KEY").unwrap_or_default(),
            model: s("MODEL").unwrap_or_default(),
        })
    }
    fn restart_command(&self, _env: &Env) -> Option<Vec<String>> {
        self.restart.clone()
    }
    fn notes(&self) -> Vec<String> {
        vec!["a note".into()]
    }
}

#[derive(Clone, Default)]
struct FakeRunner {
    calls: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Runner for FakeRunner {
    fn run(&self, argv: &[String], _timeout: Duration) -> std::io::Result<CommandOutput> {
        self.calls.lock().unwrap().push(argv.to_vec());
        Ok(CommandOutput {
            code: Some(0),
            stdout: String::new(),
            stderr: String::new(),
            timed_out: false,
        })
    }
}

const PROXY_KEY: &str = "mc-proxy-key-0123456789abcdef";
const USER_KEY: &str = "sk-user-provider-key-0123456789";
const ORIGINAL: &str = "# my agent\nBASE_URL=https://api.openai.com/v1\nAPI_KEY=sk-user-provider-key-0123456789\nMODEL=gpt-4o\nOPENAI_ORG=org-1\nTHEME=dark\n";

struct Home {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    bin: PathBuf,
    backups: PathBuf,
    file: PathBuf,
}

fn home() -> Home {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let bin = tmp.path().join("bin");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&bin).unwrap();
    Home {
        file: home.join(".testclaw").join("config.env"),
        backups: home.join(".metaclaw").join("agent-backup"),
        home,
        bin,
        _tmp: tmp,
    }
}

impl Home {
    fn env(&self, runner: Box<dyn Runner>) -> Env {
        Env {
            home: self.home.clone(),
            path: vec![self.bin.clone()],
            vars: HashMap::new(),
            runner,
        }
    }

    fn write_config(&self, text: &str) {
        fs::create_dir_all(self.file.parent().unwrap()).unwrap();
        fs::write(&self.file, text).unwrap();
    }

    /// An executable `name` on the env's PATH running `script`.
    fn tool(&self, name: &str, script: &str) -> PathBuf {
        let p = self.bin.join(name);
        fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
        set_mode(&p, 0o755);
        p
    }

    fn agent(&self, creates: bool) -> TestAgent {
        TestAgent {
            file: self.file.clone(),
            creates,
            restart: Some(vec!["testclaw".into(), "reload".into()]),
        }
    }
}

fn opts() -> Options {
    Options {
        open: open_lines,
        ..Options::default()
    }
}

fn target(port: u16) -> Target {
    Target::local(port, PROXY_KEY, "metaclaw-model")
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn set_mode(p: &Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
}

fn mtime(p: &Path) -> SystemTime {
    fs::metadata(p).unwrap().modified().unwrap()
}

#[test]
fn connect_backs_up_writes_restarts_and_reconnecting_changes_nothing() {
    let h = home();
    h.write_config(ORIGINAL);
    set_mode(&h.file, 0o640);
    h.tool("testclaw", "exit 0");
    let runner = FakeRunner::default();
    let env = h.env(Box::new(runner.clone()));
    let agent = h.agent(false);

    let c = driver::connect_with(&opts(), &agent, &env, &target(30000), &h.backups).unwrap();
    assert!(c.changed && !c.created);
    assert_eq!(c.notes, vec!["a note".to_owned()]);
    let text = fs::read_to_string(&h.file).unwrap();
    assert_eq!(
        text,
        format!(
            "# my agent\nBASE_URL=http://127.0.0.1:30000/v1\nAPI_KEY={PROXY_KEY}\nMODEL=metaclaw-model\nTHEME=dark\n"
        )
    );
    assert_eq!(mode(&h.file), 0o640, "the file's permissions are kept");
    assert!(matches!(c.restart, Restart::Done { .. }), "{:?}", c.restart);
    let calls = runner.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0][0], h.bin.join("testclaw").to_string_lossy());
    assert_eq!(calls[0][1], "reload");

    let dir = h.backups.join("testclaw");
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("0.orig")), 0o600);
    assert_eq!(mode(&dir.join("manifest.json")), 0o600);
    assert_eq!(fs::read(dir.join("0.orig")).unwrap(), ORIGINAL.as_bytes());
    let manifest: Value =
        serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let rec = &manifest["files"][0];
    assert_eq!(rec["existed"], true);
    assert_eq!(rec["keys"].as_array().unwrap().len(), 4);
    assert!(!manifest.to_string().contains(PROXY_KEY));

    // Again: nothing written, nothing restarted.
    let before = mtime(&h.file);
    let again = driver::connect_with(&opts(), &agent, &env, &target(30000), &h.backups).unwrap();
    assert!(!again.changed);
    assert_eq!(again.restart, Restart::NotNeeded);
    assert_eq!(mtime(&h.file), before);
    assert_eq!(runner.calls.lock().unwrap().len(), 1);

    // A new port rewrites the file but never replaces the pre-MetaClaw original.
    let moved = driver::connect_with(&opts(), &agent, &env, &target(30001), &h.backups).unwrap();
    assert!(moved.changed);
    assert_eq!(fs::read(dir.join("0.orig")).unwrap(), ORIGINAL.as_bytes());
    assert_eq!(runner.calls.lock().unwrap().len(), 2);

    // Disconnect: byte for byte the original, its permissions, the backup gone.
    let d = driver::disconnect_with(&opts(), &agent, &env, &h.backups).unwrap();
    assert!(d.changed);
    assert_eq!(d.files[0].action, Reverted::Restored);
    assert_eq!(fs::read(&h.file).unwrap(), ORIGINAL.as_bytes());
    assert_eq!(mode(&h.file), 0o640);
    assert!(!dir.exists());
    assert_eq!(runner.calls.lock().unwrap().len(), 3);

    match driver::disconnect_with(&opts(), &agent, &env, &h.backups) {
        Err(ClawError::NotConnected { agent, .. }) => assert_eq!(agent, "testclaw"),
        other => panic!("expected NotConnected, got {other:?}"),
    }
}

#[test]
fn a_created_file_is_deleted_again_on_disconnect() {
    let h = home();
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = h.agent(true);
    assert!(!h.file.exists());

    let p = driver::preview_with(&opts(), &agent, &env, &target(30000)).unwrap();
    assert!(p.creates);
    assert!(!h.file.exists(), "preview writes nothing");

    let c = driver::connect_with(&opts(), &agent, &env, &target(30000), &h.backups).unwrap();
    assert!(c.changed && c.created);
    assert_eq!(mode(&h.file), 0o600);
    assert!(
        fs::read_to_string(&h.file)
            .unwrap()
            .contains("BASE_URL=http://127.0.0.1:30000/v1")
    );

    let d = driver::disconnect_with(&opts(), &agent, &env, &h.backups).unwrap();
    assert_eq!(d.files[0].action, Reverted::Deleted);
    assert!(!h.file.exists());
    assert!(!h.backups.join("testclaw").exists());
}

#[test]
fn user_edits_after_connect_survive_disconnect() {
    let h = home();
    h.write_config(ORIGINAL);
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = h.agent(false);
    driver::connect_with(&opts(), &agent, &env, &target(30000), &h.backups).unwrap();

    let edited = fs::read_to_string(&h.file)
        .unwrap()
        .replace("THEME=dark", "THEME=light")
        + "EXTRA=1\n";
    fs::write(&h.file, &edited).unwrap();

    let d = driver::disconnect_with(&opts(), &agent, &env, &h.backups).unwrap();
    assert!(matches!(d.files[0].action, Reverted::KeysReverted { .. }));
    let text = fs::read_to_string(&h.file).unwrap();
    assert!(
        text.contains("THEME=light") && text.contains("EXTRA=1"),
        "{text}"
    );
    assert!(
        text.contains("BASE_URL=https://api.openai.com/v1"),
        "{text}"
    );
    assert!(text.contains(&format!("API_KEY={USER_KEY}")), "{text}");
    assert!(
        text.contains("MODEL=gpt-4o") && text.contains("OPENAI_ORG=org-1"),
        "{text}"
    );
    assert!(!text.contains(PROXY_KEY));
    assert!(!h.backups.join("testclaw").exists());
}

#[test]
fn a_file_that_cannot_be_reverted_is_left_alone_with_its_backup() {
    let h = home();
    h.write_config(ORIGINAL);
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = h.agent(false);
    driver::connect_with(&opts(), &agent, &env, &target(30000), &h.backups).unwrap();
    fs::write(&h.file, "this is not KEY=value\nbroken line\n").unwrap();
    let before = (fs::read(&h.file).unwrap(), mtime(&h.file));

    match driver::disconnect_with(&opts(), &agent, &env, &h.backups) {
        Err(e @ ClawError::ChangedSince { .. }) => {
            assert!(e.to_string().contains("no longer parses"), "{e}")
        }
        other => panic!("expected ChangedSince, got {other:?}"),
    }
    assert_eq!((fs::read(&h.file).unwrap(), mtime(&h.file)), before);
    assert!(h.backups.join("testclaw").join("manifest.json").exists());
}

#[test]
fn missing_empty_and_corrupt_configs_are_errors_and_touch_nothing() {
    let h = home();
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = h.agent(false);

    match driver::connect_with(&opts(), &agent, &env, &target(1), &h.backups) {
        Err(ClawError::ConfigMissing { path, .. }) => assert_eq!(path, h.file),
        other => panic!("expected ConfigMissing, got {other:?}"),
    }
    assert!(!h.file.exists());

    for (text, want) in [("  \n", "empty"), ("KEY=1\nnot a pair\n", "corrupt")] {
        h.write_config(text);
        let before = (fs::read(&h.file).unwrap(), mtime(&h.file));
        let err = driver::connect_with(&opts(), &agent, &env, &target(1), &h.backups).unwrap_err();
        match (&err, want) {
            (ClawError::ConfigEmpty { .. }, "empty") => {}
            (ClawError::ConfigCorrupt { detail, .. }, "corrupt") => {
                assert!(detail.contains("line 2"))
            }
            _ => panic!("{want}: got {err:?}"),
        }
        assert_eq!((fs::read(&h.file).unwrap(), mtime(&h.file)), before);
        assert!(!h.backups.exists());
    }
}

#[test]
fn a_corrupt_manifest_stops_connect_before_any_write() {
    let h = home();
    h.write_config(ORIGINAL);
    let dir = h.backups.join("testclaw");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("manifest.json"), "{ half").unwrap();
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = h.agent(false);
    let before = (fs::read(&h.file).unwrap(), mtime(&h.file));
    for err in [
        driver::connect_with(&opts(), &agent, &env, &target(1), &h.backups).unwrap_err(),
        driver::disconnect_with(&opts(), &agent, &env, &h.backups).unwrap_err(),
    ] {
        assert!(matches!(err, ClawError::Backup { .. }), "{err:?}");
    }
    assert_eq!((fs::read(&h.file).unwrap(), mtime(&h.file)), before);
    let s = driver::status_with(&opts(), &agent, &env, &h.backups);
    assert!(s.problem.unwrap().contains("corrupt"));
}

#[test]
fn restart_is_skipped_without_its_program_and_says_so() {
    let h = home();
    h.write_config(ORIGINAL);
    let runner = FakeRunner::default();
    let env = h.env(Box::new(runner.clone()));
    let agent = h.agent(false);
    let c = driver::connect_with(&opts(), &agent, &env, &target(30000), &h.backups).unwrap();
    assert!(c.changed);
    assert!(matches!(c.restart, Restart::ProgramMissing { .. }));
    assert_eq!(c.warnings.len(), 1);
    assert!(runner.calls.lock().unwrap().is_empty());
}

#[test]
fn system_runner_runs_a_real_script_and_a_slow_one_is_a_warning() {
    let h = home();
    h.write_config(ORIGINAL);
    let log = h.home.join("argv.log");
    h.tool("testclaw", &format!("echo \"$@\" > '{}'", log.display()));
    let env = h.env(Box::new(SystemRunner));
    let agent = h.agent(false);
    let c = driver::connect_with(&opts(), &agent, &env, &target(30000), &h.backups).unwrap();
    assert!(matches!(c.restart, Restart::Done { .. }), "{:?}", c.restart);
    assert_eq!(fs::read_to_string(&log).unwrap().trim(), "reload");

    // A failing command: a warning, not an error.
    h.tool("testclaw", "echo 'gateway not running' >&2; exit 3");
    let c = driver::connect_with(&opts(), &agent, &env, &target(30001), &h.backups).unwrap();
    match &c.restart {
        Restart::Failed { code, detail, .. } => {
            assert_eq!(*code, Some(3));
            assert_eq!(detail, "gateway not running");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    assert!(c.warnings[0].contains("exit 3"));

    // A restart that hangs is stopped at its timeout. `exec` so the killed process is the
    // one holding the output pipes (SystemRunner waits for them to close).
    h.tool("testclaw", "exec sleep 10");
    let slow = TestAgent {
        restart: Some(vec!["testclaw".into(), "restart".into()]),
        ..h.agent(false)
    };
    let quick = Options {
        restart_timeout: Duration::from_millis(300),
        ..opts()
    };
    let started = std::time::Instant::now();
    let c = driver::connect_with(&quick, &slow, &env, &target(30002), &h.backups).unwrap();
    assert!(c.changed);
    assert!(
        matches!(c.restart, Restart::TimedOut { .. }),
        "{:?}",
        c.restart
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_failing_restart_that_prints_the_config_shows_no_key() {
    let h = home();
    h.write_config(ORIGINAL);
    // A key of no recognisable shape: only knowing it lets the driver mask it.
    let key = "plain-proxy-secret-0123456789";
    let t = Target::local(30000, key, "m");
    h.tool(
        "testclaw",
        &format!("grep API_KEY '{}' >&2; exit 1", h.file.display()),
    );
    let env = h.env(Box::new(SystemRunner));
    let agent = h.agent(false);
    let c = driver::connect_with(&opts(), &agent, &env, &t, &h.backups).unwrap();
    let shown = format!("{:?} {:?}", c.restart, c.warnings);
    assert!(matches!(c.restart, Restart::Failed { .. }), "{shown}");
    assert!(shown.contains("API_KEY="), "{shown}");
    assert!(!shown.contains(key), "{shown}");

    let d = driver::disconnect_with(&opts(), &agent, &env, &h.backups).unwrap();
    let shown = format!("{:?} {:?}", d.restart, d.warnings);
    assert!(shown.contains("API_KEY="), "{shown}");
    assert!(!shown.contains(USER_KEY) && !shown.contains(key), "{shown}");
}

#[test]
fn preview_masks_secrets_and_writes_nothing() {
    let h = home();
    h.write_config(ORIGINAL);
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = h.agent(false);
    let before = (fs::read(&h.file).unwrap(), mtime(&h.file));
    let p = driver::preview_with(&opts(), &agent, &env, &target(30000)).unwrap();
    assert_eq!((fs::read(&h.file).unwrap(), mtime(&h.file)), before);
    assert!(!h.backups.exists());
    assert!(!p.already_connected && !p.creates);
    let key = p.changes.iter().find(|c| c.key == "API_KEY").unwrap();
    assert_eq!(key.old, Some(Value::String("sk-…6789".into())));
    assert_eq!(key.new, Some(Value::String("mc-…cdef".into())));
    let org = p.changes.iter().find(|c| c.key == "OPENAI_ORG").unwrap();
    assert_eq!(org.new, None);
    assert_eq!(
        p.restart_command,
        Some(vec!["testclaw".into(), "reload".into()])
    );
}

#[test]
fn status_follows_connect_and_disconnect() {
    let h = home();
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = h.agent(false);
    let s = driver::status_with(&opts(), &agent, &env, &h.backups);
    assert!(!s.installed && !s.connected && !s.config_exists);

    h.write_config(ORIGINAL);
    let s = driver::status_with(&opts(), &agent, &env, &h.backups);
    assert!(s.installed && !s.connected && !s.backed_up);
    assert_eq!(s.points_at.unwrap().base, "https://api.openai.com/v1");

    driver::connect_with(&opts(), &agent, &env, &target(30000), &h.backups).unwrap();
    let s = driver::status_with(&opts(), &agent, &env, &h.backups);
    assert!(s.connected && s.backed_up && s.problem.is_none(), "{s:?}");
    // What verify needs: the real key, as the agent will send it.
    let ep = driver::endpoint_with(&opts(), &agent, &env)
        .unwrap()
        .unwrap();
    assert_eq!(ep.api_key, PROXY_KEY);
    let ep = s.points_at.unwrap();
    assert_eq!(ep.base, "http://127.0.0.1:30000/v1");
    assert_eq!(ep.api_key, "mc-…cdef");

    // Pointed elsewhere by hand: backed up but no longer connected, and status says so.
    let edited = fs::read_to_string(&h.file)
        .unwrap()
        .replace("127.0.0.1:30000", "127.0.0.1:9");
    fs::write(&h.file, edited).unwrap();
    let s = driver::status_with(&opts(), &agent, &env, &h.backups);
    assert!(s.backed_up && !s.connected);
    assert!(s.problem.unwrap().contains("no longer points at MetaClaw"));

    driver::disconnect_with(&opts(), &agent, &env, &h.backups).unwrap();
    let s = driver::status_with(&opts(), &agent, &env, &h.backups);
    assert!(!s.connected && !s.backed_up);
    // A key-level revert (the file changed since): every original value is back, though
    // a removed key comes back where the format puts new keys.
    let sorted = |t: &str| {
        let mut l: Vec<String> = t.lines().map(str::to_owned).collect();
        l.sort();
        l
    };
    assert_eq!(
        sorted(&fs::read_to_string(&h.file).unwrap()),
        sorted(ORIGINAL)
    );
}

#[test]
fn a_symlinked_config_stays_a_link() {
    let h = home();
    let real = h.home.join("dotfiles").join("config.env");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::write(&real, ORIGINAL).unwrap();
    fs::create_dir_all(h.file.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &h.file).unwrap();
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = h.agent(false);
    driver::connect_with(&opts(), &agent, &env, &target(30000), &h.backups).unwrap();
    assert!(
        fs::symlink_metadata(&h.file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        fs::read_to_string(&real)
            .unwrap()
            .contains("127.0.0.1:30000")
    );
    driver::disconnect_with(&opts(), &agent, &env, &h.backups).unwrap();
    assert!(
        fs::symlink_metadata(&h.file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(&real).unwrap(), ORIGINAL.as_bytes());
}

#[test]
fn secrets_never_show_in_results_or_errors() {
    let h = home();
    h.write_config(ORIGINAL);
    h.tool("testclaw", "exit 0");
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = h.agent(false);
    let t = target(30000);
    let mut shown = Vec::new();
    let p = driver::preview_with(&opts(), &agent, &env, &t).unwrap();
    shown.push(format!("{p:?}"));
    shown.push(serde_json::to_string(&p).unwrap());
    let c = driver::connect_with(&opts(), &agent, &env, &t, &h.backups).unwrap();
    shown.push(format!("{c:?}"));
    shown.push(serde_json::to_string(&c).unwrap());
    let s = driver::status_with(&opts(), &agent, &env, &h.backups);
    shown.push(format!("{s:?}"));
    shown.push(serde_json::to_string(&s).unwrap());
    shown.push(format!("{t:?}"));
    let d = driver::disconnect_with(&opts(), &agent, &env, &h.backups).unwrap();
    shown.push(format!("{d:?}"));
    shown.push(serde_json::to_string(&d).unwrap());

    // A parser error quoting the offending line.
    fn quoting(_f: Format, text: &str) -> Result<Box<dyn Doc>, EditError> {
        Err(EditError(format!(
            "bad line: {}",
            text.lines().nth(2).unwrap_or_default()
        )))
    }
    let err = driver::connect_with(
        &Options {
            open: quoting,
            ..opts()
        },
        &agent,
        &env,
        &t,
        &h.backups,
    )
    .unwrap_err();
    shown.push(format!("{err:?}"));
    shown.push(err.to_string());

    for s in shown {
        assert!(!s.contains(PROXY_KEY), "proxy key leaked: {s}");
        assert!(!s.contains(USER_KEY), "user key leaked: {s}");
    }
}

// ---- nested keys: a serde_json-backed document and an agent writing two levels down ----

struct Json(Value);

fn open_json(_format: Format, text: &str) -> Result<Box<dyn Doc>, EditError> {
    let v = if text.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(text).map_err(|e| EditError(e.to_string()))?
    };
    Ok(Box::new(Json(v)))
}

impl Doc for Json {
    fn get(&self, path: &[&str]) -> Option<Value> {
        path.iter().try_fold(&self.0, |v, k| v.get(*k)).cloned()
    }

    fn set(&mut self, path: &[&str], value: &Value) -> Result<(), EditError> {
        let (last, parents) = path.split_last().ok_or(EditError("empty path".into()))?;
        let mut v = &mut self.0;
        for k in parents {
            let map = v.as_object_mut().ok_or(EditError("not an object".into()))?;
            v = map
                .entry((*k).to_owned())
                .or_insert_with(|| Value::Object(Default::default()));
        }
        let map = v.as_object_mut().ok_or(EditError("not an object".into()))?;
        map.insert((*last).to_owned(), value.clone());
        Ok(())
    }

    fn remove(&mut self, path: &[&str]) -> Result<bool, EditError> {
        let (last, parents) = path.split_last().ok_or(EditError("empty path".into()))?;
        let mut v = &mut self.0;
        for k in parents {
            match v.get_mut(*k) {
                Some(next) => v = next,
                None => return Ok(false),
            }
        }
        Ok(v.as_object_mut().is_some_and(|m| m.remove(*last).is_some()))
    }

    fn render(&self) -> String {
        serde_json::to_string_pretty(&self.0).unwrap() + "\n"
    }
}

struct NestedAgent(PathBuf);

impl Adapter for NestedAgent {
    fn name(&self) -> &'static str {
        "nestedclaw"
    }
    fn protocol(&self) -> Protocol {
        Protocol::Anthropic
    }
    fn binary(&self) -> Option<&'static str> {
        None
    }
    fn config_file(&self, _env: &Env) -> Result<Option<PathBuf>, ClawError> {
        Ok(Some(self.0.clone()))
    }
    fn format(&self) -> Format {
        Format::Json5
    }
    fn creates_config(&self) -> bool {
        true
    }
    fn edits(&self, _doc: &dyn Doc, t: &Target) -> Result<Vec<Edit>, String> {
        Ok(vec![
            Edit::set(
                &["providers", "metaclaw", "base"],
                Value::String(t.anthropic_base.clone()),
            ),
            Edit::set(
                &["providers", "metaclaw", "key"],
                Value::String(t.api_key.clone()),
            ),
        ])
    }
    fn read_back(&self, _doc: &dyn Doc) -> Option<Endpoint> {
        None
    }
}

#[test]
fn key_level_revert_drops_the_parents_metaclaw_created() {
    let h = home();
    let file = h.home.join(".nested").join("config.json");
    let env = h.env(Box::new(FakeRunner::default()));
    let agent = NestedAgent(file.clone());
    let o = Options {
        open: open_json,
        ..opts()
    };

    // Existing file without `providers`; the user edits another key after connect.
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, "{\"mine\": 1}").unwrap();
    driver::connect_with(&o, &agent, &env, &target(30000), &h.backups).unwrap();
    let now = fs::read_to_string(&file)
        .unwrap()
        .replace("\"mine\": 1", "\"mine\": 2");
    fs::write(&file, now).unwrap();
    driver::disconnect_with(&o, &agent, &env, &h.backups).unwrap();
    let v: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v, serde_json::json!({"mine": 2}));

    // A created file the user added to: it stays, holding only the user's key.
    fs::remove_file(&file).unwrap();
    let c = driver::connect_with(&o, &agent, &env, &target(30000), &h.backups).unwrap();
    assert!(c.created);
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    v["theme"] = Value::String("dark".into());
    fs::write(&file, v.to_string()).unwrap();
    let d = driver::disconnect_with(&o, &agent, &env, &h.backups).unwrap();
    assert!(matches!(d.files[0].action, Reverted::KeysReverted { .. }));
    let v: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v, serde_json::json!({"theme": "dark"}));
}
