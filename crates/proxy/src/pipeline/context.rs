//! Context injection on a main turn, kept sticky for the provider's prompt cache.
//!
//! `user` placement: every user message that got a block on an earlier turn gets the same
//! block back, byte-identical; the newest one gets a fresh block the first time it is seen,
//! remembered from then on (an empty result is remembered too, so a block never appears
//! later on a message that was sent without one). `system` placement: the session's first
//! block is pinned to the system prompt for the whole session.

use std::sync::Arc;

use metaclaw_wire::tokens::estimate_tokens;
use serde_json::{Map, Value};

use crate::config::Placement;
use crate::pipeline::sticky::SessionBlocks;
use crate::pipeline::{inject, query};
use crate::seams::{Injection, Protocol, TurnContext};
use crate::session::RequestMeta;
use crate::state::AppState;

/// The key under which a session's pinned system block is remembered.
const SYSTEM_KEY: &str = "system";

/// What a request was given, for the turn's record.
pub struct Injected {
    /// What the newest user message (or the system prompt) carries.
    pub current: Arc<Injection>,
    /// Estimated tokens of every block put into the request, resent ones included: what
    /// MetaClaw adds to the prompt the provider bills.
    pub tokens: u64,
}

/// Injects into `body` and returns what the newest message (or the system prompt) carries.
pub async fn inject(
    state: &AppState,
    client: Protocol,
    meta: &RequestMeta,
    model: &str,
    body: &mut Map<String, Value>,
) -> Option<Injected> {
    if !state.injector.active() {
        return None;
    }
    let mut tokens = 0;
    let current = match state.config.placement {
        Placement::User => on_user_messages(state, client, meta, model, body, &mut tokens).await,
        Placement::System => on_system_prompt(state, client, meta, model, body, &mut tokens).await,
    }?;
    Some(Injected { current, tokens })
}

/// Estimated tokens of a block as it goes into the request, delimiters included.
pub fn block_tokens(injection: &Injection) -> u64 {
    if injection.is_empty() {
        return 0;
    }
    u64::try_from(estimate_tokens(&inject::delimit(&injection.block))).unwrap_or(u64::MAX)
}

async fn on_user_messages(
    state: &AppState,
    client: Protocol,
    meta: &RequestMeta,
    model: &str,
    body: &mut Map<String, Value>,
    tokens: &mut u64,
) -> Option<Arc<Injection>> {
    let targets = query::human_user_messages(body);
    let (&newest, older) = targets.split_last()?;
    // Keys are taken before anything is appended: they name the client's own bytes.
    let keys: Vec<String> = {
        let messages = body.get("messages").and_then(Value::as_array)?;
        targets
            .iter()
            .filter_map(|&i| messages.get(i).map(inject::message_key))
            .collect()
    };
    let blocks = state.sticky.session(&meta.session_id);
    let known = state.sticky.recall(&meta.session_id, &blocks, &keys).await;
    let (newest_key, older_keys) = keys.split_last()?;
    let (newest_known, older_known) = known.split_last()?;
    let current = match newest_known {
        Some(known) => known.clone(),
        None => fresh_remembered(state, client, meta, model, body, &blocks, newest_key).await,
    };
    for ((&index, key), old) in older.iter().zip(older_keys).zip(older_known) {
        // An older copy of the newest message's text shares its key, hence its block.
        let old = if key == newest_key {
            Some(&current)
        } else {
            old.as_ref()
        };
        if let Some(old) = old.filter(|b| !b.is_empty()) {
            inject::append_to_message(client, body, index, &old.block);
            *tokens += block_tokens(old);
        }
    }
    if !current.is_empty() {
        inject::append_to_message(client, body, newest, &current.block);
        *tokens += block_tokens(&current);
    }
    Some(current)
}

async fn on_system_prompt(
    state: &AppState,
    client: Protocol,
    meta: &RequestMeta,
    model: &str,
    body: &mut Map<String, Value>,
    tokens: &mut u64,
) -> Option<Arc<Injection>> {
    let blocks = state.sticky.session(&meta.session_id);
    let key = [SYSTEM_KEY.to_string()];
    let known = state.sticky.recall(&meta.session_id, &blocks, &key).await;
    let pinned = match known.into_iter().next().flatten() {
        Some(known) => known,
        None => fresh_remembered(state, client, meta, model, body, &blocks, SYSTEM_KEY).await,
    };
    if !pinned.is_empty() {
        inject::append_to_system_prompt(client, body, &pinned.block);
        *tokens += block_tokens(&pinned);
    }
    Some(pinned)
}

/// A fresh block for `key`, remembered from now on (or the one a concurrent turn of the
/// same session remembered first).
async fn fresh_remembered(
    state: &AppState,
    client: Protocol,
    meta: &RequestMeta,
    model: &str,
    body: &Map<String, Value>,
    blocks: &SessionBlocks,
    key: &str,
) -> Arc<Injection> {
    let fresh = fresh_block(state, client, meta, model, body).await;
    state.sticky.remember(&meta.session_id, blocks, key, fresh)
}

/// Asks the injector for this turn's block; nothing when the query is empty.
async fn fresh_block(
    state: &AppState,
    client: Protocol,
    meta: &RequestMeta,
    model: &str,
    body: &Map<String, Value>,
) -> Injection {
    let q = query::retrieval_query(body);
    if q.is_empty() {
        return Injection::default();
    }
    let ctx = TurnContext {
        session_id: meta.session_id.clone(),
        scope: meta.scope.clone(),
        client_protocol: client,
        model: model.to_string(),
        query: q,
    };
    state.injector.context_block(&ctx).await.unwrap_or_default()
}
