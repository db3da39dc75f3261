//! Local sentence embeddings: a BERT sentence-transformers model run on the CPU in plain Rust
//! (its dense layers on integer SIMD kernels, `int8`), the store its files live in, their
//! import from a folder or zip, and the download of the default model with pinned checksums.
//!
//! ```no_run
//! # fn main() -> Result<(), metaclaw_embed::EmbedError> {
//! let store = metaclaw_embed::ModelStore::new("/home/me/.metaclaw/models");
//! let model = store.load(&metaclaw_embed::DEFAULT_MANIFEST.name)?;
//! let vectors = model.embed(&["How do I reset my password?"])?;
//! assert_eq!(vectors[0].len(), model.dimension());
//! # Ok(())
//! # }
//! ```

mod attention;
mod background;
mod bert;
mod checksum;
mod config;
mod download;
mod embedder;
mod error;
mod gelu;
mod import;
mod int8;
mod layer_norm;
mod layout;
mod manifest;
mod pool;
mod quantized;
mod store;
mod tokenize;
mod weights;

pub use background::THREAD_NAME as BACKGROUND_THREAD;
pub use embedder::{Embedder, MAX_TOKENS};
pub use error::{EmbedError, Result};
pub use manifest::{DEFAULT_MANIFEST, Manifest, ManifestFile};
pub use quantized::QuantizedVectors;
pub use store::{Installed, ModelStore};
