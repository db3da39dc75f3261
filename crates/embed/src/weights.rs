//! Reads `model.safetensors` into memory, tensor by tensor.
//!
//! No mmap: the workspace forbids unsafe code, and a mapped file that is truncated or replaced
//! underneath would kill the process with SIGBUS. Reading and converting a megabyte at a time
//! keeps the peak at the loaded model's size instead of file + model, and the bytes are hashed
//! on the way for `model_id`.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use half::{bf16, f16};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::{EmbedError, IoContext, Result, invalid};

/// A header larger than this is not a model's (the multilingual model's is ~20 KB).
const MAX_HEADER: u64 = 16 << 20;

#[derive(Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// The tensors by name, as f32 except those `narrow` picks, which become f16.
pub struct Weights {
    tensors: HashMap<String, Array>,
}

/// One tensor: its shape and its values, row-major.
pub struct Array {
    shape: Vec<usize>,
    values: Values,
}

enum Values {
    F32(Vec<f32>),
    F16(Vec<f16>),
}

impl Array {
    pub fn into_f32(self) -> Vec<f32> {
        match self.values {
            Values::F32(v) => v,
            Values::F16(v) => v.iter().map(|x| x.to_f32()).collect(),
        }
    }

    pub fn into_f16(self) -> Vec<f16> {
        match self.values {
            Values::F32(v) => v.iter().map(|x| f16::from_f32(*x)).collect(),
            Values::F16(v) => v,
        }
    }
}

impl Weights {
    /// Reads every tensor, feeding all the file's bytes to `hasher`.
    pub fn read(path: &Path, hasher: &mut Sha256, narrow: impl Fn(&str) -> bool) -> Result<Self> {
        let mut file = File::open(path).at(path)?;
        let file_len = file.metadata().at(path)?.len();

        let mut len_bytes = [0u8; 8];
        file.read_exact(&mut len_bytes)
            .map_err(|_| truncated(path))?;
        hasher.update(len_bytes);
        let header_len = u64::from_le_bytes(len_bytes);
        if header_len > MAX_HEADER || 8 + header_len > file_len {
            return Err(truncated(path));
        }
        let mut header = vec![0u8; to_usize(header_len, path)?];
        file.read_exact(&mut header).map_err(|_| truncated(path))?;
        hasher.update(&header);
        let header: HashMap<String, serde_json::Value> = serde_json::from_slice(&header)
            .map_err(|e| invalid(path, format!("bad safetensors header: {e}")))?;

        let mut entries = Vec::with_capacity(header.len());
        for (name, value) in header {
            if name == "__metadata__" {
                continue;
            }
            let entry: Entry = serde_json::from_value(value)
                .map_err(|e| invalid(path, format!("bad header entry {name}: {e}")))?;
            entries.push((name, entry));
        }
        entries.sort_by_key(|(_, e)| e.data_offsets[0]);

        // The format stores tensors back to back; checking that the header covers exactly the
        // rest of the file catches a truncated download before anything large is allocated.
        let data_len = file_len - 8 - header_len;
        let mut end = 0;
        for (name, entry) in &entries {
            let [start, stop] = entry.data_offsets;
            if start != end || stop < start {
                return Err(invalid(
                    path,
                    format!("tensor {name} is not where the header chain expects it"),
                ));
            }
            if let Some(size) = dtype_size(&entry.dtype) {
                let bytes = entry
                    .shape
                    .iter()
                    .try_fold(size, |acc, &d| acc.checked_mul(d));
                if bytes.map(|b| b as u64) != Some(stop - start) {
                    return Err(invalid(
                        path,
                        format!("tensor {name}'s size does not match its shape"),
                    ));
                }
            }
            end = stop;
        }
        if end != data_len {
            return Err(invalid(
                path,
                format!(
                    "the header describes {end} bytes of tensors but the file holds {data_len}: \
                     it is truncated or corrupted"
                ),
            ));
        }

        let mut tensors = HashMap::with_capacity(entries.len());
        let mut chunk = vec![0u8; CHUNK];
        for (name, entry) in entries {
            let [start, stop] = entry.data_offsets;
            let mut reader = Chunks {
                file: &mut file,
                hasher: &mut *hasher,
                chunk: &mut chunk,
                left: to_usize(stop - start, path)?,
            };
            let Some(source) = Float::parse(&entry.dtype) else {
                // Integer buffers such as position_ids are not weights, but they are hashed.
                while reader.next().map_err(|_| truncated(path))?.is_some() {}
                continue;
            };
            let values = if narrow(&name) {
                Values::F16(reader.decode(source, path, f16::from_f32)?)
            } else {
                Values::F32(reader.decode(source, path, |x| x)?)
            };
            let shape = entry.shape;
            tensors.insert(name, Array { shape, values });
        }
        Ok(Self { tensors })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name) || self.tensors.contains_key(&format!("bert.{name}"))
    }

    /// Takes a tensor out by its BERT name, with or without the `bert.` prefix that
    /// `BertForXxx` checkpoints add, checking its shape.
    pub fn take(&mut self, name: &str, shape: &[usize]) -> Result<Array> {
        let tensor = match self.tensors.remove(name) {
            Some(t) => t,
            None => self
                .tensors
                .remove(&format!("bert.{name}"))
                .ok_or_else(|| {
                    invalid(crate::layout::WEIGHTS, format!("tensor {name} is missing"))
                })?,
        };
        if tensor.shape != shape {
            return Err(invalid(
                crate::layout::WEIGHTS,
                format!(
                    "tensor {name} has shape {:?}, config.json implies {shape:?}",
                    tensor.shape
                ),
            ));
        }
        Ok(tensor)
    }
}

fn dtype_size(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "F64" | "I64" | "U64" => 8,
        "F32" | "I32" | "U32" => 4,
        "F16" | "BF16" | "I16" | "U16" => 2,
        "I8" | "U8" | "BOOL" => 1,
        _ => return None,
    })
}

/// Tensors are read and converted this many bytes at a time, so loading never holds a raw
/// copy of a tensor beside its converted one (a multilingual embedding table is 384 MB raw).
const CHUNK: usize = 1 << 20;

/// A float format stored in the file.
#[derive(Clone, Copy)]
enum Float {
    F64,
    F32,
    F16,
    Bf16,
}

impl Float {
    fn parse(dtype: &str) -> Option<Self> {
        match dtype {
            "F64" => Some(Self::F64),
            "F32" => Some(Self::F32),
            "F16" => Some(Self::F16),
            "BF16" => Some(Self::Bf16),
            _ => None,
        }
    }

    fn size(self) -> usize {
        match self {
            Self::F64 => 8,
            Self::F32 => 4,
            Self::F16 | Self::Bf16 => 2,
        }
    }

    /// One little-endian value of this format, `bytes` exactly its size.
    fn read(self, bytes: &[u8]) -> f32 {
        let mut b = [0_u8; 8];
        b[..bytes.len()].copy_from_slice(bytes);
        match self {
            Self::F64 => f64::from_le_bytes(b) as f32,
            Self::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            Self::F16 => f16::from_le_bytes([b[0], b[1]]).to_f32(),
            Self::Bf16 => bf16::from_le_bytes([b[0], b[1]]).to_f32(),
        }
    }
}

/// One tensor's bytes, read and hashed a chunk at a time.
struct Chunks<'a> {
    file: &'a mut File,
    hasher: &'a mut Sha256,
    chunk: &'a mut [u8],
    left: usize,
}

impl Chunks<'_> {
    fn next(&mut self) -> std::io::Result<Option<&[u8]>> {
        if self.left == 0 {
            return Ok(None);
        }
        let n = self.left.min(self.chunk.len());
        let bytes = &mut self.chunk[..n];
        self.file.read_exact(bytes)?;
        self.hasher.update(&*bytes);
        self.left -= n;
        Ok(Some(bytes))
    }

    /// The values, each read as f32 and stored through `into`, a chunk at a time.
    fn decode<T>(mut self, source: Float, path: &Path, into: impl Fn(f32) -> T) -> Result<Vec<T>> {
        let size = source.size();
        let mut values = Vec::with_capacity(self.left / size);
        // CHUNK is a multiple of every element size, so no element straddles two chunks.
        while let Some(bytes) = self.next().map_err(|_| truncated(path))? {
            values.extend(bytes.chunks_exact(size).map(|b| into(source.read(b))));
        }
        Ok(values)
    }
}

fn truncated(path: &Path) -> EmbedError {
    invalid(path, "the file is truncated or not a safetensors file")
}

fn to_usize(n: u64, path: &Path) -> Result<usize> {
    usize::try_from(n).map_err(|_| invalid(path, "too large for this machine"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn safetensors(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn read(bytes: &[u8]) -> Result<Weights> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.safetensors");
        std::fs::write(&path, bytes).unwrap();
        Weights::read(&path, &mut Sha256::new(), |name| name == "half")
    }

    const HEADER: &str = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"half":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}"#;

    #[test]
    fn tensors_are_read_and_named_ones_narrowed() {
        let data: Vec<u8> = [1.0f32, 2.0, 0.5]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let mut w = read(&safetensors(HEADER, &data)).unwrap();
        assert!(w.contains("a") && !w.contains("b"));
        let a = w.take("a", &[2]).unwrap();
        assert_eq!(a.into_f32(), [1.0, 2.0]);
        let half = w.take("half", &[1]).unwrap();
        assert!(matches!(half.values, Values::F16(_)));
        assert_eq!(half.into_f16(), [f16::from_f32(0.5)]);
        assert!(w.take("a", &[2]).is_err(), "taken twice");
    }

    #[test]
    fn every_float_format_reads_as_its_value() {
        let mut data = Vec::new();
        data.extend(1.5f64.to_le_bytes());
        data.extend((-2.25f32).to_le_bytes());
        data.extend(f16::from_f32(0.5).to_le_bytes());
        data.extend(bf16::from_f32(-3.0).to_le_bytes());
        data.extend(7_i32.to_le_bytes());
        let header = r#"{"d":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"f":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},"h":{"dtype":"F16","shape":[1],"data_offsets":[12,14]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[14,16]},"ids":{"dtype":"I32","shape":[1],"data_offsets":[16,20]}}"#;
        let mut w = read(&safetensors(header, &data)).unwrap();
        for (name, want) in [("d", 1.5), ("f", -2.25), ("h", 0.5), ("b", -3.0)] {
            assert_eq!(w.take(name, &[1]).unwrap().into_f32(), [want], "{name}");
        }
        assert!(!w.contains("ids"), "integer buffers are not weights");
    }

    #[test]
    fn a_short_file_is_refused_before_reading_tensors() {
        let err = read(&safetensors(HEADER, &[0u8; 10])).err().unwrap();
        assert!(err.to_string().contains("truncated"), "{err}");
        let err = read(&[1, 2, 3]).err().unwrap();
        assert!(err.to_string().contains("truncated"), "{err}");
    }

    #[test]
    fn a_wrong_shape_names_the_tensor() {
        let data = [0u8; 12];
        let mut w = read(&safetensors(HEADER, &data)).unwrap();
        let err = w.take("a", &[3]).err().unwrap();
        assert!(err.to_string().contains("tensor a has shape [2]"), "{err}");
    }
}
