//! Bodies in and out of the v9 layout: the repeated parts of requests and replies stored once
//! per database (`body_parts`, `body_part_data`), each body as a skeleton of its own text and
//! references. See `migrations_bodies` for why.

use std::collections::HashMap;
use std::rc::Rc;

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use crate::body_encoding::{self, Body, Segment};
use crate::body_split::{request_spans, string_spans};
use crate::error::StoreError;
use crate::turns::TurnId;

/// What a turn whose request retention dropped reads back as (its figures stay; its reply
/// reads back as `None`).
pub const DROPPED_REQUEST_JSON: &str = "{}";

/// Bodies and parts shorter than this are stored whole: too little to share.
const MIN_SPLIT_BYTES: usize = 256;

/// Skeletons nest two deep (a body's parts, their strings); deeper is damage, not data.
const MAX_DEPTH: usize = 2;

/// How a body's top level is split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// By message, system prompt and tool list, then by long string.
    Request,
    /// By long string: a reply's text is resent in the next request.
    Reply,
}

/// Encodes `text` as a body, storing its parts not yet in the database and counting one more
/// reference to those that are. Runs inside the caller's transaction.
pub(crate) fn store_body(conn: &Connection, text: &str, kind: Kind) -> Result<Vec<u8>, StoreError> {
    let spans = if text.len() < MIN_SPLIT_BYTES {
        Vec::new()
    } else {
        match kind {
            Kind::Request => request_spans(text),
            Kind::Reply => string_spans(text),
        }
    };
    let nested = kind == Kind::Request;
    skeleton_or_whole(conn, text, spans, |conn, part| intern(conn, part, nested))
}

/// Stores `text` as one part shared with every equal text (an injected block, given to many
/// messages and sessions), and returns the body that references it; short texts stay whole.
pub(crate) fn store_shared(conn: &Connection, text: &str) -> Result<Vec<u8>, StoreError> {
    let spans = if text.len() < MIN_SPLIT_BYTES {
        Vec::new()
    } else {
        std::iter::once(0..text.len()).collect()
    };
    skeleton_or_whole(conn, text, spans, |conn, part| intern(conn, part, false))
}

/// Removes one reference to each part a body uses, deleting the parts nothing uses any more
/// (and then the references they held).
pub(crate) fn release(
    conn: &Connection,
    turn: TurnId,
    body: &[u8],
) -> Result<Released, StoreError> {
    let mut pending = part_ids(body).map_err(|detail| bad(turn, detail))?;
    let mut released = Released::default();
    while let Some(id) = pending.pop() {
        let refs: Option<i64> = conn
            .prepare_cached("UPDATE body_parts SET refs = refs - 1 WHERE id = ?1 RETURNING refs")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        if refs.is_none_or(|n| n > 0) {
            continue;
        }
        let data: Option<Vec<u8>> = conn
            .prepare_cached("DELETE FROM body_part_data WHERE id = ?1 RETURNING data")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        conn.prepare_cached("DELETE FROM body_parts WHERE id = ?1")?
            .execute([id])?;
        released.parts += 1;
        let data = data.unwrap_or_default();
        released.bytes += data.len() as u64;
        match part_ids(&data) {
            Ok(ids) => pending.extend(ids),
            // Its own parts stay, unreferenced: a leak, not a loss.
            Err(detail) => tracing::warn!(part = id, detail, "a deleted part was damaged"),
        }
    }
    Ok(released)
}

/// Parts deleted by [`release`] and the bytes their data took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Released {
    pub parts: u64,
    pub bytes: u64,
}

/// A body read back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Text {
    Kept(String),
    Dropped,
}

/// Rebuilds bodies, keeping the parts it read: the turns of one session share most of them.
pub(crate) struct Rebuilder<'c> {
    conn: &'c Connection,
    parts: HashMap<i64, Rc<str>>,
}

impl<'c> Rebuilder<'c> {
    pub(crate) fn new(conn: &'c Connection) -> Self {
        Rebuilder {
            conn,
            parts: HashMap::new(),
        }
    }

    /// The text of `turn`'s stored `body`.
    pub(crate) fn body(&mut self, turn: TurnId, body: &[u8]) -> Result<Text, StoreError> {
        match body_encoding::decode(body).map_err(|d| bad(turn, d))? {
            Body::Dropped => Ok(Text::Dropped),
            Body::Whole(text) => Ok(Text::Kept(text)),
            Body::Skeleton(skeleton) => Ok(Text::Kept(self.skeleton(turn, &skeleton, 0)?)),
        }
    }

    /// A turn's request: `request_json` until the turn is converted to v9 (`body` NULL).
    pub(crate) fn request(
        &mut self,
        turn: TurnId,
        request_json: String,
        body: Option<Vec<u8>>,
    ) -> Result<String, StoreError> {
        match body {
            None => Ok(request_json),
            Some(body) => Ok(match self.body(turn, &body)? {
                Text::Kept(text) => text,
                Text::Dropped => DROPPED_REQUEST_JSON.to_owned(),
            }),
        }
    }

    /// A turn's reply: `reply_json` when `body` is NULL (no reply, or not converted yet).
    pub(crate) fn reply(
        &mut self,
        turn: TurnId,
        reply_json: Option<String>,
        body: Option<Vec<u8>>,
    ) -> Result<Option<String>, StoreError> {
        match body {
            None => Ok(reply_json),
            Some(body) => Ok(match self.body(turn, &body)? {
                Text::Kept(text) => Some(text),
                Text::Dropped => None,
            }),
        }
    }

    /// Rebuilds part `id` and checks it against its hash, forgetting the parts it read.
    pub(crate) fn check_part(&mut self, id: i64) -> Result<(), StoreError> {
        let checked = self.part(TurnId(0), id, 1).map(drop);
        self.parts.clear();
        checked
    }

    fn skeleton(
        &mut self,
        turn: TurnId,
        skeleton: &[u8],
        depth: usize,
    ) -> Result<String, StoreError> {
        let segments = body_encoding::segments(skeleton).map_err(|d| bad(turn, d))?;
        let mut pieces: Vec<Rc<str>> = Vec::with_capacity(segments.len());
        for segment in &segments {
            if let Segment::Part(id) = *segment {
                pieces.push(self.part(turn, id, depth + 1)?);
            }
        }
        let len = segments
            .iter()
            .map(|s| match s {
                Segment::Text(text) => text.len(),
                Segment::Part(_) => 0,
            })
            .chain(pieces.iter().map(|p| p.len()))
            .sum();
        let mut out = String::with_capacity(len);
        let mut pieces = pieces.iter();
        for segment in &segments {
            match segment {
                Segment::Text(text) => out.push_str(text),
                Segment::Part(_) => out.extend(pieces.next().map(|p| &**p)),
            }
        }
        Ok(out)
    }

    fn part(&mut self, turn: TurnId, id: i64, depth: usize) -> Result<Rc<str>, StoreError> {
        if let Some(part) = self.parts.get(&id) {
            return Ok(part.clone());
        }
        if depth > MAX_DEPTH {
            return Err(bad(turn, format!("part {id} is nested too deep")));
        }
        let row: Option<(Vec<u8>, Vec<u8>)> = self
            .conn
            .prepare_cached(
                "SELECT p.hash, d.data FROM body_parts p JOIN body_part_data d ON d.id = p.id
                 WHERE p.id = ?1",
            )?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let (hash, data) = row.ok_or_else(|| bad(turn, format!("part {id} is missing")))?;
        let in_part = |d: String| bad(turn, format!("part {id}: {d}"));
        let text = match body_encoding::decode(&data).map_err(in_part)? {
            Body::Whole(text) => text,
            Body::Skeleton(skeleton) => self.skeleton(turn, &skeleton, depth)?,
            Body::Dropped => return Err(in_part("a dropped marker".into())),
        };
        if key(&text)[..] != hash[..] {
            return Err(in_part("its content does not match its hash".into()));
        }
        let part: Rc<str> = text.into();
        self.parts.insert(id, part.clone());
        Ok(part)
    }
}

/// `text` as a skeleton around the parts at `spans`, each interned by `intern`; whole when
/// there are none.
fn skeleton_or_whole(
    conn: &Connection,
    text: &str,
    spans: Vec<std::ops::Range<usize>>,
    intern: impl Fn(&Connection, &str) -> Result<i64, StoreError>,
) -> Result<Vec<u8>, StoreError> {
    if spans.is_empty() {
        return Ok(body_encoding::encode_whole(text));
    }
    let mut segments = Vec::with_capacity(spans.len() * 2 + 1);
    let mut at = 0;
    for span in spans {
        segments.push(Segment::Text(slice(text, at, span.start)?));
        segments.push(Segment::Part(intern(
            conn,
            slice(text, span.start, span.end)?,
        )?));
        at = span.end;
    }
    segments.push(Segment::Text(slice(text, at, text.len())?));
    Ok(body_encoding::encode_skeleton(&segments))
}

/// The id of the stored part holding `text`, one reference more; stored first if new, its
/// long strings as parts of their own when `nested`.
fn intern(conn: &Connection, text: &str, nested: bool) -> Result<i64, StoreError> {
    let hash = key(text);
    let known: Option<i64> = conn
        .prepare_cached("UPDATE body_parts SET refs = refs + 1 WHERE hash = ?1 RETURNING id")?
        .query_row([&hash[..]], |r| r.get(0))
        .optional()?;
    if let Some(id) = known {
        return Ok(id);
    }
    let spans = if nested && text.len() >= MIN_SPLIT_BYTES {
        string_spans(text)
    } else {
        Vec::new()
    };
    let data = skeleton_or_whole(conn, text, spans, |conn, s| intern(conn, s, false))?;
    conn.prepare_cached("INSERT INTO body_parts (hash, refs) VALUES (?1, 1)")?
        .execute([&hash[..]])?;
    let id = conn.last_insert_rowid();
    conn.prepare_cached("INSERT INTO body_part_data (id, data) VALUES (?1, ?2)")?
        .execute(rusqlite::params![id, data])?;
    Ok(id)
}

/// The parts a stored body or part references, once per reference.
pub(crate) fn part_ids(stored: &[u8]) -> Result<Vec<i64>, String> {
    match body_encoding::decode(stored)? {
        Body::Skeleton(skeleton) => body_encoding::part_ids(&skeleton),
        Body::Whole(_) | Body::Dropped => Ok(Vec::new()),
    }
}

/// A part's address: the first 16 bytes of its SHA-256. Equal keys are taken as equal texts:
/// an accidental collision needs about 2^64 parts. Reads check the key again, so a damaged
/// part is an error, not a silently different body.
fn key(text: &str) -> [u8; 16] {
    let digest = Sha256::digest(text.as_bytes());
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// `text[from..to]`; the spans come from `body_split`, so an error here is a bug, reported
/// rather than panicking.
fn slice(text: &str, from: usize, to: usize) -> Result<&str, StoreError> {
    text.get(from..to).ok_or_else(|| StoreError::Invalid {
        what: "body split",
        detail: format!("{from}..{to} is not within the body's {} bytes", text.len()),
    })
}

fn bad(turn: TurnId, detail: String) -> StoreError {
    StoreError::BadBody {
        turn: turn.0,
        detail,
    }
}
