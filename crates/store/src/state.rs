//! Small persistent key/value state (e.g. a background job's last run).

use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::open::Store;

impl Store {
    /// The value stored under `key`, if any.
    pub fn state_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        let value = self
            .conn
            .prepare_cached("SELECT value FROM state WHERE key = ?1")?
            .query_row([key], |row| row.get(0))
            .optional()?;
        Ok(value)
    }

    /// Stores `value` under `key`, replacing any previous value.
    pub fn state_set(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO state (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![key, value])?;
        Ok(())
    }
}
