use super::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn home() -> Result<(tempfile::TempDir, Paths), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let paths = Paths::new(dir.path())?;
    Ok((dir, paths))
}

#[test]
fn file_backend_round_trip_with_private_file() -> TestResult {
    let (_dir, paths) = home()?;
    let store = SecretStore::new(&paths, BackendChoice::File);
    assert_eq!(store.backend(), Backend::File);
    assert_eq!(store.get("llm.api_key")?, None);
    assert_eq!(
        store.set("llm.api_key", "sk-file-secret-123")?,
        SecretSource::File
    );
    assert_eq!(
        store.lookup("llm.api_key")?,
        Some((Secret::new("sk-file-secret-123"), SecretSource::File))
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&paths.secrets_fallback_file)?
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert!(store.delete("llm.api_key")?);
    assert!(!store.delete("llm.api_key")?);
    assert_eq!(store.get("llm.api_key")?, None);
    Ok(())
}

#[test]
fn precedence_env_then_store_then_legacy_config() -> TestResult {
    let (_dir, paths) = home()?;
    let env = BTreeMap::from([("METACLAW_LLM_API_KEY".to_owned(), "from-env".to_owned())]);
    let legacy = BTreeMap::from([
        ("llm.api_key".to_owned(), Secret::new("from-config")),
        ("rl.api_key".to_owned(), Secret::new("legacy-rl")),
    ]);
    let store =
        SecretStore::build(&paths, BackendChoice::File, Env::Fixed(env)).with_legacy(legacy);
    store.set("llm.api_key", "from-file")?;
    store.set("rl.prm_api_key", "prm-file")?;
    assert_eq!(store.source_of("llm.api_key")?, Some(SecretSource::Env));
    assert_eq!(store.get("llm.api_key")?, Some(Secret::new("from-env")));
    assert_eq!(store.source_of("rl.prm_api_key")?, Some(SecretSource::File));
    assert_eq!(
        store.lookup("rl.api_key")?,
        Some((Secret::new("legacy-rl"), SecretSource::Config))
    );
    assert_eq!(store.get("opd.teacher_api_key")?, None);
    Ok(())
}

#[test]
fn env_var_names() {
    assert_eq!(env_var("llm.api_key"), "METACLAW_LLM_API_KEY");
    assert_eq!(env_var("proxy.api_key"), "METACLAW_PROXY_API_KEY");
    assert_eq!(
        env_var("llm.fallbacks.open-router.api_key"),
        "METACLAW_LLM_FALLBACKS_OPEN_ROUTER_API_KEY"
    );
}

#[test]
fn service_is_scoped_to_a_relocated_home() -> TestResult {
    let (_dir, paths) = home()?;
    let store = SecretStore::new(&paths, BackendChoice::File);
    assert_eq!(
        store.service(),
        format!("metaclaw:{}", paths.home.display())
    );
    Ok(())
}

#[test]
fn proxy_key_is_generated_once() -> TestResult {
    let (_dir, paths) = home()?;
    let store = SecretStore::new(&paths, BackendChoice::File);
    let first = ensure_proxy_key(&store)?;
    assert!(first.expose().starts_with("mc-") && first.expose().len() == 35);
    assert_eq!(ensure_proxy_key(&store)?, first);
    assert_eq!(store.source_of(PROXY_KEY)?, Some(SecretSource::File));
    Ok(())
}

#[test]
fn secrets_stay_out_of_debug_and_errors() -> TestResult {
    let (_dir, paths) = home()?;
    let legacy = BTreeMap::from([(
        "llm.api_key".to_owned(),
        Secret::new("sk-very-secret-value"),
    )]);
    let store = SecretStore::new(&paths, BackendChoice::File).with_legacy(legacy);
    assert!(!format!("{store:?}").contains("very-secret"));
    std::fs::write(
        &paths.secrets_fallback_file,
        "llm.api_key: [sk-very-secret-value\n",
    )?;
    let err = store
        .get("llm.api_key")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("secrets.yaml"), "{err}");
    assert!(!err.contains("very-secret"), "{err}");
    assert!(matches!(store.set("x", ""), Err(SecretError::Empty(_))));
    Ok(())
}

#[test]
fn backend_choice_parsing() {
    assert_eq!(BackendChoice::parse("FILE").ok(), Some(BackendChoice::File));
    assert_eq!(BackendChoice::parse("").ok(), Some(BackendChoice::Auto));
    assert!(matches!(
        BackendChoice::parse("vault"),
        Err(SecretError::BadBackend(_))
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn async_wrappers_use_the_blocking_pool() -> TestResult {
    let (_dir, paths) = home()?;
    let store = SecretStore::new(&paths, BackendChoice::File);
    store
        .set_async("rl.api_key", Secret::new("tinker-key-0001"))
        .await?;
    assert_eq!(
        store.get_async("rl.api_key").await?,
        Some(Secret::new("tinker-key-0001"))
    );
    assert!(store.delete_async("rl.api_key").await?);
    Ok(())
}

/// Runs against the real OS keychain when `METACLAW_TEST_KEYCHAIN=1`, and then fails rather
/// than skips when none works.
#[test]
fn os_keychain_round_trip() -> TestResult {
    if std::env::var("METACLAW_TEST_KEYCHAIN").as_deref() != Ok("1") {
        return Ok(());
    }
    let (_dir, paths) = home()?;
    let auto = SecretStore::new(&paths, BackendChoice::Auto);
    assert_eq!(
        auto.backend(),
        Backend::Keychain,
        "no usable keychain found"
    );
    let store = SecretStore::new(&paths, BackendChoice::Keychain);
    assert_eq!(
        store.set("llm.api_key", "sk-keychain-test-1234")?,
        SecretSource::Keychain
    );
    assert_eq!(
        store.lookup("llm.api_key")?,
        Some((Secret::new("sk-keychain-test-1234"), SecretSource::Keychain))
    );
    assert!(!paths.secrets_fallback_file.exists());
    let key = ensure_proxy_key(&store)?;
    assert_eq!(store.get(PROXY_KEY)?, Some(key));
    assert!(store.delete("llm.api_key")?);
    assert!(store.delete(PROXY_KEY)?);
    assert_eq!(store.get("llm.api_key")?, None);
    Ok(())
}
