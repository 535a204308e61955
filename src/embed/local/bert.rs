//! The BERT encoder's forward pass (inference only), on the `gemm` crate's matrix
//! multiply.
//!
//! It computes what Hugging Face's `BertModel` computes for sentence embedding: token +
//! position + token-type-0 embeddings, layer norm, then per layer self-attention
//! (12 heads for MiniLM), a residual layer norm, the feed-forward block with the exact
//! (erf) GELU and a second residual layer norm. The last hidden states go to pooling.
//!
//! Texts are **packed, not padded**: a batch is the concatenation of its texts' tokens,
//! so every dense layer is one matrix multiply over all tokens of the batch, and
//! attention runs per text over that text's tokens only. Padding in the reference
//! implementation only ever receives zero attention weight, so packing gives the same
//! numbers without computing padded rows. Each multiply is single-threaded; callers run
//! batches in parallel, so the result of a text depends only on its batch, never on the
//! thread count.
//!
//! `exp` (softmax) and `erf` (GELU) are branch-free polynomial forms that the compiler
//! vectorizes; both are accurate to about 2e-7, well below what changes an embedding's
//! cosine in the sixth decimal (checked against sentence-transformers by the parity test).

use std::path::Path;

use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use crate::error::{Error, Problem};

/// The `config.json` fields the forward pass reads.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "default_layer_norm_eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "default_hidden_act")]
    pub hidden_act: String,
    #[serde(default = "default_position_embedding_type")]
    pub position_embedding_type: String,
}

fn default_layer_norm_eps() -> f64 {
    1e-12
}

fn default_hidden_act() -> String {
    "gelu".into()
}

fn default_position_embedding_type() -> String {
    "absolute".into()
}

/// `y = x Wᵀ + b` with `W` stored as PyTorch does: `outputs` rows of `inputs` values.
struct Linear {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    epsilon: f32,
}

struct EncoderLayer {
    /// Query, key and value projections stacked into one `3h × h` matrix.
    query_key_value: Linear,
    attention_output: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// A loaded BERT encoder.
pub struct BertEncoder {
    hidden: usize,
    heads: usize,
    max_positions: usize,
    word_embeddings: Vec<f32>,
    position_embeddings: Vec<f32>,
    /// Row 0 of the token-type embeddings (every token is segment 0).
    token_type_embedding: Vec<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<EncoderLayer>,
    vocabulary_size: usize,
}

/// Reads tensors out of a safetensors file, accepting names with or without the
/// `bert.` prefix that some checkpoints carry.
struct TensorSource<'data> {
    tensors: SafeTensors<'data>,
    prefix: &'static str,
    path: &'data Path,
}

impl TensorSource<'_> {
    fn problem(&self, message: String) -> Error {
        Error::problem(Problem::new(self.path, None, message))
    }

    fn read(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, Error> {
        let full_name = format!("{}{name}", self.prefix);
        let view = self.tensors.tensor(&full_name).map_err(|_| {
            self.problem(format!(
                "has no tensor `{full_name}`; is this a BERT-family sentence-transformers model?"
            ))
        })?;
        if view.shape() != shape {
            return Err(self.problem(format!(
                "tensor `{full_name}` has shape {:?}; config.json implies {shape:?}",
                view.shape()
            )));
        }
        if view.dtype() != Dtype::F32 {
            return Err(self.problem(format!(
                "tensor `{full_name}` is {:?}; only F32 weights are supported",
                view.dtype()
            )));
        }
        Ok(view
            .data()
            .chunks_exact(4)
            .map(|bytes| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
            .collect())
    }

    fn linear(&self, name: &str, outputs: usize, inputs: usize) -> Result<Linear, Error> {
        Ok(Linear {
            weight: self.read(&format!("{name}.weight"), &[outputs, inputs])?,
            bias: self.read(&format!("{name}.bias"), &[outputs])?,
            inputs,
            outputs,
        })
    }

    fn layer_norm(&self, name: &str, size: usize, epsilon: f64) -> Result<LayerNorm, Error> {
        Ok(LayerNorm {
            gamma: self.read(&format!("{name}.weight"), &[size])?,
            beta: self.read(&format!("{name}.bias"), &[size])?,
            epsilon: epsilon as f32,
        })
    }
}

impl BertEncoder {
    /// Loads the weights in `weights` (a safetensors file) for `config`.
    pub fn load(config: &BertConfig, weights: &[u8], path: &Path) -> Result<BertEncoder, Error> {
        let unsupported = |what: String| Error::problem(Problem::new(path, None, what));
        if config.hidden_act != "gelu" {
            return Err(unsupported(format!(
                "config.json's hidden_act is `{}`; only `gelu` (BERT's erf GELU) is supported",
                config.hidden_act
            )));
        }
        if config.position_embedding_type != "absolute" {
            return Err(unsupported(format!(
                "config.json's position_embedding_type is `{}`; only `absolute` is supported",
                config.position_embedding_type
            )));
        }
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(unsupported(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            )));
        }
        let tensors = SafeTensors::deserialize(weights)
            .map_err(|error| unsupported(format!("is not a safetensors file: {error}")))?;
        let prefix = if tensors
            .tensor("bert.embeddings.word_embeddings.weight")
            .is_ok()
        {
            "bert."
        } else {
            ""
        };
        let source = TensorSource {
            tensors,
            prefix,
            path,
        };
        let hidden = config.hidden_size;
        let word_view = source
            .tensors
            .tensor(&format!("{prefix}embeddings.word_embeddings.weight"))
            .map_err(|_| {
                source.problem("has no word embeddings; is this a BERT-family model?".into())
            })?;
        let vocabulary_size = word_view.shape().first().copied().unwrap_or(0);
        let word_embeddings = source.read(
            "embeddings.word_embeddings.weight",
            &[vocabulary_size, hidden],
        )?;
        let position_embeddings = source.read(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, hidden],
        )?;
        let token_types = source
            .tensors
            .tensor(&format!("{prefix}embeddings.token_type_embeddings.weight"))
            .map(|view| view.shape().first().copied().unwrap_or(0))
            .unwrap_or(0);
        let token_type_embedding = source
            .read(
                "embeddings.token_type_embeddings.weight",
                &[token_types, hidden],
            )?
            .into_iter()
            .take(hidden)
            .collect::<Vec<f32>>();
        if token_type_embedding.len() != hidden {
            return Err(source.problem("has no token-type embeddings".into()));
        }
        let epsilon = config.layer_norm_eps;
        let embedding_norm = source.layer_norm("embeddings.LayerNorm", hidden, epsilon)?;
        let intermediate = config.intermediate_size;
        let layers = (0..config.num_hidden_layers)
            .map(|layer| {
                let name = |part: &str| format!("encoder.layer.{layer}.{part}");
                let query = source.linear(&name("attention.self.query"), hidden, hidden)?;
                let key = source.linear(&name("attention.self.key"), hidden, hidden)?;
                let value = source.linear(&name("attention.self.value"), hidden, hidden)?;
                Ok(EncoderLayer {
                    query_key_value: Linear {
                        weight: [query.weight, key.weight, value.weight].concat(),
                        bias: [query.bias, key.bias, value.bias].concat(),
                        inputs: hidden,
                        outputs: 3 * hidden,
                    },
                    attention_output: source.linear(
                        &name("attention.output.dense"),
                        hidden,
                        hidden,
                    )?,
                    attention_norm: source.layer_norm(
                        &name("attention.output.LayerNorm"),
                        hidden,
                        epsilon,
                    )?,
                    intermediate: source.linear(
                        &name("intermediate.dense"),
                        intermediate,
                        hidden,
                    )?,
                    output: source.linear(&name("output.dense"), hidden, intermediate)?,
                    output_norm: source.layer_norm(&name("output.LayerNorm"), hidden, epsilon)?,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(BertEncoder {
            hidden,
            heads: config.num_attention_heads,
            max_positions: config.max_position_embeddings,
            word_embeddings,
            position_embeddings,
            token_type_embedding,
            embedding_norm,
            layers,
            vocabulary_size,
        })
    }

    /// The width of a hidden state.
    pub fn hidden_size(&self) -> usize {
        self.hidden
    }

    /// The last hidden states of a batch of token-id sequences, packed: row `i` of the
    /// result belongs to the text and position that token `i` of the concatenation has.
    /// Sequences longer than the position table are an error (the tokenizer truncates
    /// before this point).
    pub fn forward(&self, sequences: &[&[u32]]) -> Result<Vec<f32>, String> {
        let hidden = self.hidden;
        let total: usize = sequences.iter().map(|sequence| sequence.len()).sum();
        let mut states = vec![0.0f32; total * hidden];
        let mut row = 0;
        for sequence in sequences {
            if sequence.len() > self.max_positions {
                return Err(format!(
                    "a text has {} tokens; the model takes at most {}",
                    sequence.len(),
                    self.max_positions
                ));
            }
            for (position, &id) in sequence.iter().enumerate() {
                let id = id as usize;
                if id >= self.vocabulary_size {
                    return Err(format!(
                        "token id {id} is outside the vocabulary of {}",
                        self.vocabulary_size
                    ));
                }
                let target = &mut states[row * hidden..(row + 1) * hidden];
                let word = &self.word_embeddings[id * hidden..(id + 1) * hidden];
                let place = &self.position_embeddings[position * hidden..(position + 1) * hidden];
                for (((value, &w), &p), &t) in target
                    .iter_mut()
                    .zip(word)
                    .zip(place)
                    .zip(&self.token_type_embedding)
                {
                    *value = w + p + t;
                }
                row += 1;
            }
        }
        self.embedding_norm.apply(&mut states, hidden);

        let lengths: Vec<usize> = sequences.iter().map(|sequence| sequence.len()).collect();
        let longest = lengths.iter().copied().max().unwrap_or(0);
        let intermediate_size = self
            .layers
            .first()
            .map_or(0, |layer| layer.intermediate.outputs);
        let mut query_key_value = vec![0.0f32; total * 3 * hidden];
        let mut context = vec![0.0f32; total * hidden];
        let mut projected = vec![0.0f32; total * hidden];
        let mut intermediate = vec![0.0f32; total * intermediate_size];
        let mut scores = vec![0.0f32; longest * longest];
        for layer in &self.layers {
            layer
                .query_key_value
                .apply(&states, total, &mut query_key_value);
            self.attention(&query_key_value, &lengths, &mut context, &mut scores);
            layer
                .attention_output
                .apply(&context, total, &mut projected);
            add_in_place(&mut projected, &states);
            layer.attention_norm.apply(&mut projected, hidden);
            std::mem::swap(&mut states, &mut projected);

            layer.intermediate.apply(&states, total, &mut intermediate);
            gelu_in_place(&mut intermediate);
            layer.output.apply(&intermediate, total, &mut projected);
            add_in_place(&mut projected, &states);
            layer.output_norm.apply(&mut projected, hidden);
            std::mem::swap(&mut states, &mut projected);
        }
        Ok(states)
    }

    /// Scaled dot-product attention per text and head, over packed `q|k|v` rows.
    fn attention(
        &self,
        query_key_value: &[f32],
        lengths: &[usize],
        context: &mut [f32],
        scores: &mut [f32],
    ) {
        let hidden = self.hidden;
        let head_size = hidden / self.heads;
        let stride = 3 * hidden;
        let scale = 1.0 / (head_size as f32).sqrt();
        let mut start = 0;
        for &length in lengths {
            let scores = &mut scores[..length * length];
            for head in 0..self.heads {
                let column = head * head_size;
                let queries = &query_key_value[start * stride + column..];
                let keys = &query_key_value[start * stride + hidden + column..];
                let values = &query_key_value[start * stride + 2 * hidden + column..];
                // scores = scale · Q Kᵀ
                // SAFETY: every matrix lies inside its slice: the last element read is
                // row length-1, column head_size-1 of q/k/v, which is inside this text's
                // packed rows; `scores` holds length² values.
                unsafe {
                    gemm::gemm(
                        length,
                        length,
                        head_size,
                        scores.as_mut_ptr(),
                        1,
                        length as isize,
                        false,
                        queries.as_ptr(),
                        1,
                        stride as isize,
                        keys.as_ptr(),
                        stride as isize,
                        1,
                        0.0,
                        scale,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    );
                }
                softmax_rows(scores, length);
                let output = &mut context[start * hidden + column..];
                // context[:, head] = P V
                // SAFETY: as above; the output block is this text's rows, this head's
                // columns, inside `context`.
                unsafe {
                    gemm::gemm(
                        length,
                        head_size,
                        length,
                        output.as_mut_ptr(),
                        1,
                        hidden as isize,
                        false,
                        scores.as_ptr(),
                        1,
                        length as isize,
                        values.as_ptr(),
                        1,
                        stride as isize,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    );
                }
            }
            start += length;
        }
    }
}

impl Linear {
    /// `output = input Wᵀ + b` for `rows` rows of `inputs` values.
    fn apply(&self, input: &[f32], rows: usize, output: &mut [f32]) {
        assert_eq!(input.len(), rows * self.inputs);
        assert_eq!(output.len(), rows * self.outputs);
        for row in output.chunks_exact_mut(self.outputs) {
            row.copy_from_slice(&self.bias);
        }
        if rows == 0 {
            return;
        }
        // SAFETY: dst is rows × outputs (row-major), lhs rows × inputs (row-major), rhs
        // is Wᵀ, i.e. W (outputs × inputs, row-major) read with swapped strides; the
        // lengths are asserted above.
        unsafe {
            gemm::gemm(
                rows,
                self.outputs,
                self.inputs,
                output.as_mut_ptr(),
                1,
                self.outputs as isize,
                true,
                input.as_ptr(),
                1,
                self.inputs as isize,
                self.weight.as_ptr(),
                self.inputs as isize,
                1,
                1.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
    }
}

impl LayerNorm {
    /// Normalizes each row of `width` values to zero mean and unit variance (biased, as
    /// PyTorch), then scales and shifts.
    fn apply(&self, values: &mut [f32], width: usize) {
        layer_norm_rows(values, width, &self.gamma, &self.beta, self.epsilon);
    }
}

/// Defines an elementwise kernel that runs in a copy compiled for AVX-512 or AVX2 when
/// the CPU has it, so its loops use 16- or 8-wide vectors instead of the baseline's 4.
/// The arithmetic is the same in each copy (no fused multiply-add is introduced), so
/// the results do not depend on which copy runs.
macro_rules! wide_kernel {
    ($(#[$attribute:meta])* fn $name:ident($($argument:ident: $type:ty),* $(,)?) $body:block) => {
        $(#[$attribute])*
        fn $name($($argument: $type),*) {
            #[inline(always)]
            fn body($($argument: $type),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                fn avx512($($argument: $type),*) {
                    body($($argument),*)
                }
                #[target_feature(enable = "avx2")]
                fn avx2($($argument: $type),*) {
                    body($($argument),*)
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU supports AVX-512F (checked just above).
                    return unsafe { avx512($($argument),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { avx2($($argument),*) };
                }
            }
            body($($argument),*)
        }
    };
}

wide_kernel! {
    fn layer_norm_rows(values: &mut [f32], width: usize, gamma: &[f32], beta: &[f32], epsilon: f32) {
        for row in values.chunks_exact_mut(width) {
            let mean = lane_sum(row) / width as f32;
            for value in row.iter_mut() {
                *value -= mean;
            }
            let variance = lane_sum_of_squares(row) / width as f32;
            let inverse = 1.0 / (variance + epsilon).sqrt();
            for ((value, &gamma), &beta) in row.iter_mut().zip(gamma).zip(beta) {
                *value = *value * inverse * gamma + beta;
            }
        }
    }
}

wide_kernel! {
    fn add_in_place(values: &mut [f32], addend: &[f32]) {
        for (value, &other) in values.iter_mut().zip(addend) {
            *value += other;
        }
    }
}

wide_kernel! {
    /// Softmax of each row of `length` scores.
    fn softmax_rows(scores: &mut [f32], length: usize) {
        for row in scores.chunks_exact_mut(length) {
            let maximum = lane_max(row);
            for value in row.iter_mut() {
                *value = exp(*value - maximum);
            }
            let inverse = 1.0 / lane_sum(row);
            for value in row.iter_mut() {
                *value *= inverse;
            }
        }
    }
}

wide_kernel! {
    /// BERT's GELU: `x · Φ(x) = x/2 · (1 + erf(x/√2))`.
    fn gelu_in_place(values: &mut [f32]) {
        for value in values.iter_mut() {
            let x = *value;
            *value = 0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

/// Lanes of the reductions below: a fixed 16, so the summation order (and the result)
/// is the same whatever vector width the CPU has.
const LANES: usize = 16;

#[inline(always)]
fn lane_reduce(values: &[f32], start: f32, combine: impl Fn(f32, f32) -> f32) -> f32 {
    let mut lanes = [start; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &value) in lanes.iter_mut().zip(chunk) {
            *lane = combine(*lane, value);
        }
    }
    let total = lanes.into_iter().fold(start, &combine);
    rest.iter()
        .fold(total, |total, &value| combine(total, value))
}

#[inline(always)]
fn lane_sum(values: &[f32]) -> f32 {
    lane_reduce(values, 0.0, |total, value| total + value)
}

#[inline(always)]
fn lane_sum_of_squares(values: &[f32]) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &value) in lanes.iter_mut().zip(chunk) {
            *lane += value * value;
        }
    }
    let total: f32 = lanes.into_iter().fold(0.0, |total, lane| total + lane);
    rest.iter()
        .fold(total, |total, &value| total + value * value)
}

#[inline(always)]
fn lane_max(values: &[f32]) -> f32 {
    lane_reduce(values, f32::NEG_INFINITY, f32::max)
}

/// `e^x` by range reduction `x = n ln2 + r`, |r| ≤ ln2/2, and a degree-6 Taylor
/// polynomial for `e^r` (relative error below 2e-7); inputs are clamped to where the
/// result is a normal f32. Branch-free, so loops over it vectorize.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5 · 2^23: adding it rounds to an integer
    const LN2_HIGH: f32 = 0.693_145_75;
    const LN2_LOW: f32 = 1.428_606_8e-6;
    let x = x.clamp(-87.0, 88.0);
    // `shifted` lies in [2^23, 2^24), where the spacing of f32 is 1: its bits are
    // ROUND's bits plus n = round(x log2 e), which gives 2^n without a float-to-int
    // conversion (those do not vectorize).
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = x - n * LN2_HIGH - n * LN2_LOW;
    let polynomial = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let exponent = shifted
        .to_bits()
        .wrapping_sub(ROUND.to_bits())
        .wrapping_add(127);
    let scale = f32::from_bits(exponent << 23);
    polynomial * scale
}

/// `erf(x)` by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), on the
/// vectorizable [`exp`].
#[inline(always)]
fn erf(x: f32) -> f32 {
    let magnitude = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * magnitude);
    let polynomial = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152 + t * 1.061_405_4))));
    (1.0 - polynomial * exp(-magnitude * magnitude)).copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_the_standard_library_to_single_precision() {
        let mut worst = 0.0f64;
        for step in -8_000..=8_000 {
            let x = step as f32 * 0.01;
            let expected = f64::from(x).exp();
            let relative = ((f64::from(exp(x)) - expected) / expected).abs();
            worst = worst.max(relative);
        }
        assert!(worst < 3e-7, "worst relative error {worst:e}");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) < 1e-37 && exp(-1000.0) >= 0.0);
    }

    #[test]
    fn erf_matches_known_values() {
        // erf(0.5), erf(1), erf(2) from Abramowitz & Stegun's table 7.1.
        for (x, expected) in [
            (0.0f32, 0.0f64),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (-1.0, -0.842_700_792_9),
            (6.0, 1.0),
        ] {
            let got = f64::from(erf(x));
            assert!(
                (got - expected).abs() < 3e-7,
                "erf({x}) = {got}, expected {expected}"
            );
        }
    }

    #[test]
    fn softmax_of_equal_scores_is_uniform_and_sums_to_one() {
        let mut row = vec![3.0f32; 4];
        softmax_rows(&mut row, 4);
        assert_eq!(row, vec![0.25; 4]);
        let mut row = vec![0.0f32, 1.0];
        softmax_rows(&mut row, 2);
        let expected = 1.0 / (1.0 + std::f64::consts::E);
        assert!((f64::from(row[0]) - expected).abs() < 1e-7);
    }

    #[test]
    fn layer_norm_standardizes_a_row() {
        let norm = LayerNorm {
            gamma: vec![1.0; 4],
            beta: vec![0.0; 4],
            epsilon: 0.0,
        };
        let mut row = vec![1.0f32, 2.0, 3.0, 4.0];
        norm.apply(&mut row, 4);
        // mean 2.5, biased variance 1.25
        let scale = 1.0 / 1.25f64.sqrt();
        for (value, raw) in row.iter().zip([1.0, 2.0, 3.0, 4.0]) {
            assert!((f64::from(*value) - (raw - 2.5) * scale).abs() < 1e-6);
        }
    }

    #[test]
    fn linear_multiplies_by_the_transposed_weight_and_adds_the_bias() {
        let linear = Linear {
            weight: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], // 2 outputs × 3 inputs
            bias: vec![0.5, -1.0],
            inputs: 3,
            outputs: 2,
        };
        let mut output = vec![0.0; 4];
        linear.apply(&[1.0, 0.0, 2.0, 0.0, 1.0, 1.0], 2, &mut output);
        assert_eq!(output, vec![7.5, 15.0, 5.5, 10.0]);
    }
}
