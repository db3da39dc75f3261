//! Changes from `metaclaw memory` while MetaClaw runs with memory on: sent through its admin
//! API, the same service the dashboard uses, so an added or edited unit is embedded again
//! and the dashboard hears of every change. Audited under the actor `user`, as the
//! dashboard's are.

use metaclaw_engine::paths::Paths;
use serde_json::{Value, json};

use crate::admin_client::{AdminClient, running, runtime};
use crate::cli::MemoryCommand;
use crate::exit::{Failure, Outcome};
use crate::output;

/// Runs `command` on the running engine when it is a change and MetaClaw runs; `None`
/// when the caller should work on the database itself (not running, memory off, a read).
pub fn try_change(paths: &Paths, command: &MemoryCommand, memory_on: bool) -> Option<Outcome> {
    let is_change = matches!(
        command,
        MemoryCommand::Add { .. }
            | MemoryCommand::Edit { .. }
            | MemoryCommand::Forget { .. }
            | MemoryCommand::Pin { .. }
            | MemoryCommand::Unpin { .. }
    );
    if !is_change || !memory_on {
        return None;
    }
    let client = match running(paths) {
        Ok(Some(client)) => client,
        Ok(None) => return None,
        Err(f) => return Some(Err(f)),
    };
    Some(change(&client, command))
}

fn change(client: &AdminClient, command: &MemoryCommand) -> Outcome {
    let rt = runtime()?;
    let line = match command {
        MemoryCommand::Add {
            content,
            kind,
            scope,
            pin,
        } => {
            // Refused here with the list of kinds, as without a running engine.
            let kind = super::kind(kind)?;
            let mut body = json!({"content": content, "kind": kind, "pinned": pin});
            if let Some(scope) = scope {
                body["scope"] = json!(scope);
            }
            let unit = rt.block_on(client.post_json("/api/memory", &body))?;
            format!("remembered {}", field(&unit, "id")?)
        }
        MemoryCommand::Edit { id, content } => {
            let path = format!("/api/memory/{}", segment(id));
            let unit = rt.block_on(client.patch_json(&path, &json!({"content": content})))?;
            format!(
                "{} is now version {}",
                field(&unit, "id")?,
                field(&unit, "version")?
            )
        }
        MemoryCommand::Forget { id, purge: true } => {
            rt.block_on(client.delete(&format!("/api/memory/{}", segment(id))))?;
            format!("{id} deleted for good")
        }
        MemoryCommand::Forget { id, purge: false } => {
            rt.block_on(client.post(&format!("/api/memory/{}/forget", segment(id))))?;
            format!("{id} forgotten (restore it from the dashboard, or purge it)")
        }
        MemoryCommand::Pin { id } => {
            rt.block_on(client.post(&format!("/api/memory/{}/pin", segment(id))))?;
            format!("{id} pinned")
        }
        MemoryCommand::Unpin { id } => {
            rt.block_on(client.post(&format!("/api/memory/{}/unpin", segment(id))))?;
            format!("{id} unpinned")
        }
        _ => return Err(Failure::error("not a change to memory")),
    };
    output::line(line);
    Ok(())
}

/// A unit id as one path segment: ids are letters and digits, anything else is escaped.
fn segment(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn field(value: &Value, name: &str) -> Result<String, Failure> {
    match value.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v @ Value::Number(_)) => Ok(v.to_string()),
        _ => Err(Failure::error(format!(
            "unexpected answer from MetaClaw: no {name} in {value}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_one_path_segment() {
        assert_eq!(segment("0194b2c3d4e5f6a7b8c9"), "0194b2c3d4e5f6a7b8c9");
        assert_eq!(segment("../x y"), "..%2Fx%20y");
    }
}
