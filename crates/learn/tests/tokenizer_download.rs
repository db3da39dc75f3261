//! Downloading tokenizer files from a Hugging Face-compatible host (the fake's `/hf/`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use metaclaw_e2e::fake_tinker::{FakeTinker, FakeTinkerOptions};
use metaclaw_learn::tokenizer::{ModelSource, TokenizerError, download_tokenizer, model_dir};

const TOKENIZER: &str =
    r#"{"version": "1.0", "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}"#;
const CONFIG: &str = r#"{"chat_template": "{{ messages }}", "eos_token": "a"}"#;

fn source(fake: &FakeTinker) -> ModelSource {
    ModelSource {
        base_url: fake.hf_base_url(),
        token: Some("hf_secret_token".into()),
        ..ModelSource::default()
    }
}

#[tokio::test]
async fn downloads_into_the_model_directory() {
    let fake = FakeTinker::start(FakeTinkerOptions::default())
        .await
        .unwrap();
    fake.put_hf_file(
        "Org/Model-1.5B/resolve/main/tokenizer.json",
        TOKENIZER.into(),
    );
    fake.put_hf_file(
        "Org/Model-1.5B/resolve/main/tokenizer_config.json",
        CONFIG.into(),
    );
    let home = tempfile::tempdir().unwrap();
    let dir = download_tokenizer(&source(&fake), home.path(), "Org/Model-1.5B")
        .await
        .unwrap();
    assert_eq!(dir, home.path().join("models/Org/Model-1.5B"));
    assert_eq!(
        std::fs::read_to_string(dir.join("tokenizer.json")).unwrap(),
        TOKENIZER
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("tokenizer_config.json")).unwrap(),
        CONFIG
    );
    assert!(
        !dir.join("chat_template.jinja").exists(),
        "optional file absent upstream"
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
    let req = &fake.requests_to("/hf/Org/Model-1.5B/resolve/main/tokenizer.json")[0];
    assert_eq!(req.header("authorization"), Some("Bearer hf_secret_token"));
}

#[tokio::test]
async fn a_missing_file_is_a_clear_error_and_leaves_existing_files_alone() {
    let fake = FakeTinker::start(FakeTinkerOptions::default())
        .await
        .unwrap();
    fake.put_hf_file("Org/M/resolve/main/tokenizer.json", TOKENIZER.into());
    let home = tempfile::tempdir().unwrap();
    let dir = model_dir(home.path(), "Org/M").unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), "old").unwrap();
    let err = download_tokenizer(&source(&fake), home.path(), "Org/M")
        .await
        .unwrap_err();
    assert!(matches!(err, TokenizerError::NotFound { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("404") && text.contains("tokenizer_config.json"),
        "{text}"
    );
    assert!(!text.contains("hf_secret_token"));
    assert_eq!(
        std::fs::read_to_string(dir.join("tokenizer.json")).unwrap(),
        "old",
        "nothing replaced"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no temporary files left"
    );
}

#[tokio::test]
async fn invalid_json_and_bad_model_ids_are_refused() {
    let fake = FakeTinker::start(FakeTinkerOptions::default())
        .await
        .unwrap();
    fake.put_hf_file("M/resolve/main/tokenizer.json", b"<html>".to_vec());
    fake.put_hf_file("M/resolve/main/tokenizer_config.json", CONFIG.into());
    let home = tempfile::tempdir().unwrap();
    let err = download_tokenizer(&source(&fake), home.path(), "M")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not valid JSON"), "{err}");
    assert!(!home.path().join("models/M/tokenizer.json").exists());
    for bad in ["../etc", "a/b/c", "", "a/..", "x y"] {
        assert!(
            matches!(
                model_dir(home.path(), bad),
                Err(TokenizerError::InvalidModelId(_))
            ),
            "{bad}"
        );
    }
}
