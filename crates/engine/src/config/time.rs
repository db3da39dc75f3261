//! `HH:MM` local wall-clock times (`scheduler.sleep_start`, `scheduler.sleep_end`).

use std::fmt;

use serde::de::{self, Deserializer, Unexpected};
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimeOfDay {
    hour: u8,
    minute: u8,
}

impl TimeOfDay {
    pub fn new(hour: u8, minute: u8) -> Option<Self> {
        (hour < 24 && minute < 60).then_some(Self { hour, minute })
    }

    /// For literal defaults that are known to be in range.
    pub(super) const fn known(hour: u8, minute: u8) -> Self {
        Self { hour, minute }
    }

    pub fn hour(self) -> u8 {
        self.hour
    }

    pub fn minute(self) -> u8 {
        self.minute
    }

    pub fn minutes_since_midnight(self) -> u16 {
        u16::from(self.hour) * 60 + u16::from(self.minute)
    }

    /// `H:MM` or `HH:MM`.
    pub fn parse(s: &str) -> Option<Self> {
        let (h, m) = s.trim().split_once(':')?;
        if h.is_empty() || h.len() > 2 || m.len() != 2 {
            return None;
        }
        Self::new(h.parse().ok()?, m.parse().ok()?)
    }

    /// Python's YAML 1.1 loader turned an unquoted `23:00` into the sexagesimal integer 1380,
    /// and older MetaClaw versions wrote that integer back; read it as minutes since midnight.
    fn from_sexagesimal(minutes: u64) -> Option<Self> {
        let m = u16::try_from(minutes).ok().filter(|m| *m < 24 * 60)?;
        Self::new(u8::try_from(m / 60).ok()?, u8::try_from(m % 60).ok()?)
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.hour, self.minute)
    }
}

impl Serialize for TimeOfDay {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for TimeOfDay {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = TimeOfDay;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a time HH:MM (00:00 to 23:59)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TimeOfDay, E> {
                TimeOfDay::parse(v).ok_or_else(|| E::invalid_value(Unexpected::Str(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TimeOfDay, E> {
                TimeOfDay::from_sexagesimal(v)
                    .ok_or_else(|| E::invalid_value(Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<TimeOfDay, E> {
                match u64::try_from(v) {
                    Ok(u) => self.visit_u64(u),
                    Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_formats() {
        assert_eq!(
            TimeOfDay::parse("7:05").map(|t| t.to_string()),
            Some("07:05".into())
        );
        assert_eq!(
            TimeOfDay::parse("23:00").map(TimeOfDay::minutes_since_midnight),
            Some(1380)
        );
        for bad in ["24:00", "12:60", "1200", "12:5", ":30", "ab:cd"] {
            assert_eq!(TimeOfDay::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn sexagesimal_integer_is_minutes() {
        assert_eq!(
            TimeOfDay::from_sexagesimal(1380).map(|t| t.to_string()),
            Some("23:00".into())
        );
        assert_eq!(TimeOfDay::from_sexagesimal(1440), None);
    }
}
