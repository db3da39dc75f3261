//! `metaclaw models …`: the local embedding model behind retrieval by meaning (download,
//! import, status) and served models' tokenizers for weight learning.

mod embedding;
mod tokenizer;

pub use embedding::{import, status};
pub use tokenizer::DownloadArgs;

use metaclaw_engine::paths::Paths;

use crate::exit::Outcome;

/// `models download [MODEL]`: the tokenizer of MODEL (or of the configured model with
/// `--tokenizer`), else the local embedding model.
pub fn download(paths: &Paths, args: DownloadArgs) -> Outcome {
    if args.model.is_some() || args.tokenizer {
        tokenizer::download(paths, args)
    } else {
        embedding::download(paths, args.hf_endpoint.as_deref())
    }
}
