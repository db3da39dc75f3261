//! Embedding cache keyed by content hash and model, so unchanged texts are not re-embedded.

use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::open::Store;

impl Store {
    /// The cached vector, if present. A blob whose size disagrees with its stored dimension
    /// count reads as absent, so a damaged entry is simply recomputed.
    pub fn embedding(
        &self,
        content_hash: &str,
        model: &str,
    ) -> Result<Option<Vec<f32>>, StoreError> {
        let row: Option<(i64, Vec<u8>)> = self
            .conn
            .prepare_cached(
                "SELECT dims, vector FROM embeddings WHERE content_hash = ?1 AND model = ?2",
            )?
            .query_row(params![content_hash, model], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()?;
        Ok(row.and_then(|(dims, bytes)| decode(dims, &bytes)))
    }

    /// Caches a vector as little-endian f32 bytes, replacing any previous entry.
    pub fn put_embedding(
        &mut self,
        content_hash: &str,
        model: &str,
        vector: &[f32],
        at_ms: i64,
    ) -> Result<(), StoreError> {
        let bytes: Vec<u8> = vector.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO embeddings (content_hash, model, dims, vector, created_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![content_hash, model, vector.len(), bytes, at_ms])?;
        Ok(())
    }
}

fn decode(dims: i64, bytes: &[u8]) -> Option<Vec<f32>> {
    let dims = usize::try_from(dims).ok()?;
    if dims.checked_mul(4)? != bytes.len() {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}
