//! What the fake knows: issued codes and tokens, events, faults, and what it was asked.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub(super) struct Shared {
    state: Mutex<State>,
}

impl Shared {
    pub(super) fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        match self.state.lock() {
            Ok(mut s) => f(&mut s),
            Err(p) => f(&mut p.into_inner()),
        }
    }

    pub(super) fn set_events(&self, calendar: &str, events: Vec<serde_json::Value>) {
        self.with(|s| {
            s.events.insert(calendar.to_owned(), events);
        });
    }
}

/// One call to `/token`: the grant type and the status answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRequest {
    pub grant_type: String,
    pub status: u16,
}

/// One call to the events list: the calendar and the query parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarRequest {
    pub calendar: String,
    pub query: BTreeMap<String, String>,
    pub status: u16,
}

#[derive(Debug)]
pub(super) struct Pending {
    pub redirect_uri: String,
}

#[derive(Debug)]
pub(super) struct State {
    pub counter: u64,
    /// Authorization codes not yet exchanged, with the redirect URI they were issued for.
    pub codes: HashMap<String, Pending>,
    pub refresh: BTreeSet<String>,
    /// Access token → when it expires.
    pub access: HashMap<String, Instant>,
    pub access_ttl: Duration,
    pub revoked: bool,
    pub down: bool,
    pub fail_calendar: bool,
    pub page_size: usize,
    pub events: BTreeMap<String, Vec<serde_json::Value>>,
    pub calendar_requests: Vec<CalendarRequest>,
    pub token_requests: Vec<TokenRequest>,
}

impl Default for State {
    fn default() -> Self {
        Self {
            counter: 0,
            codes: HashMap::new(),
            refresh: BTreeSet::new(),
            access: HashMap::new(),
            access_ttl: Duration::from_secs(3600),
            revoked: false,
            down: false,
            fail_calendar: false,
            page_size: 250,
            events: BTreeMap::new(),
            calendar_requests: Vec::new(),
            token_requests: Vec::new(),
        }
    }
}

impl State {
    pub(super) fn next_id(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}-{}-{:x}", self.counter, rand_bits())
    }

    pub(super) fn issue_access(&mut self) -> String {
        let token = self.next_id("ya29.fake-access");
        self.access
            .insert(token.clone(), Instant::now() + self.access_ttl);
        token
    }

    pub(super) fn access_valid(&self, token: &str) -> bool {
        !self.revoked && self.access.get(token).is_some_and(|t| *t > Instant::now())
    }
}

/// Unpredictable enough for a test token: the clock's nanoseconds mixed with an address.
fn rand_bits() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let x = &t as *const u64 as u64;
    (t ^ x.rotate_left(17)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
