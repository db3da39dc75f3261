//! The BERT encoder (embeddings + transformer layers), inference only, in plain Rust over
//! slices: the dense layers on integers ([`Int8Linear`]), attention, normalisation and
//! activations as loops the compiler vectorises. A question is a few dozen tokens; a tensor
//! library's per-operation allocations and thread hand-offs cost as much as the arithmetic.

use std::ops::Range;

use half::f16;

use crate::attention::attend;
use crate::config::BertConfig;
use crate::error::{Result, invalid};
use crate::gelu;
use crate::int8::Int8Linear;
use crate::layer_norm::LayerNorm;
use crate::layout;
use crate::weights::Weights;

/// Name of the word-embedding table, the one tensor kept in f16: it is most of a multilingual
/// model (250k tokens × 384 = 384 MB in f32), only rows are looked up, and f16 keeps 3
/// significant digits, far below what changes a sentence vector.
pub const WORD_EMBEDDINGS: &str = "embeddings.word_embeddings.weight";

pub struct Bert {
    word: Vec<f16>,
    vocab: usize,
    position: Vec<f32>,
    positions: usize,
    token_type: Vec<f32>,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    hidden: usize,
}

struct Layer {
    /// Query, key and value in one product (`[hidden, 3 × hidden]`): one pass over the
    /// tokens instead of three.
    qkv: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    up: Linear,
    down: Linear,
    out_norm: LayerNorm,
    act: Activation,
}

#[derive(Clone, Copy)]
enum Activation {
    GeluErf,
    GeluTanh,
    Relu,
}

impl Activation {
    fn parse(name: &str) -> Result<Self> {
        match name {
            "gelu" => Ok(Self::GeluErf),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Ok(Self::GeluTanh),
            "relu" => Ok(Self::Relu),
            other => Err(invalid(
                layout::CONFIG,
                format!("hidden_act {other:?} is not supported"),
            )),
        }
    }

    fn apply(self, x: &mut [f32]) {
        match self {
            Self::GeluErf => gelu::gelu_erf(x),
            Self::GeluTanh => gelu::gelu_tanh(x),
            Self::Relu => gelu::relu(x),
        }
    }
}

impl Bert {
    pub fn new(config: &BertConfig, weights: &mut Weights) -> Result<Self> {
        let h = config.hidden_size;
        let eps = config.layer_norm_eps;
        let act = Activation::parse(&config.hidden_act)?;
        if config.num_attention_heads == 0 || !h.is_multiple_of(config.num_attention_heads) {
            return Err(invalid(
                layout::CONFIG,
                format!(
                    "hidden_size {h} is not a multiple of num_attention_heads {}",
                    config.num_attention_heads
                ),
            ));
        }
        let word = weights
            .take(WORD_EMBEDDINGS, &[config.vocab_size, h])?
            .into_f16();
        let position = weights
            .take(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, h],
            )?
            .into_f32();
        // Sentences are single segments: every token type is 0, so only row 0 is kept.
        let mut token_type = weights
            .take(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab_size, h],
            )?
            .into_f32();
        if config.type_vocab_size == 0 {
            return Err(invalid(layout::CONFIG, "type_vocab_size is 0"));
        }
        token_type.truncate(h);
        let embed_norm = norm(weights, "embeddings.LayerNorm", h, eps)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let i_size = config.intermediate_size;
            layers.push(Layer {
                qkv: Linear::side_by_side(
                    &format!("{p}.attention.self"),
                    vec![
                        dense(weights, &format!("{p}.attention.self.query"), h, h)?,
                        dense(weights, &format!("{p}.attention.self.key"), h, h)?,
                        dense(weights, &format!("{p}.attention.self.value"), h, h)?,
                    ],
                )?,
                attn_out: linear(weights, &format!("{p}.attention.output.dense"), h, h)?,
                attn_norm: norm(weights, &format!("{p}.attention.output.LayerNorm"), h, eps)?,
                up: linear(weights, &format!("{p}.intermediate.dense"), h, i_size)?,
                down: linear(weights, &format!("{p}.output.dense"), i_size, h)?,
                out_norm: norm(weights, &format!("{p}.output.LayerNorm"), h, eps)?,
                act,
            });
        }
        Ok(Self {
            word,
            vocab: config.vocab_size,
            position,
            positions: config.max_position_embeddings,
            token_type,
            embed_norm,
            layers,
            heads: config.num_attention_heads,
            head_dim: h / config.num_attention_heads,
            hidden: h,
        })
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Token vectors (`hidden` wide, row-major) of every text's tokens, the texts one after
    /// another, with each text's range of rows. No text may be longer than the model's
    /// positions or hold an id outside its vocabulary.
    pub fn forward(&self, texts: &[&[u32]]) -> Result<(Vec<f32>, Vec<Range<usize>>)> {
        let h = self.hidden;
        let mut ranges = Vec::with_capacity(texts.len());
        let mut x = Vec::with_capacity(texts.iter().map(|t| t.len()).sum::<usize>() * h);
        for ids in texts {
            if ids.len() > self.positions {
                return Err(invalid(
                    layout::CONFIG,
                    format!("{} tokens for {} positions", ids.len(), self.positions),
                ));
            }
            let first = x.len() / h;
            for (pos, &id) in ids.iter().enumerate() {
                let id = id as usize;
                if id >= self.vocab {
                    return Err(invalid(
                        layout::TOKENIZER,
                        format!("token id {id} outside a vocabulary of {}", self.vocab),
                    ));
                }
                let word = &self.word[id * h..(id + 1) * h];
                let position = &self.position[pos * h..(pos + 1) * h];
                x.extend(
                    word.iter()
                        .zip(position)
                        .zip(&self.token_type)
                        .map(|((w, p), t)| w.to_f32() + p + t),
                );
            }
            ranges.push(first..first + ids.len());
        }
        self.embed_norm.apply(&mut x);
        for layer in &self.layers {
            x = self.layer(layer, &x, &ranges)?;
        }
        Ok((x, ranges))
    }

    fn layer(&self, l: &Layer, x: &[f32], texts: &[Range<usize>]) -> Result<Vec<f32>> {
        let qkv = l.qkv.forward(x)?;
        let context = attend(&qkv, texts, self.heads, self.head_dim);
        let mut attended = l.attn_out.forward(&context)?;
        add(&mut attended, x);
        l.attn_norm.apply(&mut attended);
        let mut up = l.up.forward(&attended)?;
        l.act.apply(&mut up);
        let mut out = l.down.forward(&up)?;
        add(&mut out, &attended);
        l.out_norm.apply(&mut out);
        Ok(out)
    }
}

/// `x += residual`, element by element.
fn add(x: &mut [f32], residual: &[f32]) {
    for (a, b) in x.iter_mut().zip(residual) {
        *a += b;
    }
}

/// A dense layer on 8-bit integers ([`Int8Linear`]): a question's few tokens pass through
/// every weight of the encoder, and in 8 bits those are a quarter of the memory to read and
/// several times fewer instructions to multiply.
struct Linear {
    layer: Int8Linear,
    inputs: usize,
}

/// An f32 layer before quantization: weight `[outputs, inputs]` row-major, and its bias.
struct Dense {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
}

impl Linear {
    /// One layer computing `parts`' outputs side by side, in order: for a query's few tokens
    /// one product over all of them keeps the kernels busier than three.
    fn side_by_side(name: &str, parts: Vec<Dense>) -> Result<Self> {
        let inputs = parts.first().map_or(0, |p| p.inputs);
        let (mut weight, mut bias) = (Vec::new(), Vec::new());
        for part in parts {
            weight.extend(part.weight);
            bias.extend(part.bias);
        }
        let outputs = bias.len();
        let layer = Int8Linear::new(&weight, outputs, inputs, bias)
            .ok_or_else(|| invalid(layout::WEIGHTS, format!("{name}: a weight is not finite")))?;
        Ok(Self { layer, inputs })
    }

    /// `x` `[rows, inputs]` to `[rows, outputs]`, row-major.
    fn forward(&self, x: &[f32]) -> Result<Vec<f32>> {
        self.layer.forward(x, self.inputs).ok_or_else(|| {
            invalid(
                layout::WEIGHTS,
                format!("{} values for a layer of {} inputs", x.len(), self.inputs),
            )
        })
    }
}

fn dense(w: &mut Weights, prefix: &str, input: usize, output: usize) -> Result<Dense> {
    let weight = w.take(&format!("{prefix}.weight"), &[output, input])?;
    let bias = w.take(&format!("{prefix}.bias"), &[output])?;
    Ok(Dense {
        weight: weight.into_f32(),
        bias: bias.into_f32(),
        inputs: input,
    })
}

fn linear(w: &mut Weights, prefix: &str, input: usize, output: usize) -> Result<Linear> {
    Linear::side_by_side(prefix, vec![dense(w, prefix, input, output)?])
}

fn norm(w: &mut Weights, prefix: &str, size: usize, eps: f64) -> Result<LayerNorm> {
    // Older checkpoints name the LayerNorm parameters gamma and beta.
    let (weight, bias) = if w.contains(&format!("{prefix}.gamma")) {
        ("gamma", "beta")
    } else {
        ("weight", "bias")
    };
    let weight = w.take(&format!("{prefix}.{weight}"), &[size])?.into_f32();
    let bias = w.take(&format!("{prefix}.{bias}"), &[size])?.into_f32();
    LayerNorm::new(weight, bias, eps)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn layers_side_by_side_give_each_layer_s_outputs_in_order() {
        let part = |seed: f32, outputs: usize| Dense {
            weight: (0..3 * outputs).map(|i| (i as f32 * seed).sin()).collect(),
            bias: (0..outputs).map(|i| seed + i as f32).collect(),
            inputs: 3,
        };
        let parts = || vec![part(0.7, 2), part(1.3, 4), part(-0.4, 1)];
        let x = [0.5_f32, -1.0, 2.0, 1.5, 0.0, -0.25];
        let fused = Linear::side_by_side("fused", parts())
            .unwrap()
            .forward(&x)
            .unwrap();
        let separate: Vec<Vec<f32>> = parts()
            .into_iter()
            .map(|p| {
                Linear::side_by_side("one", vec![p])
                    .unwrap()
                    .forward(&x)
                    .unwrap()
            })
            .collect();
        assert_eq!(fused.len(), 2 * 7);
        for (row, fused) in fused.chunks(7).enumerate() {
            let want: Vec<f32> = separate
                .iter()
                .flat_map(|s| {
                    let width = s.len() / 2;
                    s[row * width..(row + 1) * width].to_vec()
                })
                .collect();
            assert_eq!(fused, want.as_slice(), "row {row}");
        }
        assert!(
            Linear::side_by_side("one", vec![part(0.7, 2)])
                .unwrap()
                .forward(&[1.0; 4])
                .is_err(),
            "rows of another width"
        );
    }

    #[test]
    fn a_weight_that_is_not_finite_is_a_clear_error() {
        let bad = Dense {
            weight: vec![1.0, f32::INFINITY],
            bias: vec![0.0],
            inputs: 2,
        };
        let err = Linear::side_by_side("encoder.layer.3.output.dense", vec![bad])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("encoder.layer.3.output.dense"), "{err}");
    }
}
