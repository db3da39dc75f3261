//! zstd for stored bodies and parts.

use std::cell::RefCell;
use std::io::Read;

use zstd::bulk::{Compressor, Decompressor};

/// zstd's default: most of the gain of higher levels on text, at a fraction of their time
/// (each part is compressed once, when a turn first sends it).
const LEVEL: i32 = 3;

/// Shorter inputs are stored as they are: zstd's frame costs more than it saves on them.
const MIN_INPUT_BYTES: usize = 64;

/// Outputs up to this size are decompressed in one call into a buffer of the stored size;
/// larger ones are streamed, so a damaged size field cannot make us allocate gigabytes.
const BULK_LIMIT: usize = 16 << 20;

thread_local! {
    // zstd's contexts, kept by each thread that writes or reads bodies: creating one costs
    // more than compressing a message.
    static COMPRESSOR: RefCell<Option<Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<Decompressor<'static>>> = const { RefCell::new(None) };
}

/// `data` compressed, when that saves at least an eighth of it.
pub(crate) fn compress(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < MIN_INPUT_BYTES {
        return None;
    }
    let packed = COMPRESSOR.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        let compressor = match &mut *slot {
            Some(compressor) => compressor,
            empty => empty.insert(Compressor::new(LEVEL).ok()?),
        };
        compressor.compress(data).ok()
    })?;
    (packed.len() + data.len() / 8 <= data.len()).then_some(packed)
}

/// The `raw_len` bytes `data` was compressed from; an error (never a panic) when `data` is not
/// a zstd frame of exactly that size.
pub(crate) fn decompress(data: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    let out = if raw_len <= BULK_LIMIT {
        DECOMPRESSOR
            .with(|cell| {
                let mut slot = cell.try_borrow_mut().map_err(|e| e.to_string())?;
                let decompressor = match &mut *slot {
                    Some(decompressor) => decompressor,
                    empty => empty.insert(Decompressor::new().map_err(|e| e.to_string())?),
                };
                decompressor
                    .decompress(data, raw_len)
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| format!("zstd: {e}"))?
    } else {
        let decoder = zstd::stream::read::Decoder::new(data).map_err(|e| format!("zstd: {e}"))?;
        let mut out = Vec::new();
        let limit = u64::try_from(raw_len).unwrap_or(u64::MAX).saturating_add(1);
        decoder
            .take(limit)
            .read_to_end(&mut out)
            .map_err(|e| format!("zstd: {e}"))?;
        out
    };
    if out.len() == raw_len {
        Ok(out)
    } else {
        Err(format!(
            "zstd: {} bytes decompressed, {raw_len} expected",
            out.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn text_round_trips_and_short_or_random_input_is_left_alone() {
        let text = "the same words again and again, ".repeat(40);
        let packed = compress(text.as_bytes()).unwrap();
        assert!(packed.len() < text.len() / 4);
        assert_eq!(decompress(&packed, text.len()).unwrap(), text.as_bytes());
        assert_eq!(compress(b"short"), None);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        assert_eq!(compress(&noise), None);
    }

    #[test]
    fn damaged_frames_and_wrong_sizes_are_errors() {
        let text = "a sentence worth compressing, ".repeat(20);
        let packed = compress(text.as_bytes()).unwrap();
        assert!(decompress(&packed, text.len() - 1).is_err());
        assert!(decompress(&packed, text.len() + 1).is_err());
        assert!(decompress(&packed, BULK_LIMIT + 1).is_err());
        assert!(decompress(&packed[..packed.len() / 2], text.len()).is_err());
        assert!(decompress(b"not zstd at all", 15).is_err());
        let mut flipped = packed.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 0xff;
        // A flipped byte either fails the frame or changes the output's length; a same-length
        // result would be caught by the part's hash.
        if let Ok(out) = decompress(&flipped, text.len()) {
            assert_eq!(out.len(), text.len());
        }
    }
}
