//! Pinned files of a downloadable model.

use std::borrow::Cow;
use std::path::Path;

use crate::checksum::sha256_file;
use crate::error::Result;

/// One file of a model: where it goes, how large it is, its SHA-256 (lowercase hex).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFile {
    pub path: Cow<'static, str>,
    pub size: u64,
    pub sha256: Cow<'static, str>,
}

/// A model to download: its name in the store, where its files are and what they must be.
/// A file's URL is `<base_url>/<path>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub name: Cow<'static, str>,
    pub base_url: Cow<'static, str>,
    pub files: Cow<'static, [ManifestFile]>,
}

const fn file(path: &'static str, size: u64, sha256: &'static str) -> ManifestFile {
    ManifestFile {
        path: Cow::Borrowed(path),
        size,
        sha256: Cow::Borrowed(sha256),
    }
}

/// The default model: sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2
/// (Apache-2.0), a 12-layer BERT with XLM-R's 250k-token vocabulary, 384 dimensions, trained
/// on parallel data in 50+ languages, Chinese and English included. Pinned to one commit of
/// its Hugging Face repository; sizes and SHA-256s are those of the files at that commit.
pub static DEFAULT_MANIFEST: Manifest = Manifest {
    name: Cow::Borrowed("paraphrase-multilingual-MiniLM-L12-v2"),
    base_url: Cow::Borrowed(
        "https://huggingface.co/sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2/resolve/e8f8c211226b894fcb81acc59f3b34ba3efd5f42",
    ),
    files: Cow::Borrowed(&[
        file(
            "config.json",
            645,
            "6300193cb75e01cf80c96decef7187dfb33094d97cc1490b7ead6ff134476e4e",
        ),
        file(
            "1_Pooling/config.json",
            190,
            "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
        ),
        file(
            "sentence_bert_config.json",
            53,
            "70f4448f31320443fe3557cacea5abf2dcc4915dda8c80646bec9f3bb0aa5a1f",
        ),
        file(
            "tokenizer.json",
            9_081_518,
            "2c3387be76557bd40970cec13153b3bbf80407865484b209e655e5e4729076b8",
        ),
        file(
            "model.safetensors",
            470_641_600,
            "eaa086f0ffee582aeb45b36e34cdd1fe2d6de2bef61f8a559a1bbc9bd955917b",
        ),
    ]),
};

impl Manifest {
    /// Whether `dir` holds exactly these files (sizes first, so a different model costs no
    /// hashing).
    pub fn matches(&self, dir: &Path) -> Result<bool> {
        for f in self.files.iter() {
            let path = dir.join(f.path.as_ref());
            match std::fs::metadata(&path) {
                Ok(m) if m.is_file() && m.len() == f.size => {}
                _ => return Ok(false),
            }
        }
        for f in self.files.iter() {
            if sha256_file(&dir.join(f.path.as_ref()))? != f.sha256 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    pub fn total_size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}
