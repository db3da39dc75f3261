//! `rl.backend: auto` selection, keys and base URLs, legacy keys.
#![allow(clippy::unwrap_used)]

use metaclaw_learn::{BackendKind, BackendSettings, pick_backend};

fn settings(
    backend: &str,
    key: Option<&str>,
    url: Option<&str>,
    env: &[(&str, &str)],
) -> BackendSettings {
    BackendSettings {
        backend: backend.into(),
        api_key: key.map(Into::into),
        base_url: url.map(Into::into),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..BackendSettings::default()
    }
}

#[test]
fn auto_selection_table() {
    use BackendKind::*;
    let cases: Vec<(BackendSettings, BackendKind, &str, &str)> = vec![
        (
            settings("auto", Some("tml-abc"), None, &[]),
            Tinker,
            "tml-abc",
            "https://tinker.thinkingmachines.dev/services/tinker-prod",
        ),
        (
            settings("", Some("sk-mint-abc"), None, &[]),
            Mint,
            "sk-mint-abc",
            "https://mint.macaron.im/train",
        ),
        (
            settings(
                "auto",
                Some("sk-abc"),
                Some("https://mint.macaron.xin/train/"),
                &[],
            ),
            Mint,
            "sk-abc",
            "https://mint.macaron.xin/train",
        ),
        (
            settings(
                "auto",
                None,
                None,
                &[("MINT_API_KEY", "sk-1"), ("TINKER_API_KEY", "tml-2")],
            ),
            Mint,
            "sk-1",
            "https://mint.macaron.im/train",
        ),
        (
            settings(
                "auto",
                None,
                None,
                &[("TINKER_API_KEY", "tml-2"), ("MINT_API_KEY", "")],
            ),
            Tinker,
            "tml-2",
            "https://tinker.thinkingmachines.dev/services/tinker-prod",
        ),
        (
            settings("auto", None, None, &[("WEAVER_API_KEY", "sk-w")]),
            Weaver,
            "sk-w",
            "https://weaver-console.nex-agi.cn",
        ),
        (
            settings("auto", Some("k"), Some("https://weaver.example.org"), &[]),
            Weaver,
            "k",
            "https://weaver.example.org",
        ),
        (
            settings(
                "auto",
                None,
                None,
                &[
                    ("TINKER_API_KEY", "k"),
                    ("TINKER_BASE_URL", "https://api.weaver.ai"),
                ],
            ),
            Weaver,
            "k",
            "https://api.weaver.ai",
        ),
        // A host, not a path, decides: "mint" in the path alone is not MinT.
        (
            settings("auto", Some("tml-x"), Some("https://example.com/mint"), &[]),
            Tinker,
            "tml-x",
            "https://example.com/mint",
        ),
        // An explicit choice wins over every hint.
        (
            settings(
                "tinker",
                Some("sk-mint-abc"),
                None,
                &[("WEAVER_API_KEY", "w")],
            ),
            Tinker,
            "sk-mint-abc",
            "https://tinker.thinkingmachines.dev/services/tinker-prod",
        ),
        (
            settings("MINT", None, None, &[("TINKER_API_KEY", "tml-fallback")]),
            Mint,
            "tml-fallback",
            "https://mint.macaron.im/train",
        ),
        (
            settings(
                "weaver",
                None,
                None,
                &[
                    ("TINKER_API_KEY", "t"),
                    ("TINKER_BASE_URL", "http://127.0.0.1:9"),
                ],
            ),
            Weaver,
            "t",
            "http://127.0.0.1:9",
        ),
    ];
    for (i, (s, kind, key, url)) in cases.into_iter().enumerate() {
        let c = pick_backend(&s).unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert_eq!(
            (c.kind, c.api_key.as_str(), c.base_url.as_str()),
            (kind, key, url),
            "case {i}"
        );
    }
}

#[test]
fn legacy_tinker_keys_are_accepted_and_new_keys_win() {
    let legacy = BackendSettings {
        tinker_api_key: Some("tml-legacy".into()),
        tinker_base_url: Some("https://tinker.internal/".into()),
        ..BackendSettings::default()
    };
    let c = pick_backend(&legacy).unwrap();
    assert_eq!(
        (c.kind, c.api_key.as_str(), c.base_url.as_str()),
        (BackendKind::Tinker, "tml-legacy", "https://tinker.internal")
    );
    let both = BackendSettings {
        api_key: Some("tml-new".into()),
        ..legacy
    };
    assert_eq!(pick_backend(&both).unwrap().api_key, "tml-new");
}

#[test]
fn missing_key_and_unknown_backend_are_clear_errors() {
    let err = pick_backend(&settings("mint", None, None, &[]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no MinT API key") && err.contains("MINT_API_KEY"),
        "{err}"
    );
    let err = pick_backend(&settings("openai", Some("k"), None, &[]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("rl.backend") && err.contains("openai"),
        "{err}"
    );
    let chosen = pick_backend(&settings("auto", Some("tml-secret-123"), None, &[])).unwrap();
    assert!(
        !format!("{chosen:?}").contains("tml-secret-123"),
        "Debug hides the key"
    );
}
