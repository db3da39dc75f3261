//! Step 1: a reference config given with `--import`, then any plaintext key in our own
//! config (the Python MetaClaw kept keys in plain text at the same path) — into the
//! keychain first thing, and said so.

use std::path::Path;

use metaclaw_engine::paths::Paths;
use metaclaw_engine::secrets::SecretStore;
use metaclaw_engine::setup::{self, SecretMove};

use crate::exit::Outcome;
use crate::output;

pub fn run(paths: &Paths, store: &SecretStore, import: Option<&Path>) -> Outcome {
    if let Some(from) = import {
        let imported = setup::import_reference(paths, store, from)?;
        if imported.copied {
            output::line(format!(
                "Imported {} as {}.",
                from.display(),
                paths.config.display()
            ));
        } else if !imported.added.is_empty() {
            output::line(format!(
                "Imported from {}: {} (your own settings kept).",
                from.display(),
                imported.added.join(", ")
            ));
        } else {
            output::line(format!(
                "Nothing to import from {}: your config already sets all of it.",
                from.display()
            ));
        }
        say(&imported.secrets, &from.display().to_string());
        if imported.source_cleaned {
            output::line(format!(
                "  {} no longer holds any key in plain text.",
                from.display()
            ));
        }
    }
    let moved = setup::migrate_own_secrets(paths, store)?;
    say(&moved, &paths.config.display().to_string());
    Ok(())
}

fn say(moved: &[SecretMove], file: &str) {
    for m in moved {
        match m {
            SecretMove::Stored { account, stored_in } => output::line(format!(
                "Moved {account} from {file} (plain text) into the {stored_in}."
            )),
            SecretMove::KeptStored { account } => output::line(format!(
                "Removed the plain-text {account} from {file}; the one already in your keychain or secrets file stays in use."
            )),
        }
    }
}
