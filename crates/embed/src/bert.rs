//! The BERT encoder (embeddings + transformer layers), inference only, on candle.

use candle_core::{DType, Module, Tensor};
use candle_nn::LayerNorm;

use crate::config::BertConfig;
use crate::error::{Result, invalid};
use crate::layout;
use crate::weights::Weights;

/// Name of the word-embedding table, the one tensor kept in f16: it is most of a multilingual
/// model (250k tokens × 384 = 384 MB in f32), only rows are looked up, and f16 keeps 3
/// significant digits, far below what changes a sentence vector.
pub const WORD_EMBEDDINGS: &str = "embeddings.word_embeddings.weight";

pub struct Bert {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    hidden: usize,
}

struct Layer {
    /// Query, key and value in one product (`[hidden, 3 × hidden]`): one matrix product
    /// instead of three, each too small to keep the kernels busy for a query's few tokens.
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

    fn apply(self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Self::GeluErf => crate::gelu::gelu_erf(x),
            Self::GeluTanh => x.gelu(),
            Self::Relu => x.relu(),
        }
    }
}

impl Bert {
    pub fn new(config: &BertConfig, weights: &mut Weights) -> Result<Self> {
        let h = config.hidden_size;
        let eps = config.layer_norm_eps;
        let act = Activation::parse(&config.hidden_act)?;
        let word = weights.take(WORD_EMBEDDINGS, &[config.vocab_size, h])?;
        let position = weights.take(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?;
        // Sentences are single segments: every token type is 0, so only row 0 is kept.
        let token_type = weights
            .take(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab_size, h],
            )?
            .get(0)?;
        let embed_norm = norm(weights, "embeddings.LayerNorm", h, eps)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let i_size = config.intermediate_size;
            layers.push(Layer {
                qkv: Linear::side_by_side(&[
                    linear(weights, &format!("{p}.attention.self.query"), h, h)?,
                    linear(weights, &format!("{p}.attention.self.key"), h, h)?,
                    linear(weights, &format!("{p}.attention.self.value"), h, h)?,
                ])?,
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
            position,
            token_type,
            embed_norm,
            layers,
            heads: config.num_attention_heads,
            head_dim: h / config.num_attention_heads,
            hidden: h,
        })
    }

    /// Token vectors `[batch, seq, hidden]` for `ids` `[batch, seq]` (u32) with `mask`
    /// `[batch, seq]` (f32, 1 for tokens, 0 for padding).
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, seq) = ids.dims2()?;
        let words = self
            .word
            .index_select(&ids.flatten_all()?, 0)?
            .to_dtype(DType::F32)?
            .reshape((batch, seq, self.hidden))?;
        let x = words
            .broadcast_add(&self.position.narrow(0, 0, seq)?)?
            .broadcast_add(&self.token_type)?;
        // Rows of the hidden state stay [batch * seq, hidden] so each Linear is one matmul.
        let mut x = self
            .embed_norm
            .forward(&x)?
            .reshape((batch * seq, self.hidden))?;

        // Padding gets a large negative score before the softmax, so no token attends to it.
        let bias = ((mask.to_dtype(DType::F32)? - 1.0)? * 1e4)?.reshape((batch, 1, 1, seq))?;
        for layer in &self.layers {
            x = self.layer(layer, &x, &bias, batch, seq)?;
        }
        x.reshape((batch, seq, self.hidden))
    }

    fn layer(
        &self,
        l: &Layer,
        x: &Tensor,
        bias: &Tensor,
        batch: usize,
        seq: usize,
    ) -> candle_core::Result<Tensor> {
        // [rows, 3 × hidden] → [3, batch, heads, seq, head_dim]: q, k and v, one copy.
        let qkv = l
            .qkv
            .forward(x)?
            .reshape((batch, seq, 3, self.heads, self.head_dim))?
            .permute((2, 0, 3, 1, 4))?
            .contiguous()?;
        let (q, k, v) = (qkv.get(0)?, qkv.get(1)?, qkv.get(2)?);
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(bias)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((batch * seq, self.hidden))?;
        let attended = l.attn_norm.forward(&(l.attn_out.forward(&context)? + x)?)?;
        let up = l.act.apply(&l.up.forward(&attended)?)?;
        l.out_norm.forward(&(l.down.forward(&up)? + attended)?)
    }
}

/// A dense layer whose weight is stored transposed (`[in, out]`, contiguous): gemm then
/// reads it row-major instead of repacking a transposed view on every call, which for
/// the few-token inputs of a query cost more than the multiplication itself.
struct Linear {
    weight_t: Tensor,
    bias: Vec<f32>,
}

impl Linear {
    /// One layer computing `parts`' outputs side by side, in order.
    fn side_by_side(parts: &[Linear]) -> candle_core::Result<Self> {
        let weights: Vec<&Tensor> = parts.iter().map(|p| &p.weight_t).collect();
        Ok(Linear {
            weight_t: Tensor::cat(&weights, 1)?.contiguous()?,
            bias: parts.iter().flat_map(|p| p.bias.iter().copied()).collect(),
        })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        add_bias(&x.matmul(&self.weight_t)?, &self.bias)
    }
}

/// `y + bias` on every row of `y` (`[rows, bias.len()]`). candle's `broadcast_add` walks an
/// index per element, which was a tenth of embedding a question; a pass over the rows is
/// plain arithmetic the compiler vectorises.
fn add_bias(y: &Tensor, bias: &[f32]) -> candle_core::Result<Tensor> {
    let outputs = y.dims().last().copied().unwrap_or(0);
    if bias.len() != outputs || outputs == 0 {
        return Err(candle_core::Error::Msg(format!(
            "a bias of {} values for {outputs} outputs",
            bias.len()
        )));
    }
    let mut v = y.flatten_all()?.to_vec1::<f32>()?;
    for row in v.chunks_exact_mut(bias.len()) {
        for (e, b) in row.iter_mut().zip(bias) {
            *e += b;
        }
    }
    Tensor::from_vec(v, y.shape(), y.device())
}

fn linear(w: &mut Weights, prefix: &str, input: usize, output: usize) -> Result<Linear> {
    let weight = w.take(&format!("{prefix}.weight"), &[output, input])?;
    let bias = w.take(&format!("{prefix}.bias"), &[output])?;
    Ok(Linear {
        weight_t: weight.t()?.contiguous()?,
        bias: bias.to_dtype(DType::F32)?.to_vec1()?,
    })
}

fn norm(w: &mut Weights, prefix: &str, size: usize, eps: f64) -> Result<LayerNorm> {
    // Older checkpoints name the LayerNorm parameters gamma and beta.
    let (weight, bias) = if w.contains(&format!("{prefix}.gamma")) {
        ("gamma", "beta")
    } else {
        ("weight", "bias")
    };
    let weight = w.take(&format!("{prefix}.{weight}"), &[size])?;
    let bias = w.take(&format!("{prefix}.{bias}"), &[size])?;
    Ok(LayerNorm::new(weight, bias, eps))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use candle_core::Device;

    use super::*;

    #[test]
    fn the_bias_is_added_to_every_row_as_a_broadcast_add_does() {
        let y = Tensor::from_vec(
            (0..12).map(|i| i as f32 * 0.5).collect(),
            (4, 3),
            &Device::Cpu,
        )
        .unwrap();
        let bias = [1.0_f32, -2.0, 0.25];
        let want = y
            .broadcast_add(&Tensor::new(&bias, &Device::Cpu).unwrap())
            .unwrap();
        let got = add_bias(&y, &bias).unwrap();
        assert_eq!(got.dims(), [4, 3]);
        assert_eq!(
            got.to_vec2::<f32>().unwrap(),
            want.to_vec2::<f32>().unwrap()
        );
        assert!(
            add_bias(&y, &[1.0, 2.0]).is_err(),
            "a bias of another length"
        );
    }

    #[test]
    fn layers_side_by_side_give_each_layer_s_outputs_in_order() {
        let dense = |seed: f32, outputs: usize| Linear {
            weight_t: Tensor::from_vec(
                (0..3 * outputs).map(|i| (i as f32 * seed).sin()).collect(),
                (3, outputs),
                &Device::Cpu,
            )
            .unwrap(),
            bias: (0..outputs).map(|i| seed + i as f32).collect(),
        };
        let parts = [dense(0.7, 2), dense(1.3, 4), dense(-0.4, 1)];
        let x = Tensor::from_vec(
            vec![0.5_f32, -1.0, 2.0, 1.5, 0.0, -0.25],
            (2, 3),
            &Device::Cpu,
        )
        .unwrap();
        let fused = Linear::side_by_side(&parts).unwrap().forward(&x).unwrap();
        let separate: Vec<Tensor> = parts.iter().map(|p| p.forward(&x).unwrap()).collect();
        let want = Tensor::cat(&separate, 1).unwrap();
        assert_eq!(fused.dims(), [2, 7]);
        assert_eq!(
            fused.to_vec2::<f32>().unwrap(),
            want.to_vec2::<f32>().unwrap()
        );
    }
}
