//! Which events make the user busy, and the blocks of time they cover.

use google_calendar3::api::Event;
use jiff::Timestamp;
use serde::Serialize;

/// A stretch of time the user is in meetings: overlapping or touching busy events merged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BusyBlock {
    pub start: Timestamp,
    pub end: Timestamp,
    /// The titles of the events in the block, for status (never logged).
    pub titles: Vec<String>,
}

/// Whether `event` keeps the user busy: not cancelled, opaque (not shown as "free"), with a
/// start and end time (all-day events are not meetings), not focus time or a working
/// location (the user is at the keyboard), and accepted or organised by the user —
/// declined, tentative and unanswered invitations do not count.
pub fn is_busy(event: &Event) -> bool {
    if event.status.as_deref() == Some("cancelled") {
        return false;
    }
    if matches!(
        event.event_type.as_deref(),
        Some("focusTime" | "workingLocation")
    ) {
        return false;
    }
    if event.transparency.as_deref() == Some("transparent") {
        return false;
    }
    let timed = |t: &Option<google_calendar3::api::EventDateTime>| {
        t.as_ref()
            .is_some_and(|t| t.date.is_none() && t.date_time.is_some())
    };
    if !timed(&event.start) || !timed(&event.end) {
        return false;
    }
    // The user's own entry in the attendee list says how they answered. Without one, the
    // event is theirs (no guests) or they organised it.
    match event
        .attendees
        .as_deref()
        .and_then(|a| a.iter().find(|a| a.self_ == Some(true)))
    {
        Some(me) => me.response_status.as_deref() == Some("accepted"),
        None => {
            let organiser_is_me = event
                .organizer
                .as_ref()
                .is_some_and(|o| o.self_ == Some(true));
            let no_guests = event.attendees.as_deref().is_none_or(<[_]>::is_empty);
            organiser_is_me || no_guests
        }
    }
}

/// The busy events as merged blocks, in time order.
pub fn busy_blocks<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<BusyBlock> {
    let mut spans: Vec<(Timestamp, Timestamp, String)> = events
        .into_iter()
        .filter(|e| is_busy(e))
        .filter_map(|e| {
            let start = to_timestamp(e.start.as_ref()?.date_time?)?;
            let end = to_timestamp(e.end.as_ref()?.date_time?)?;
            (end > start).then(|| (start, end, e.summary.clone().unwrap_or_default()))
        })
        .collect();
    spans.sort_by_key(|(start, end, _)| (*start, *end));
    let mut blocks: Vec<BusyBlock> = Vec::new();
    for (start, end, title) in spans {
        match blocks.last_mut() {
            Some(last) if start <= last.end => {
                last.end = last.end.max(end);
                last.titles.push(title);
            }
            _ => blocks.push(BusyBlock {
                start,
                end,
                titles: vec![title],
            }),
        }
    }
    blocks
}

/// Merges blocks from several calendars.
pub(crate) fn merge(mut blocks: Vec<BusyBlock>) -> Vec<BusyBlock> {
    blocks.sort_by_key(|b| (b.start, b.end));
    let mut out: Vec<BusyBlock> = Vec::new();
    for b in blocks {
        match out.last_mut() {
            Some(last) if b.start <= last.end => {
                last.end = last.end.max(b.end);
                last.titles.extend(b.titles);
            }
            _ => out.push(b),
        }
    }
    out
}

fn to_timestamp(t: chrono::DateTime<chrono::Utc>) -> Option<Timestamp> {
    Timestamp::new(
        t.timestamp(),
        i32::try_from(t.timestamp_subsec_nanos()).ok()?,
    )
    .ok()
}

pub(crate) fn to_chrono(t: Timestamp) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::from_timestamp(t.as_second(), u32::try_from(t.subsec_nanosecond()).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(v: serde_json::Value) -> Event {
        serde_json::from_value(v).unwrap()
    }

    fn timed(extra: serde_json::Value) -> Event {
        let mut v = json!({
            "summary": "x",
            "start": {"dateTime": "2026-03-02T10:00:00Z"},
            "end": {"dateTime": "2026-03-02T11:00:00Z"},
        });
        if let (Some(o), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            for (k, val) in extra {
                o.insert(k.clone(), val.clone());
            }
        }
        event(v)
    }

    fn me(status: &str) -> serde_json::Value {
        json!({"attendees": [
            {"email": "boss@example.com", "organizer": true, "responseStatus": "accepted"},
            {"email": "me@example.com", "self": true, "responseStatus": status},
        ]})
    }

    #[test]
    fn only_accepted_opaque_timed_events_count() {
        assert!(is_busy(&timed(me("accepted"))));
        assert!(!is_busy(&timed(me("declined"))));
        assert!(!is_busy(&timed(me("tentative"))));
        assert!(!is_busy(&timed(me("needsAction"))));
        assert!(
            is_busy(&timed(json!({}))),
            "an event without guests is the user's own"
        );
        assert!(is_busy(&timed(
            json!({"organizer": {"self": true}, "attendees": [
                {"email": "a@example.com", "responseStatus": "needsAction"}
            ]})
        )));
        assert!(
            !is_busy(&timed(
                json!({"organizer": {"email": "boss@example.com"}, "attendees": [
                    {"email": "a@example.com", "responseStatus": "accepted"}
                ]})
            )),
            "an invitation listing others but not the user is not theirs"
        );
        assert!(!is_busy(&timed(json!({"transparency": "transparent"}))));
        assert!(is_busy(&timed(json!({"transparency": "opaque"}))));
        assert!(!is_busy(&timed(json!({"status": "cancelled"}))));
        assert!(!is_busy(&timed(json!({"eventType": "focusTime"}))));
        assert!(!is_busy(&timed(json!({"eventType": "workingLocation"}))));
        assert!(is_busy(&timed(json!({"eventType": "outOfOffice"}))));
        assert!(!is_busy(&event(json!({
            "start": {"date": "2026-03-02"}, "end": {"date": "2026-03-03"}
        }))));
    }

    #[test]
    fn touching_and_overlapping_events_merge_into_one_block() {
        let a = event(
            json!({"summary": "a", "start": {"dateTime": "2026-03-02T10:00:00Z"}, "end": {"dateTime": "2026-03-02T11:00:00Z"}}),
        );
        let b = event(
            json!({"summary": "b", "start": {"dateTime": "2026-03-02T11:00:00Z"}, "end": {"dateTime": "2026-03-02T11:30:00Z"}}),
        );
        let c = event(
            json!({"summary": "c", "start": {"dateTime": "2026-03-02T13:00:00Z"}, "end": {"dateTime": "2026-03-02T14:00:00Z"}}),
        );
        let blocks = busy_blocks([&c, &b, &a]);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].start.to_string(), "2026-03-02T10:00:00Z");
        assert_eq!(blocks[0].end.to_string(), "2026-03-02T11:30:00Z");
        assert_eq!(blocks[0].titles, vec!["a", "b"]);
        assert_eq!(blocks[1].titles, vec!["c"]);
    }
}
