//! Faults the fake can inject, selected by a `[[fault:...]]` marker in the newest user text or
//! by a queued [`Fault`]. The textual form (`429`, `slow_first_byte:250`, …) is shared by the
//! marker, the `POST /_faults` control route and `Display`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

const MARKER_OPEN: &str = "[[fault:";
const MARKER_CLOSE: &str = "]]";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Fault {
    /// 429 with `Retry-After: 7` and a rate-limit error body.
    RateLimited,
    /// 500 with a server error body.
    ServerError,
    /// 529 with an `overloaded_error` body.
    Overloaded,
    /// 401 with an authentication error body, whatever key was sent.
    Unauthorized,
    /// 401 whose message quotes the credential header it was sent, as a careless upstream
    /// or a proxy in front of one does.
    UnauthorizedEcho,
    /// Wait this long before sending the response headers.
    SlowFirstByte(Duration),
    /// Wait this long between SSE frames.
    ChunkDelay(Duration),
    /// Send headers and a few frames, then drop the connection without the terminator.
    DisconnectMidStream,
    /// Send headers and a few frames, then close the stream cleanly without its final event
    /// (`[DONE]` / `message_stop`): a reply cut short that looks like a normal end.
    EndEarly,
    /// Send one frame whose `data:` is not JSON, then carry on normally.
    MalformedSse,
    /// Never answer (until the fake shuts down).
    Hang,
    /// Send the whole reply, final event included, then keep the connection open until the
    /// client goes away: what a client sees that leaves as soon as it has read the end.
    HoldOpen,
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let s = s
            .strip_prefix(MARKER_OPEN)
            .and_then(|rest| rest.strip_suffix(MARKER_CLOSE))
            .or_else(|| s.strip_prefix("fault:"))
            .unwrap_or(s);
        let (name, arg) = match s.split_once(':') {
            Some((name, arg)) => (name, Some(arg)),
            None => (s, None),
        };
        let millis = || -> Result<Duration, String> {
            let arg = arg.ok_or_else(|| format!("fault `{name}` needs a duration in ms"))?;
            arg.parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|e| format!("fault `{name}`: bad duration `{arg}`: {e}"))
        };
        let fault = match name {
            "429" => Self::RateLimited,
            "500" => Self::ServerError,
            "529" => Self::Overloaded,
            "401" => Self::Unauthorized,
            "401_echo" => Self::UnauthorizedEcho,
            "slow_first_byte" => Self::SlowFirstByte(millis()?),
            "chunk_delay" => Self::ChunkDelay(millis()?),
            "disconnect_mid_stream" => Self::DisconnectMidStream,
            "end_early" => Self::EndEarly,
            "malformed_sse" => Self::MalformedSse,
            "hang" => Self::Hang,
            "hold_open" => Self::HoldOpen,
            other => return Err(format!("unknown fault `{other}`")),
        };
        if arg.is_some() && !matches!(fault, Self::SlowFirstByte(_) | Self::ChunkDelay(_)) {
            return Err(format!("fault `{name}` takes no argument"));
        }
        Ok(fault)
    }
}

impl TryFrom<String> for Fault {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Fault> for String {
    fn from(f: Fault) -> Self {
        f.to_string()
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RateLimited => f.write_str("429"),
            Self::ServerError => f.write_str("500"),
            Self::Overloaded => f.write_str("529"),
            Self::Unauthorized => f.write_str("401"),
            Self::UnauthorizedEcho => f.write_str("401_echo"),
            Self::SlowFirstByte(d) => write!(f, "slow_first_byte:{}", d.as_millis()),
            Self::ChunkDelay(d) => write!(f, "chunk_delay:{}", d.as_millis()),
            Self::DisconnectMidStream => f.write_str("disconnect_mid_stream"),
            Self::EndEarly => f.write_str("end_early"),
            Self::MalformedSse => f.write_str("malformed_sse"),
            Self::Hang => f.write_str("hang"),
            Self::HoldOpen => f.write_str("hold_open"),
        }
    }
}

impl Fault {
    /// The marker that selects this fault from inside a user message.
    pub fn marker(&self) -> String {
        format!("{MARKER_OPEN}{self}{MARKER_CLOSE}")
    }
}

/// Removes every `[[fault:...]]` marker from `text`; returns the cleaned text and the first
/// marker that parsed. The text is trimmed only when a marker was removed, so replies to
/// marker-free messages echo them byte for byte.
pub fn extract_marker(text: &str) -> (String, Option<Fault>) {
    let mut out = String::with_capacity(text.len());
    let mut found = None;
    let mut removed = false;
    let mut rest = text;
    while let Some(start) = rest.find(MARKER_OPEN) {
        let after = &rest[start..];
        let Some(end) = after.find(MARKER_CLOSE) else {
            break;
        };
        out.push_str(&rest[..start]);
        let marker = &after[..end + MARKER_CLOSE.len()];
        if found.is_none() {
            found = marker.parse().ok();
        }
        removed = true;
        rest = &after[end + MARKER_CLOSE.len()..];
    }
    out.push_str(rest);
    if removed {
        (out.trim().to_owned(), found)
    } else {
        (out, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        for (text, fault) in [
            ("429", Fault::RateLimited),
            ("fault:500", Fault::ServerError),
            ("[[fault:529]]", Fault::Overloaded),
            ("401", Fault::Unauthorized),
            ("401_echo", Fault::UnauthorizedEcho),
            (
                "slow_first_byte:250",
                Fault::SlowFirstByte(Duration::from_millis(250)),
            ),
            ("chunk_delay:5", Fault::ChunkDelay(Duration::from_millis(5))),
            ("disconnect_mid_stream", Fault::DisconnectMidStream),
            ("end_early", Fault::EndEarly),
            ("malformed_sse", Fault::MalformedSse),
            ("hang", Fault::Hang),
            ("hold_open", Fault::HoldOpen),
        ] {
            assert_eq!(text.parse::<Fault>(), Ok(fault), "{text}");
            assert_eq!(fault.to_string().parse::<Fault>(), Ok(fault));
        }
        assert!("slow_first_byte".parse::<Fault>().is_err());
        assert!("429:3".parse::<Fault>().is_err());
        assert!("nope".parse::<Fault>().is_err());
    }

    #[test]
    fn strips_markers() {
        let (text, fault) = extract_marker("hello [[fault:429]] there [[fault:500]]");
        assert_eq!(text, "hello  there");
        assert_eq!(fault, Some(Fault::RateLimited));
        let (text, fault) = extract_marker(" plain ");
        assert_eq!(text, " plain ");
        assert_eq!(fault, None);
    }

    #[test]
    fn json_round_trip() -> Result<(), serde_json::Error> {
        let faults: Vec<Fault> = serde_json::from_str(r#"["429","chunk_delay:20"]"#)?;
        assert_eq!(
            faults,
            [
                Fault::RateLimited,
                Fault::ChunkDelay(Duration::from_millis(20))
            ]
        );
        assert_eq!(
            serde_json::to_string(&faults)?,
            r#"["429","chunk_delay:20"]"#
        );
        Ok(())
    }
}
