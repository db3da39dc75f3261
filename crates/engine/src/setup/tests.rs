#![allow(clippy::unwrap_used)]

use super::*;
use crate::config::{Config, LlmApi, Mode};
use crate::paths::Paths;
use crate::secrets::{BackendChoice, Secret, SecretSource, SecretStore};

type TestResult = Result<(), Box<dyn std::error::Error>>;

struct Home {
    dir: tempfile::TempDir,
    paths: Paths,
    store: SecretStore,
}

fn home(config: Option<&str>) -> Home {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::new(dir.path()).unwrap();
    if let Some(text) = config {
        std::fs::write(&paths.config, text).unwrap();
    }
    let store = SecretStore::new(&paths, BackendChoice::File);
    Home { dir, paths, store }
}

fn answers() -> Answers {
    Answers {
        provider: "custom".into(),
        api_base: "http://127.0.0.1:9/v1".into(),
        api: LlmApi::Openai,
        model: "m".into(),
        api_key: Some(Secret::new("sk-setup-unit-1234567890")),
        mode: Mode::SkillsOnly,
        agents: vec!["copaw".into()],
        wechat: false,
    }
}

fn text(h: &Home) -> String {
    std::fs::read_to_string(&h.paths.config).unwrap()
}

const KEPT: &str = "memory:\n  enabled: true\n  scope: work\nskills:\n  top_k: 3\nproxy:\n  port: 31234\nmy_own_key: hello\n";

#[test]
fn current_of_a_fresh_home_is_unconfigured() -> TestResult {
    let h = home(None);
    let c = current(&h.paths, &h.store)?;
    assert!(!c.configured);
    assert_eq!(c.key_source, None);
    assert_eq!(c.answers.provider, "custom");
    assert_eq!(c.answers.mode, Mode::SkillsOnly);
    assert!(c.answers.agents.is_empty());
    Ok(())
}

#[test]
fn apply_writes_only_its_keys_and_a_rerun_reads_them_back() -> TestResult {
    let h = home(Some(KEPT));
    let applied = apply(&h.paths, &h.store, &answers())?;
    assert_eq!(applied.written.len(), 7);
    assert!(matches!(
        applied.key,
        Some(crate::config::SetOutcome::Secret {
            stored_in: SecretSource::File,
            ..
        })
    ));
    let t = text(&h);
    assert!(!t.contains("sk-setup-unit"), "{t}");
    for kept in [
        "scope: work",
        "top_k: 3",
        "port: 31234",
        "my_own_key: hello",
    ] {
        assert!(t.contains(kept), "{kept} lost:\n{t}");
    }
    let config = Config::load(&h.paths)?.config;
    assert!(config.memory.enabled);
    assert_eq!(config.llm.api_base, "http://127.0.0.1:9/v1");
    assert_eq!(config.claw_type.name(), "copaw");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&h.paths.config)?.permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let again = current(&h.paths, &h.store)?;
    assert!(again.configured);
    assert_eq!(again.key_source, Some(SecretSource::File));
    assert_eq!(
        again.answers,
        Answers {
            api_key: None,
            ..answers()
        }
    );

    // A re-run keeping the key, with no agent: claw_type none, the key stays stored.
    let rerun = Answers {
        api_key: None,
        agents: Vec::new(),
        model: "m2".into(),
        ..answers()
    };
    assert!(apply(&h.paths, &h.store, &rerun)?.key.is_none());
    assert_eq!(
        h.store.get("llm.api_key")?.unwrap().expose(),
        "sk-setup-unit-1234567890"
    );
    let config = Config::load(&h.paths)?.config;
    assert_eq!(config.llm.model_id, "m2");
    assert_eq!(config.claw_type.name(), "none");
    assert!(text(&h).contains("my_own_key: hello"));
    Ok(())
}

#[test]
fn a_preset_with_its_own_base_reads_back_as_that_preset() -> TestResult {
    let h = home(None);
    let openai = Answers {
        provider: "openai".into(),
        api_base: "https://api.openai.com/v1".into(),
        ..answers()
    };
    apply(&h.paths, &h.store, &openai)?;
    assert_eq!(current(&h.paths, &h.store)?.answers.provider, "openai");
    Ok(())
}

#[test]
fn wechat_is_written_with_openclaw_recorded_as_the_agent() -> TestResult {
    let h = home(Some(KEPT));
    let with = Answers {
        agents: vec!["copaw".into(), "openclaw".into()],
        wechat: true,
        ..answers()
    };
    apply(&h.paths, &h.store, &with)?;
    let config = Config::load(&h.paths)?.config;
    assert!(config.wechat.enabled);
    assert_eq!(config.claw_type.name(), "openclaw");
    assert!(current(&h.paths, &h.store)?.answers.wechat);
    apply(&h.paths, &h.store, &answers())?;
    assert!(!Config::load(&h.paths)?.config.wechat.enabled);
    Ok(())
}

#[test]
fn bad_answers_write_nothing() -> TestResult {
    let h = home(Some(KEPT));
    let bad = [
        Answers {
            provider: "nope".into(),
            ..answers()
        },
        Answers {
            api_base: String::new(),
            ..answers()
        },
        Answers {
            api_base: "ftp://x".into(),
            ..answers()
        },
        Answers {
            model: " ".into(),
            ..answers()
        },
        Answers {
            agents: vec!["nobody".into()],
            ..answers()
        },
        // WeChat is OpenClaw's channel.
        Answers {
            wechat: true,
            ..answers()
        },
    ];
    for a in bad {
        let e = apply(&h.paths, &h.store, &a).unwrap_err();
        assert!(matches!(e, SetupError::Invalid { .. }), "{e}");
    }
    assert_eq!(text(&h), KEPT);
    assert!(h.store.get("llm.api_key")?.is_none());
    Ok(())
}

#[test]
fn a_refused_key_puts_the_config_back() -> TestResult {
    let h = home(Some(KEPT));
    // The secrets file cannot be written: a directory stands where it should be.
    std::fs::create_dir(&h.paths.secrets_fallback_file)?;
    assert!(apply(&h.paths, &h.store, &answers()).is_err());
    assert_eq!(text(&h), KEPT);

    let fresh = home(None);
    std::fs::create_dir(&fresh.paths.secrets_fallback_file)?;
    assert!(apply(&fresh.paths, &fresh.store, &answers()).is_err());
    assert!(
        !fresh.paths.config.exists(),
        "a config that did not exist stays absent"
    );
    Ok(())
}

#[test]
fn own_plaintext_secrets_move_into_the_store() -> TestResult {
    let h = home(Some(
        "llm:\n  api_key: sk-plain-own-1234567890\n  model_id: x\nrl:\n  tinker_api_key: tk-plain-0987654321\nmy_own_key: 1\n",
    ));
    let mut moved = migrate_own_secrets(&h.paths, &h.store)?;
    moved.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    assert_eq!(
        moved,
        [
            SecretMove::Stored {
                account: "llm.api_key".into(),
                stored_in: SecretSource::File
            },
            SecretMove::Stored {
                account: "rl.api_key".into(),
                stored_in: SecretSource::File
            },
        ]
    );
    let t = text(&h);
    assert!(!t.contains("plain"), "{t}");
    assert!(t.contains("model_id: x") && t.contains("my_own_key"), "{t}");
    assert_eq!(
        h.store.get("rl.api_key")?.unwrap().expose(),
        "tk-plain-0987654321"
    );
    assert!(migrate_own_secrets(&h.paths, &h.store)?.is_empty());
    Ok(())
}

#[test]
fn a_stored_key_wins_over_a_plaintext_copy() -> TestResult {
    let h = home(Some("llm:\n  api_key: sk-plain-old-1234567890\n"));
    h.store.set("llm.api_key", "sk-stored-new-1234567890")?;
    let moved = migrate_own_secrets(&h.paths, &h.store)?;
    assert_eq!(
        moved,
        [SecretMove::KeptStored {
            account: "llm.api_key".into()
        }]
    );
    assert!(!text(&h).contains("sk-plain"));
    assert_eq!(
        h.store.get("llm.api_key")?.unwrap().expose(),
        "sk-stored-new-1234567890"
    );
    Ok(())
}

const REFERENCE: &str = "mode: auto\nllm:\n  provider: kimi\n  api_base: https://api.moonshot.cn/v1\n  model_id: moonshotai/Kimi-K2.5\n  api_key: sk-python-plain-1234567890\nmemory:\n  enabled: true\nrl:\n  prm_api_key: prm-python-plain-123456\nwechat:\n  enabled: false\n";

#[test]
fn importing_into_an_empty_home_copies_the_reference_without_its_keys() -> TestResult {
    let h = home(None);
    let reference = h.dir.path().join("python-config.yaml");
    std::fs::write(&reference, REFERENCE)?;
    let imported = import_reference(&h.paths, &h.store, &reference)?;
    assert!(imported.copied && imported.source_cleaned);
    assert_eq!(imported.secrets.len(), 2);
    for t in [text(&h), std::fs::read_to_string(&reference)?] {
        assert!(!t.contains("plain"), "{t}");
        assert!(
            t.contains("moonshotai/Kimi-K2.5") && t.contains("memory"),
            "{t}"
        );
    }
    assert_eq!(
        h.store.get("llm.api_key")?.unwrap().expose(),
        "sk-python-plain-1234567890"
    );
    assert_eq!(
        h.store.get("rl.prm_api_key")?.unwrap().expose(),
        "prm-python-plain-123456"
    );
    let config = Config::load(&h.paths)?.config;
    assert_eq!(config.mode, Mode::Madmax);
    assert!(config.memory.enabled);
    Ok(())
}

#[test]
fn importing_fills_in_only_what_ours_does_not_set() -> TestResult {
    let h = home(Some(
        "llm:\n  model_id: mine\n  api_base: http://127.0.0.1:9/v1\nmy_own_key: 1\n",
    ));
    h.store.set("llm.api_key", "sk-mine-already-1234567890")?;
    let reference = h.dir.path().join("python-config.yaml");
    std::fs::write(&reference, REFERENCE)?;
    let imported = import_reference(&h.paths, &h.store, &reference)?;
    assert!(!imported.copied);
    assert!(imported.added.contains(&"mode".to_owned()));
    assert!(imported.added.contains(&"memory".to_owned()));
    assert!(imported.added.contains(&"llm.provider".to_owned()));
    assert!(!imported.added.iter().any(|k| k.contains("api_key")));
    assert!(imported.secrets.contains(&SecretMove::KeptStored {
        account: "llm.api_key".into()
    }));
    let config = Config::load(&h.paths)?.config;
    assert_eq!(config.llm.model_id, "mine");
    assert_eq!(config.llm.api_base, "http://127.0.0.1:9/v1");
    assert!(config.memory.enabled);
    assert_eq!(config.mode, Mode::Madmax);
    let t = text(&h);
    assert!(t.contains("my_own_key") && !t.contains("plain"), "{t}");
    assert_eq!(
        h.store.get("llm.api_key")?.unwrap().expose(),
        "sk-mine-already-1234567890"
    );
    Ok(())
}

#[test]
fn importing_our_own_file_migrates_in_place() -> TestResult {
    let h = home(Some(REFERENCE));
    let imported = import_reference(&h.paths, &h.store, &h.paths.config.clone())?;
    assert!(!imported.copied);
    assert_eq!(imported.secrets.len(), 2);
    assert!(!text(&h).contains("plain"));
    Ok(())
}

#[test]
fn an_invalid_reference_changes_nothing() -> TestResult {
    let h = home(Some(KEPT));
    let reference = h.dir.path().join("python-config.yaml");
    std::fs::write(
        &reference,
        "mode: banana\nllm:\n  api_key: sk-python-plain-1234567890\n",
    )?;
    assert!(import_reference(&h.paths, &h.store, &reference).is_err());
    assert_eq!(text(&h), KEPT);
    assert!(h.store.get("llm.api_key")?.is_none());
    assert!(std::fs::read_to_string(&reference)?.contains("plain"));
    Ok(())
}

#[test]
fn the_stored_key_is_tested_only_against_its_own_base() -> TestResult {
    let h = home(Some("llm:\n  api_base: http://127.0.0.1:9/v1\n"));
    h.store.set("llm.api_key", "sk-stored-1234567890")?;
    let config = Config::load(&h.paths)?.config;
    let keep = Answers {
        api_key: None,
        ..answers()
    };
    let t = connection_target(&keep, &config, &h.store)?;
    assert_eq!(t.api_key.unwrap().expose(), "sk-stored-1234567890");
    let elsewhere = Answers {
        api_base: "http://127.0.0.1:8/v1".into(),
        ..keep
    };
    assert!(
        connection_target(&elsewhere, &config, &h.store)?
            .api_key
            .is_none()
    );
    Ok(())
}

#[tokio::test]
async fn a_required_key_that_is_missing_fails_without_a_request() -> TestResult {
    let h = home(None);
    let a = Answers {
        provider: "openai".into(),
        api_key: None,
        ..answers()
    };
    let t = connection_target(&a, &Config::default(), &h.store)?;
    let report = test_connection(&t, true).await;
    assert!(!report.ok);
    assert_eq!(
        report.error.unwrap().kind,
        crate::providers::ErrorKind::Auth
    );
    Ok(())
}
