//! The bytes of a stored body (`turns.request_body`, `turns.reply_body`) and of a stored part
//! (`body_part_data.data`, schema v9): a tag, then the text whole or as a skeleton — its own
//! text with references to other parts.
//!
//! ```text
//! 0 WHOLE          UTF-8 text
//! 1 WHOLE_ZSTD     varint raw length, zstd frame of the text
//! 2 SKELETON       skeleton
//! 3 SKELETON_ZSTD  varint raw length, zstd frame of the skeleton
//! 4 DROPPED        nothing: retention removed the body (turns only)
//!
//! skeleton := varint n, n × (varint len, text bytes, zigzag varint id - previous id),
//!             varint len, text bytes
//! ```
//!
//! Part ids are written as differences from the previous one: a session's parts were stored
//! one after another, so most references take one or two bytes.

use crate::compression;

const WHOLE: u8 = 0;
const WHOLE_ZSTD: u8 = 1;
const SKELETON: u8 = 2;
const SKELETON_ZSTD: u8 = 3;
const DROPPED: u8 = 4;

/// A piece of a body or part: its own text, or a reference to a stored part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Segment<'a> {
    Text(&'a str),
    Part(i64),
}

/// A decoded `request_body`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Body {
    Whole(String),
    /// The skeleton's bytes; read them with [`segments`].
    Skeleton(Vec<u8>),
    Dropped,
}

/// `text` stored whole, compressed when that pays.
pub(crate) fn encode_whole(text: &str) -> Vec<u8> {
    tagged(WHOLE, WHOLE_ZSTD, text.as_bytes())
}

/// A skeleton of `segments`, alternating text and parts, compressed when that pays.
pub(crate) fn encode_skeleton(segments: &[Segment<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    let parts = segments
        .iter()
        .filter(|s| matches!(s, Segment::Part(_)))
        .count();
    put_varint(&mut out, parts as u64);
    let mut previous = 0i64;
    let mut pending_text = String::new();
    for segment in segments {
        match *segment {
            Segment::Text(text) => pending_text.push_str(text),
            Segment::Part(id) => {
                put_text(&mut out, &pending_text);
                pending_text.clear();
                put_varint(&mut out, zigzag(id.wrapping_sub(previous)));
                previous = id;
            }
        }
    }
    put_text(&mut out, &pending_text);
    tagged(SKELETON, SKELETON_ZSTD, &out)
}

/// The marker of a body retention dropped.
pub(crate) fn encode_dropped() -> Vec<u8> {
    vec![DROPPED]
}

pub(crate) fn decode(stored: &[u8]) -> Result<Body, String> {
    let (&tag, rest) = stored.split_first().ok_or("empty body")?;
    match tag {
        WHOLE => Ok(Body::Whole(utf8(rest.to_vec())?)),
        WHOLE_ZSTD => Ok(Body::Whole(utf8(unpack(rest)?)?)),
        SKELETON => Ok(Body::Skeleton(rest.to_vec())),
        SKELETON_ZSTD => Ok(Body::Skeleton(unpack(rest)?)),
        DROPPED if rest.is_empty() => Ok(Body::Dropped),
        _ => Err(format!("unknown body format {tag}")),
    }
}

/// The segments of a skeleton, texts merged so that parts and texts alternate.
pub(crate) fn segments(skeleton: &[u8]) -> Result<Vec<Segment<'_>>, String> {
    let mut input = skeleton;
    let parts = get_varint(&mut input)?;
    // Each part takes at least two bytes: a bound that a damaged count cannot exceed.
    let capacity = usize::try_from(parts)
        .unwrap_or(usize::MAX)
        .min(input.len())
        * 2
        + 1;
    let mut out = Vec::with_capacity(capacity);
    let mut previous = 0i64;
    for _ in 0..parts {
        let text = get_text(&mut input)?;
        if !text.is_empty() {
            out.push(Segment::Text(text));
        }
        let id = previous.wrapping_add(unzigzag(get_varint(&mut input)?));
        out.push(Segment::Part(id));
        previous = id;
    }
    let text = get_text(&mut input)?;
    if !text.is_empty() {
        out.push(Segment::Text(text));
    }
    if input.is_empty() {
        Ok(out)
    } else {
        Err(format!("{} bytes after the skeleton", input.len()))
    }
}

/// The ids of the parts a skeleton references, once per reference.
pub(crate) fn part_ids(skeleton: &[u8]) -> Result<Vec<i64>, String> {
    Ok(segments(skeleton)?
        .into_iter()
        .filter_map(|s| match s {
            Segment::Part(id) => Some(id),
            Segment::Text(_) => None,
        })
        .collect())
}

fn tagged(plain: u8, packed: u8, data: &[u8]) -> Vec<u8> {
    match compression::compress(data) {
        Some(compressed) => {
            let mut out = Vec::with_capacity(compressed.len() + 6);
            out.push(packed);
            put_varint(&mut out, data.len() as u64);
            out.extend_from_slice(&compressed);
            out
        }
        None => {
            let mut out = Vec::with_capacity(data.len() + 1);
            out.push(plain);
            out.extend_from_slice(data);
            out
        }
    }
}

fn unpack(mut input: &[u8]) -> Result<Vec<u8>, String> {
    let raw_len = get_varint(&mut input)?;
    let raw_len = usize::try_from(raw_len).map_err(|_| format!("length {raw_len} too large"))?;
    compression::decompress(input, raw_len)
}

fn utf8(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

fn get_text<'a>(input: &mut &'a [u8]) -> Result<&'a str, String> {
    let len = get_varint(input)?;
    let len = usize::try_from(len)
        .ok()
        .filter(|&n| n <= input.len())
        .ok_or_else(|| format!("text of {len} bytes past the end"))?;
    let (text, rest) = input.split_at(len);
    *input = rest;
    std::str::from_utf8(text).map_err(|e| format!("text not UTF-8: {e}"))
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn get_varint(input: &mut &[u8]) -> Result<u64, String> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first().ok_or("truncated number")?;
        *input = rest;
        n |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(n);
        }
    }
    Err("number too long".into())
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn unzigzag(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    #[test]
    fn skeletons_round_trip_with_parts_in_any_order() {
        let written = [
            Segment::Text("{\"messages\":["),
            Segment::Part(7),
            Segment::Text(","),
            Segment::Part(8),
            Segment::Part(3),
            Segment::Text("],"),
            Segment::Text("\"stream\":true}"),
            Segment::Part(i64::MAX),
            Segment::Part(1),
        ];
        let Body::Skeleton(bytes) = decode(&encode_skeleton(&written)).unwrap() else {
            panic!("not a skeleton");
        };
        assert_eq!(
            segments(&bytes).unwrap(),
            [
                Segment::Text("{\"messages\":["),
                Segment::Part(7),
                Segment::Text(","),
                Segment::Part(8),
                Segment::Part(3),
                Segment::Text("],\"stream\":true}"),
                Segment::Part(i64::MAX),
                Segment::Part(1),
            ]
        );
        assert_eq!(part_ids(&bytes).unwrap(), [7, 8, 3, i64::MAX, 1]);
    }

    #[test]
    fn whole_bodies_round_trip_compressed_or_not() {
        for text in ["", "{}", "not json", &"long and repetitive ".repeat(100)] {
            let stored = encode_whole(text);
            assert_eq!(decode(&stored).unwrap(), Body::Whole(text.to_owned()));
        }
        assert_eq!(encode_whole(&"x".repeat(1000))[0], WHOLE_ZSTD);
        assert_eq!(decode(&encode_dropped()).unwrap(), Body::Dropped);
    }

    #[test]
    fn damaged_bodies_are_errors() {
        let skeleton = encode_skeleton(&[Segment::Text("ab"), Segment::Part(300)]);
        for bad in [
            &[][..],
            &[9],
            &[DROPPED, 0],
            &[WHOLE, 0xff, 0xfe],
            &[WHOLE_ZSTD, 5, 1, 2, 3],
            &[SKELETON, 0xff],
            &[SKELETON, 1, 10, b'a'],
            &[SKELETON, 0, 0, 0],
            &[
                SKELETON, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
            ],
            &skeleton[..skeleton.len() - 1],
        ] {
            let result = decode(bad).and_then(|b| match b {
                Body::Skeleton(s) => segments(&s).map(|_| ()),
                _ => Ok(()),
            });
            assert!(result.is_err(), "{bad:?}");
        }
    }

    #[test]
    fn arbitrary_bytes_decode_to_an_error_or_a_body_never_a_panic() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in 0..2000 {
            let bytes: Vec<u8> = (0..len % 40)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Mostly valid tags and small lengths, so decoding gets past the first byte.
                    if x.is_multiple_of(3) {
                        (x >> 8) as u8 % 5
                    } else {
                        (x >> 16) as u8
                    }
                })
                .collect();
            if let Ok(Body::Skeleton(skeleton)) = decode(&bytes) {
                let _ = segments(&skeleton);
                let _ = part_ids(&skeleton);
            }
        }
    }

    #[test]
    fn numbers_round_trip() {
        for n in [0i64, 1, -1, 63, -64, 64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(n)), n);
            let mut buf = Vec::new();
            put_varint(&mut buf, zigzag(n));
            assert_eq!(get_varint(&mut &buf[..]).unwrap(), zigzag(n));
        }
    }
}
