use super::*;
use crate::secrets::{BackendChoice, Secret, SecretSource, SecretStore};

type TestResult = Result<(), Box<dyn std::error::Error>>;

struct Home {
    _dir: tempfile::TempDir,
    paths: Paths,
    store: SecretStore,
}

fn home() -> Result<Home, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let paths = Paths::new(dir.path())?;
    let store = SecretStore::new(&paths, BackendChoice::File);
    Ok(Home {
        _dir: dir,
        paths,
        store,
    })
}

fn load_text(h: &Home, text: &str) -> Result<Loaded, ConfigError> {
    std::fs::write(&h.paths.config, text).map_err(|source| ConfigError::Write {
        path: h.paths.config.clone(),
        source,
    })?;
    Config::load(&h.paths)
}

fn err_text(r: Result<impl std::fmt::Debug, ConfigError>) -> String {
    match r {
        Ok(v) => format!("unexpected success: {v:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn missing_file_gives_defaults() -> TestResult {
    let h = home()?;
    let loaded = Config::load(&h.paths)?;
    let c = &loaded.config;
    assert!(loaded.warnings.is_empty());
    assert_eq!(c.mode, Mode::SkillsOnly);
    assert_eq!(c.llm.api, LlmApi::Openai);
    assert_eq!(c.llm.api_base, "");
    assert_eq!(
        (
            c.llm.connect_timeout_secs,
            c.llm.first_byte_timeout_secs,
            c.llm.request_timeout_secs
        ),
        (10, 120, 600)
    );
    assert_eq!(
        (c.proxy.host.as_str(), c.proxy.port, c.proxy.max_body_mb),
        ("127.0.0.1", 30000, 32)
    );
    assert_eq!(c.session.idle_timeout_minutes, 30.0);
    assert_eq!(
        (c.injection.token_budget, c.injection.placement),
        (1200, Placement::User)
    );
    assert_eq!((c.context_window, c.max_context_tokens), (0, 0));
    assert_eq!((c.skills.top_k, c.skills.task_specific_top_k), (3, 2));
    assert_eq!(c.rl.prm_url, "https://api.openai.com/v1");
    assert_eq!(c.scheduler.sleep_start.to_string(), "23:00");
    assert_eq!(c.scheduler.sleep_end.to_string(), "07:00");
    assert_eq!(c.claw_type, ClawType::Openclaw);
    // The default names OpenClaw, but nobody chose it: start connects nothing.
    assert_eq!(c.chosen_agent(), None);
    assert_eq!(c.skills_dir(&h.paths), h.paths.skills);
    assert_eq!(
        load_text(&h, "# only a comment\n")?.config,
        Config::default()
    );
    Ok(())
}

#[test]
fn legacy_aliases() -> TestResult {
    let h = home()?;
    let c = load_text(
        &h,
        "mode: auto\nconfigure_openclaw: false\nbedrock_region: eu-west-1\nrl:\n  tinker_base_url: https://tinker.example/v1\n",
    )?
    .config;
    assert_eq!(c.mode, Mode::Madmax);
    assert_eq!(c.claw_type, ClawType::None);
    assert_eq!(c.llm.bedrock_region, "eu-west-1");
    assert_eq!(c.rl.base_url, "https://tinker.example/v1");

    // An explicit claw_type wins over the legacy switch.
    let c = load_text(
        &h,
        "configure_openclaw: false\nclaw_type: hermes\nmode: madmax\n",
    )?
    .config;
    assert_eq!((c.claw_type, c.mode), (ClawType::Hermes, Mode::Madmax));
    assert_eq!(c.chosen_agent(), Some(ClawType::Hermes));
    let chosen = |text: &str| load_text(&h, text).map(|l| l.config.chosen_agent());
    assert_eq!(
        chosen("configure_openclaw: true\n")?,
        Some(ClawType::Openclaw)
    );
    assert_eq!(chosen("configure_openclaw: false\n")?, None);
    assert_eq!(chosen("claw_type: none\n")?, None);

    let loaded = load_text(
        &h,
        "rl:\n  tinker_api_key: tk-legacy-value-1234\n  prm_api_key: prm-x\n",
    )?;
    assert_eq!(
        loaded.legacy_secrets.get("rl.api_key"),
        Some(&Secret::new("tk-legacy-value-1234"))
    );
    assert_eq!(
        loaded.legacy_secrets.get("rl.prm_api_key"),
        Some(&Secret::new("prm-x"))
    );
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("metaclaw config set rl.api_key"))
    );
    assert!(
        !loaded.warnings.iter().any(|w| w.contains("unknown")),
        "{:?}",
        loaded.warnings
    );
    Ok(())
}

#[test]
fn sleep_times_quoted_unquoted_and_sexagesimal() -> TestResult {
    let h = home()?;
    let c = load_text(
        &h,
        "scheduler:\n  sleep_start: 23:30\n  sleep_end: '6:45'\n",
    )?
    .config;
    assert_eq!(c.scheduler.sleep_start.to_string(), "23:30");
    assert_eq!(c.scheduler.sleep_end.to_string(), "06:45");
    // What a YAML 1.1 writer produced for an unquoted 23:00.
    let c = load_text(&h, "scheduler:\n  sleep_start: 1380\n")?.config;
    assert_eq!(c.scheduler.sleep_start.to_string(), "23:00");
    let e = err_text(load_text(&h, "scheduler:\n  sleep_start: 25:00\n"));
    assert!(
        e.contains("scheduler.sleep_start") && e.contains("line 2"),
        "{e}"
    );
    let e = err_text(load_text(&h, "scheduler:\n  sleep_start: '07:00'\n"));
    assert!(
        e.contains("scheduler.sleep_end") && e.contains("must differ"),
        "{e}"
    );
    let e = err_text(load_text(
        &h,
        "scheduler:\n  calendar:\n    poll_minutes: 0\n",
    ));
    assert!(e.contains("scheduler.calendar.poll_minutes"), "{e}");
    for bad in ["0", "500"] {
        let e = err_text(load_text(
            &h,
            &format!("memory:\n  max_injected_units: {bad}\n"),
        ));
        assert!(e.contains("memory.max_injected_units"), "{e}");
        assert!(e.contains("between 1 and 20"), "{e}");
    }
    let c = load_text(&h, "memory:\n  max_injected_units: 20\n")?.config;
    assert_eq!(c.memory.max_injected_units, 20);
    // Standing rules: on by default (300 tokens each), 0 turns them off, at most 4,000.
    let c = load_text(&h, "skills:\n  top_k: 3\n")?.config;
    assert_eq!(
        (c.memory.profile_tokens, c.skills.standing_tokens),
        (300, 300)
    );
    let c = load_text(
        &h,
        "memory:\n  profile_tokens: 0\nskills:\n  standing_tokens: 0\n",
    )?
    .config;
    assert_eq!((c.memory.profile_tokens, c.skills.standing_tokens), (0, 0));
    for key in ["memory:\n  profile_tokens", "skills:\n  standing_tokens"] {
        let e = err_text(load_text(&h, &format!("{key}: 4001\n")));
        let name = key.replace(":\n  ", ".");
        assert!(e.contains(&name) && e.contains("between 0 and 4000"), "{e}");
    }
    let c = load_text(&h, "scheduler:\n  gate_background_learning: yes\n")?.config;
    assert!(c.scheduler.gate_background_learning);
    assert_eq!(c.scheduler.calendar.calendars, ["primary"]);
    Ok(())
}

#[test]
fn bad_yaml_names_the_file_and_line() -> TestResult {
    let h = home()?;
    let e = err_text(load_text(
        &h,
        "mode: rl\nllm:\n  model_id: [unclosed\n  api: openai\n",
    ));
    assert!(e.contains("config.yaml"), "{e}");
    assert!(e.contains("line "), "{e}");
    Ok(())
}

#[test]
fn wrong_types_and_values_name_the_key() -> TestResult {
    let h = home()?;
    for (text, key, extra) in [
        ("proxy:\n  port: abc\n", "proxy.port", "line 2"),
        ("proxy:\n  port: 0\n", "proxy.port", "1 and 65535"),
        ("proxy:\n  max_body_mb: 2048\n", "proxy.max_body_mb", "1024"),
        ("mode: banana\n", "mode", "skills_only"),
        ("llm:\n  api: grpc\n", "llm.api", "anthropic"),
        ("llm:\n  api_base: ftp://x\n", "llm.api_base", "http"),
        ("skills:\n  enabled: maybe\n", "skills.enabled", "boolean"),
        (
            "injection:\n  placement: middle\n",
            "injection.placement",
            "system",
        ),
        (
            "session:\n  idle_timeout_minutes: 0\n",
            "session.idle_timeout_minutes",
            "greater than 0",
        ),
        (
            "memory:\n  extractor_api: grpc\n",
            "memory.extractor_api",
            "anthropic",
        ),
    ] {
        let e = err_text(load_text(&h, text));
        assert!(e.contains(key) && e.contains(extra), "{text:?} -> {e}");
    }
    Ok(())
}

#[test]
fn idle_timeout_takes_fractions_of_a_minute() -> TestResult {
    let h = home()?;
    let c = load_text(&h, "session:\n  idle_timeout_minutes: 0.05\n")?.config;
    assert_eq!(c.session.idle_timeout_minutes, 0.05);
    let c = load_text(&h, "session:\n  idle_timeout_minutes: 45\n")?.config;
    assert_eq!(c.session.idle_timeout_minutes, 45.0);
    Ok(())
}

#[test]
fn yes_no_booleans_load() -> TestResult {
    let h = home()?;
    let c = load_text(
        &h,
        "skills:\n  enabled: no\nwechat:\n  enabled: yes\nmemory:\n  enabled: on\n",
    )?
    .config;
    assert!(!c.skills.enabled && c.wechat.enabled && c.memory.enabled);
    Ok(())
}

#[test]
fn unknown_keys_warn_with_a_suggestion() -> TestResult {
    let h = home()?;
    let loaded = load_text(
        &h,
        "proxy:\n  prot: 1234\nfancy: 1\nllm:\n  api_key: sk-abcdefghijkl\n",
    )?;
    assert_eq!(loaded.config.proxy.port, 30000);
    let w = loaded.warnings.join("\n");
    assert!(
        w.contains("`proxy.prot`") && w.contains("`proxy.port`"),
        "{w}"
    );
    assert!(w.contains("`fancy`"), "{w}");
    assert!(!w.contains("unknown key `llm.api_key`"), "{w}");
    Ok(())
}

#[test]
fn fallbacks_load_with_their_secret_accounts() -> TestResult {
    let h = home()?;
    let loaded = load_text(
        &h,
        "llm:\n  fallbacks:\n    - name: backup\n      api: anthropic\n      api_base: https://api.anthropic.com\n      api_key: sk-ant-plaintext-1\n",
    )?;
    let f = &loaded.config.llm.fallbacks;
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].api, f[0].key_account().as_str()),
        (LlmApi::Anthropic, "llm.fallbacks.backup.api_key")
    );
    assert!(
        loaded
            .legacy_secrets
            .contains_key("llm.fallbacks.backup.api_key")
    );
    let e = err_text(load_text(
        &h,
        "llm:\n  fallbacks:\n    - name: a b\n      api_base: http://x\n",
    ));
    assert!(
        e.contains("llm.fallbacks[0].name") || e.contains("llm.fallbacks.0.name"),
        "{e}"
    );
    Ok(())
}

#[test]
fn set_get_unset_round_trip_keeps_other_keys() -> TestResult {
    let h = home()?;
    std::fs::write(
        &h.paths.config,
        "# mine\nmode: rl\ncustom_section:\n  x: 1\n",
    )?;
    assert_eq!(
        set(&h.paths, "llm.model_id", "kimi-k2", &h.store)?,
        SetOutcome::Written {
            key: "llm.model_id".into(),
            value: "kimi-k2".into()
        }
    );
    set(&h.paths, "scheduler.sleep_start", "22:15", &h.store)?;
    set(
        &h.paths,
        "llm.fallbacks",
        r#"[{"name":"b","api_base":"http://127.0.0.1:9/v1"}]"#,
        &h.store,
    )?;
    assert_eq!(get(&h.paths, "llm.model_id", &h.store)?, "kimi-k2");
    assert_eq!(get(&h.paths, "scheduler.sleep_start", &h.store)?, "22:15");
    assert_eq!(get(&h.paths, "mode", &h.store)?, "rl");
    assert_eq!(get(&h.paths, "proxy.port", &h.store)?, "30000");
    assert!(get(&h.paths, "llm.fallbacks", &h.store)?.contains("name: b"));

    let text = std::fs::read_to_string(&h.paths.config)?;
    assert!(text.contains("custom_section"), "{text}");
    assert!(
        !text.contains("proxy"),
        "defaults must not be frozen in: {text}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&h.paths.config)?.permissions().mode() & 0o777,
            0o600
        );
    }

    assert_eq!(
        unset(&h.paths, "llm.model_id", &h.store)?,
        UnsetOutcome::Removed
    );
    assert_eq!(
        unset(&h.paths, "llm.model_id", &h.store)?,
        UnsetOutcome::NotSet
    );
    assert_eq!(get(&h.paths, "llm.model_id", &h.store)?, "");
    assert_eq!(get(&h.paths, "mode", &h.store)?, "rl");
    Ok(())
}

#[test]
fn set_coerces_by_schema_type() -> TestResult {
    let h = home()?;
    set(&h.paths, "skills.enabled", "no", &h.store)?;
    set(&h.paths, "memory.enabled", "ON", &h.store)?;
    set(&h.paths, "llm.model_id", "0123", &h.store)?;
    set(&h.paths, "rl.learning_rate", "2e-5", &h.store)?;
    set(
        &h.paths,
        "proxy.allowed_hosts",
        "[a.example, b.example]",
        &h.store,
    )?;
    let c = Config::load(&h.paths)?.config;
    assert!(!c.skills.enabled && c.memory.enabled);
    assert_eq!(c.llm.model_id, "0123");
    assert!((c.rl.learning_rate - 2e-5).abs() < 1e-12);
    assert_eq!(c.proxy.allowed_hosts, ["a.example", "b.example"]);
    Ok(())
}

#[test]
fn set_rejects_bad_values_and_unknown_keys() -> TestResult {
    let h = home()?;
    let e = err_text(set(&h.paths, "proxy.port", "abc", &h.store));
    assert!(e.contains("proxy.port") && e.contains("integer"), "{e}");
    let e = err_text(set(&h.paths, "proxy.port", "70000", &h.store));
    assert!(e.contains("proxy.port"), "{e}");
    let e = err_text(set(&h.paths, "mode", "banana", &h.store));
    assert!(e.contains("mode") && e.contains("madmax"), "{e}");
    let e = err_text(set(&h.paths, "scheduler.sleep_end", "23:00", &h.store));
    assert!(e.contains("scheduler.sleep_end"), "{e}");
    let e = err_text(set(&h.paths, "llm.modelid", "x", &h.store));
    assert!(
        e.contains("unknown config key `llm.modelid`") && e.contains("`llm.model_id`"),
        "{e}"
    );
    let e = err_text(set(&h.paths, "scheduler", "5", &h.store));
    assert!(
        e.contains("section") && e.contains("scheduler.sleep_start"),
        "{e}"
    );
    // git would read it as its option: refused when set, not when the sync runs.
    let e = err_text(set(
        &h.paths,
        "skills.sync.remote",
        "--upload-pack=touch /tmp/x",
        &h.store,
    ));
    assert!(
        e.contains("skills.sync.remote") && e.contains("starting with `-`"),
        "{e}"
    );
    assert!(!h.paths.config.exists(), "a rejected edit must not write");
    Ok(())
}

#[test]
fn secrets_go_to_the_store_never_the_file() -> TestResult {
    let h = home()?;
    std::fs::write(
        &h.paths.config,
        "llm:\n  api_key: sk-plain-legacy-9999\n  model_id: m\n",
    )?;
    assert_eq!(get(&h.paths, "llm.api_key", &h.store)?, "sk-p****9999");
    let out = set(&h.paths, "llm.api_key", "sk-new-secret-value-42", &h.store)?;
    assert_eq!(
        out,
        SetOutcome::Secret {
            account: "llm.api_key".into(),
            stored_in: SecretSource::File
        }
    );
    let text = std::fs::read_to_string(&h.paths.config)?;
    assert!(!text.contains("sk-"), "{text}");
    assert!(text.contains("model_id: m"), "{text}");
    assert_eq!(get(&h.paths, "llm.api_key", &h.store)?, "sk-n****e-42");
    assert_eq!(
        h.store.get("llm.api_key")?,
        Some(Secret::new("sk-new-secret-value-42"))
    );

    set(&h.paths, "rl.tinker_api_key", "short", &h.store)?;
    assert_eq!(get(&h.paths, "rl.api_key", &h.store)?, "****");
    assert_eq!(get(&h.paths, "opd.teacher_api_key", &h.store)?, "(not set)");

    let shown = show(&h.paths, &h.store)?;
    assert!(shown.contains("sk-n****e-42 (file)"), "{shown}");
    assert!(!shown.contains("sk-new-secret"), "{shown}");
    assert!(shown.contains("teacher_api_key: (not set)"), "{shown}");

    assert_eq!(
        unset(&h.paths, "llm.api_key", &h.store)?,
        UnsetOutcome::Removed
    );
    assert_eq!(get(&h.paths, "llm.api_key", &h.store)?, "(not set)");
    Ok(())
}

#[test]
fn overrides_apply_in_memory_only() -> TestResult {
    let h = home()?;
    set(&h.paths, "proxy.port", "31000", &h.store)?;
    let mut c = Config::load(&h.paths)?.config;
    c.apply(Overrides {
        mode: Mode::parse("auto"),
        port: Some(32000),
    });
    assert_eq!((c.mode, c.proxy.port), (Mode::Madmax, 32000));
    assert_eq!(Config::load(&h.paths)?.config.proxy.port, 31000);
    Ok(())
}

mod llm_endpoints {
    use std::time::Duration;

    use metaclaw_proxy::seams::Protocol;

    use super::*;
    use crate::llm::{embedding_endpoint, evolver_endpoint, extractor_endpoint};

    fn main_llm(c: &mut Config) {
        c.llm.api = LlmApi::Anthropic;
        c.llm.api_base = "https://main.example".into();
        c.llm.model_id = "main-model".into();
        c.llm.extra_headers.insert("x-team".into(), "a".into());
    }

    fn key(ep: &crate::llm::Endpoint) -> Option<&str> {
        ep.api_key.as_ref().map(Secret::expose)
    }

    #[test]
    fn nothing_configured_resolves_nothing() -> TestResult {
        let h = home()?;
        let c = Config::default();
        assert!(evolver_endpoint(&c, &h.store).is_none());
        assert!(embedding_endpoint(&c, &h.store).is_none());
        assert!(extractor_endpoint(&c, &h.store).is_none());
        Ok(())
    }

    #[test]
    fn extractor_has_its_own_model_and_key_or_inherits_the_main_llm() -> TestResult {
        let h = home()?;
        h.store.set("llm.api_key", "sk-main-key-123456")?;
        let mut c = Config::default();
        main_llm(&mut c);
        c.rl.evolver_model = "rl-model".into();
        let ep = extractor_endpoint(&c, &h.store).ok_or("no endpoint")?;
        assert_eq!(
            (ep.model.as_str(), ep.protocol),
            ("main-model", Protocol::Anthropic)
        );
        assert_eq!(
            key(&ep),
            Some("sk-main-key-123456"),
            "the evolver's rl keys do not apply"
        );

        c.memory.extractor_api = "openai".into();
        c.memory.extractor_api_base = "https://cheap.example/v1".into();
        assert!(
            extractor_endpoint(&c, &h.store).is_none(),
            "a base alone never borrows the main model"
        );
        c.memory.extractor_model = "small".into();
        h.store
            .set("memory.extractor_api_key", "sk-extractor-987654")?;
        let ep = extractor_endpoint(&c, &h.store).ok_or("no endpoint")?;
        assert_eq!(
            (ep.base_url.as_str(), ep.model.as_str(), ep.protocol),
            ("https://cheap.example/v1", "small", Protocol::Openai)
        );
        assert_eq!(key(&ep), Some("sk-extractor-987654"));
        assert!(
            ep.extra_headers.is_empty(),
            "main headers stay with the main host"
        );
        Ok(())
    }

    #[test]
    fn evolver_inherits_the_main_llm() -> TestResult {
        let h = home()?;
        h.store.set("llm.api_key", "sk-main-key-123456")?;
        let mut c = Config::default();
        main_llm(&mut c);
        let ep = evolver_endpoint(&c, &h.store).ok_or("no endpoint")?;
        assert_eq!(ep.protocol, Protocol::Anthropic);
        assert_eq!(ep.base_url, "https://main.example");
        assert_eq!(ep.model, "main-model");
        assert_eq!(key(&ep), Some("sk-main-key-123456"));
        assert_eq!(ep.extra_headers, [("x-team".to_owned(), "a".to_owned())]);
        assert_eq!(ep.timeout, Duration::from_secs(c.llm.request_timeout_secs));
        assert!(!format!("{ep:?}").contains("sk-main"), "{ep:?}");

        // A model alone switches models at the main provider; the rl model is next in line.
        c.rl.evolver_model = "rl-model".into();
        assert_eq!(
            evolver_endpoint(&c, &h.store).ok_or("none")?.model,
            "rl-model"
        );
        c.skills.evolver_model = "cheap-model".into();
        c.skills.evolver_api = "openai".into();
        let ep = evolver_endpoint(&c, &h.store).ok_or("no endpoint")?;
        assert_eq!(
            (ep.model.as_str(), ep.protocol),
            ("cheap-model", Protocol::Openai)
        );
        assert_eq!(key(&ep), Some("sk-main-key-123456"));
        Ok(())
    }

    #[test]
    fn evolver_prefers_skills_over_rl_over_llm() -> TestResult {
        let h = home()?;
        h.store.set("llm.api_key", "sk-main-key-123456")?;
        h.store.set("rl.evolver_api_key", "sk-rl-key-123456")?;
        let mut c = Config::default();
        main_llm(&mut c);
        c.rl.evolver_api_base = "https://rl.example/v1".into();
        c.rl.evolver_model = "rl-model".into();
        let ep = evolver_endpoint(&c, &h.store).ok_or("no endpoint")?;
        assert_eq!(ep.base_url, "https://rl.example/v1");
        assert_eq!(ep.model, "rl-model");
        assert_eq!(
            ep.protocol,
            Protocol::Openai,
            "the reference's evolver spoke OpenAI"
        );
        assert_eq!(key(&ep), Some("sk-rl-key-123456"));
        assert!(
            ep.extra_headers.is_empty(),
            "main headers stay with the main host"
        );

        // Without its own model, the rl base does not borrow the main model.
        c.rl.evolver_model.clear();
        assert!(evolver_endpoint(&c, &h.store).is_none());

        c.skills.evolver_api_base = "https://evolver.example".into();
        assert!(
            evolver_endpoint(&c, &h.store).is_none(),
            "a base without a model of its level resolves nothing"
        );
        c.skills.evolver_model = "evo-model".into();
        let ep = evolver_endpoint(&c, &h.store).ok_or("no endpoint")?;
        assert_eq!(ep.base_url, "https://evolver.example");
        assert_eq!(ep.model, "evo-model");
        assert_eq!(ep.protocol, Protocol::Anthropic, "inherits llm.api");
        assert_eq!(
            key(&ep),
            None,
            "neither the rl nor the main key goes to another host"
        );
        h.store.set("skills.evolver_api_key", "sk-evo-key-123456")?;
        assert_eq!(
            evolver_endpoint(&c, &h.store).ok_or("none")?.api_key,
            Some(Secret::new("sk-evo-key-123456"))
        );
        Ok(())
    }

    #[test]
    fn embeddings_use_their_own_base_or_an_openai_main_llm() -> TestResult {
        let h = home()?;
        h.store.set("llm.api_key", "sk-main-key-123456")?;
        let mut c = Config::default();
        main_llm(&mut c);
        assert!(
            embedding_endpoint(&c, &h.store).is_none(),
            "anthropic has no embeddings"
        );

        c.llm.api = LlmApi::Openai;
        let ep = embedding_endpoint(&c, &h.store).ok_or("no endpoint")?;
        assert_eq!(ep.base_url, "https://main.example");
        assert_eq!(ep.model, crate::llm::DEFAULT_EMBEDDING_MODEL);
        assert_eq!(ep.protocol, Protocol::Openai);
        assert_eq!(key(&ep), Some("sk-main-key-123456"));

        c.skills.embedding_api_base = "https://embed.example/v1".into();
        c.skills.embedding_model = "e-small".into();
        let ep = embedding_endpoint(&c, &h.store).ok_or("no endpoint")?;
        assert_eq!(
            (ep.base_url.as_str(), ep.model.as_str()),
            ("https://embed.example/v1", "e-small")
        );
        assert_eq!(key(&ep), None);
        assert!(ep.extra_headers.is_empty());
        h.store
            .set("skills.embedding_api_key", "sk-embed-key-1234")?;
        let ep = embedding_endpoint(&c, &h.store).ok_or("no endpoint")?;
        assert_eq!(key(&ep), Some("sk-embed-key-1234"));
        Ok(())
    }

    #[test]
    fn evolver_settings_load_and_validate() -> TestResult {
        let h = home()?;
        let loaded = load_text(
            &h,
            "skills:\n  evolver_api: anthropic\n  evolver_api_base: https://e.example\n  embedding_model: m\n",
        )?;
        assert_eq!(loaded.config.skills.evolver_api, "anthropic");
        assert_eq!(loaded.config.skills.embedding_model, "m");
        let e = err_text(load_text(&h, "skills:\n  evolver_api: gemini\n"));
        assert!(
            e.contains("skills.evolver_api") && e.contains("gemini"),
            "{e}"
        );
        let e = err_text(load_text(&h, "skills:\n  embedding_api_base: ftp://x\n"));
        assert!(e.contains("skills.embedding_api_base"), "{e}");
        assert_eq!(
            crate::config::secret_account("skills.evolver_api_key").as_deref(),
            Some("skills.evolver_api_key")
        );
        Ok(())
    }
}

#[test]
fn semantic_retrieval_knobs_default_load_set_and_validate() -> TestResult {
    let h = home()?;
    let c = Config::default();
    assert_eq!(c.skills.retrieval_mode, SkillRetrieval::Hybrid);
    assert_eq!(c.skills.embedding_source(), EmbeddingSource::Local);
    assert!(c.skills.embedding_download);
    assert!((c.skills.min_similarity - 0.3).abs() < 1e-6);
    assert_eq!(c.skills.embedding_timeout_ms, 1000);
    assert_eq!(c.skills.review, metaclaw_skills::evolve::Review::Auto);
    // An embeddings API of its own makes `auto` the API; `local` wins over it.
    let c = load_text(&h, "skills:\n  embedding_api_base: http://127.0.0.1:9/v1\n")?.config;
    assert_eq!(c.skills.embedding_source(), EmbeddingSource::Api);
    let c = load_text(
        &h,
        "skills:\n  embedding_api_base: http://127.0.0.1:9/v1\n  embedding_source: local\n  embedding_download: false\n",
    )?
    .config;
    assert_eq!(c.skills.embedding_source(), EmbeddingSource::Local);
    assert!(!c.skills.embedding_download);

    let c = load_text(
        &h,
        "skills:\n  retrieval_mode: hybrid\n  min_similarity: 0.45\n  embedding_timeout_ms: 250\n",
    )?
    .config;
    assert_eq!(c.skills.retrieval_mode, SkillRetrieval::Hybrid);
    assert!((c.skills.min_similarity - 0.45).abs() < 1e-6);
    assert_eq!(c.skills.embedding_timeout_ms, 250);
    let c = load_text(
        &h,
        "skills:\n  retrieval_mode: embedding\n  min_similarity: 1\n",
    )?
    .config;
    assert_eq!(c.skills.retrieval_mode, SkillRetrieval::Embedding);
    assert!(
        (c.skills.min_similarity - 1.0).abs() < 1e-6,
        "an integer is a cosine too"
    );

    for (text, key, why) in [
        (
            "skills:\n  min_similarity: 1.5\n",
            "skills.min_similarity",
            "between -1 and 1",
        ),
        (
            "skills:\n  min_similarity: high\n",
            "skills.min_similarity",
            "",
        ),
        (
            "skills:\n  embedding_timeout_ms: 0\n",
            "skills.embedding_timeout_ms",
            "greater than 0",
        ),
        (
            "skills:\n  retrieval_mode: vectors\n",
            "skills.retrieval_mode",
            "hybrid",
        ),
        ("skills:\n  review: later\n", "skills.review", "ask"),
    ] {
        let e = err_text(load_text(&h, text));
        assert!(e.contains(key) && e.contains(why), "{text}: {e}");
    }

    std::fs::remove_file(&h.paths.config)?;
    set(&h.paths, "skills.min_similarity", "0.5", &h.store)?;
    set(&h.paths, "skills.embedding_timeout_ms", "800", &h.store)?;
    set(&h.paths, "skills.retrieval_mode", "embedding", &h.store)?;
    set(&h.paths, "skills.review", "ask", &h.store)?;
    let c = Config::load(&h.paths)?.config;
    assert_eq!(c.skills.review, metaclaw_skills::evolve::Review::Ask);
    assert!((c.skills.min_similarity - 0.5).abs() < 1e-6);
    assert_eq!(c.skills.embedding_timeout_ms, 800);
    assert_eq!(c.skills.retrieval_mode, SkillRetrieval::Embedding);
    let e = err_text(set(&h.paths, "skills.min_similarity", "2", &h.store));
    assert!(e.contains("skills.min_similarity"), "{e}");
    Ok(())
}

#[test]
fn prices_load_set_and_refuse_what_is_not_a_price() -> TestResult {
    let h = home()?;
    let c = load_text(
        &h,
        "prices:\n  qwen-plus: {input: 0.4, output: 1.2, cache_read: 0.08}\n",
    )?
    .config;
    let qwen = c.prices.get("qwen-plus").ok_or("qwen-plus missing")?;
    assert_eq!(
        (qwen.input, qwen.output, qwen.cache_read),
        (0.4, 1.2, Some(0.08))
    );
    assert_eq!(qwen.cache_write, None);

    for (bad, says) in [
        (
            "prices:\n  m: {input: -1, output: 2}\n",
            "per million tokens",
        ),
        ("prices:\n  m: {input: 1, output: 2, inptu: 3}\n", "inptu"),
        ("prices:\n  m: {input: 1}\n", "output"),
    ] {
        let e = err_text(load_text(&h, bad));
        assert!(e.contains("prices") && e.contains(says), "{bad}: {e}");
    }

    std::fs::remove_file(&h.paths.config)?;
    set(
        &h.paths,
        "prices",
        "{gpt-4o: {input: 2.5, output: 10, cache_read: 1.25}}",
        &h.store,
    )?;
    let c = Config::load(&h.paths)?.config;
    assert_eq!(
        c.prices.get("gpt-4o").map(|p| p.cache_read),
        Some(Some(1.25))
    );
    let e = err_text(set(
        &h.paths,
        "prices",
        "{m: {input: x, output: 1}}",
        &h.store,
    ));
    assert!(e.contains("prices"), "{e}");
    let c = Config::load(&h.paths)?.config;
    assert!(
        c.prices.contains_key("gpt-4o"),
        "a rejected edit keeps the file"
    );
    Ok(())
}

#[test]
fn storage_retention_defaults_to_ninety_days_and_refuses_what_cannot_work() -> TestResult {
    let h = home()?;
    let c = load_text(&h, "mode: skills_only\n")?.config;
    assert_eq!(
        (c.storage.keep_turn_bodies_days, c.storage.max_db_mb),
        (90, 0)
    );
    assert!(c.storage.active());
    let c = load_text(&h, "storage:\n  keep_turn_bodies_days: 0\n")?.config;
    assert!(
        !c.storage.active(),
        "0 days and no size limit: kept forever"
    );
    let c = load_text(
        &h,
        "storage:\n  keep_turn_bodies_days: 0\n  max_db_mb: 500\n",
    )?
    .config;
    assert!(c.storage.active());
    let e = err_text(load_text(&h, "storage:\n  max_db_mb: 3\n"));
    assert!(
        e.contains("storage.max_db_mb") && e.contains("at least 10"),
        "{e}"
    );
    let e = err_text(load_text(&h, "storage:\n  keep_turn_bodies_days: 40000\n"));
    assert!(e.contains("storage.keep_turn_bodies_days"), "{e}");
    let e = err_text(load_text(&h, "storage:\n  keep_turn_bodies_days: -1\n"));
    assert!(e.contains("keep_turn_bodies_days"), "{e}");
    Ok(())
}

#[test]
fn the_team_member_name_is_a_valid_skill_name_part() {
    let member = |name: &str| {
        SkillsSync {
            name: name.into(),
            ..SkillsSync::default()
        }
        .member()
    };
    assert_eq!(member("Ann  O'Neil"), "ann-o-neil");
    assert_eq!(member("--x..y--"), "x-y");
    assert_eq!(member("abcdefghijklmnopqrs.t"), "abcdefghijklmnopqrs");
    assert_eq!(member("..."), "me");
}

#[test]
fn updates_are_looked_for_daily_unless_never_and_a_manifest_must_be_a_url() -> TestResult {
    let h = home()?;
    let c = load_text(&h, "mode: skills_only\n")?.config;
    assert_eq!(c.updates.check, super::UpdateCheck::Daily);
    assert_eq!(c.updates.manifest_url(), None);
    let c = load_text(
        &h,
        "updates:\n  check: never\n  manifest_url: https://example.org/metaclaw/latest.json\n",
    )?
    .config;
    assert_eq!(c.updates.check, super::UpdateCheck::Never);
    assert_eq!(
        c.updates.manifest_url().as_deref(),
        Some("https://example.org/metaclaw/latest.json")
    );
    let e = err_text(load_text(
        &h,
        "updates:\n  manifest_url: example.org/latest.json\n",
    ));
    assert!(
        e.contains("updates.manifest_url") && e.contains("http(s) URL"),
        "{e}"
    );
    let e = err_text(load_text(
        &h,
        "updates:\n  manifest_url: https://me:s3cret-pass@example.org/latest.json\n",
    ));
    assert!(
        e.contains("updates.manifest_url") && e.contains("password") && !e.contains("s3cret"),
        "{e}"
    );
    let e = err_text(load_text(&h, "updates:\n  check: weekly\n"));
    assert!(e.contains("updates.check") || e.contains("weekly"), "{e}");
    Ok(())
}
