//! Token vectors → one sentence vector: the modes of sentence-transformers' `Pooling`
//! module and its `Normalize` module, over plain slices so each can be checked by hand.
//! Sums accumulate in f64; the results are f32 like the model's outputs.

use super::model_dir::Pooling;

/// Pools one text's rows of a padded batch. `tokens` holds `mask.len()` rows of
/// `dimension` values each; rows whose mask is 0 are padding and never contribute.
/// As in sentence-transformers, the token count is clamped to at least 1e-9, so a text
/// without unmasked tokens gives zeros instead of NaN.
pub fn pool(mode: Pooling, tokens: &[f32], mask: &[u32], dimension: usize) -> Vec<f32> {
    debug_assert_eq!(tokens.len(), mask.len() * dimension);
    let rows = || {
        tokens
            .chunks_exact(dimension)
            .zip(mask)
            .filter(|(_, &keep)| keep != 0)
            .map(|(row, _)| row)
    };
    let count = (mask.iter().filter(|&&keep| keep != 0).count() as f64).max(1e-9);
    match mode {
        Pooling::Cls => tokens[..dimension].to_vec(),
        Pooling::Max => (0..dimension)
            .map(|column| {
                rows()
                    .map(|row| row[column])
                    .fold(f32::NEG_INFINITY, f32::max)
            })
            .map(|value| if value.is_finite() { value } else { 0.0 })
            .collect(),
        Pooling::Mean | Pooling::MeanSqrtLen => {
            let mut sums = vec![0.0f64; dimension];
            for row in rows() {
                for (sum, &value) in sums.iter_mut().zip(row) {
                    *sum += f64::from(value);
                }
            }
            let divisor = if mode == Pooling::Mean {
                count
            } else {
                count.sqrt()
            };
            sums.into_iter().map(|sum| (sum / divisor) as f32).collect()
        }
    }
}

/// Divides by the L2 norm, clamped to at least 1e-12 (torch's `F.normalize`).
pub fn l2_normalize(vector: &mut [f32]) {
    let norm = vector
        .iter()
        .map(|&value| f64::from(value) * f64::from(value))
        .sum::<f64>()
        .sqrt()
        .max(1e-12);
    for value in vector {
        *value = (f64::from(*value) / norm) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Three rows of dimension 2; the last row is padding.
    const TOKENS: [f32; 6] = [1.0, -2.0, 3.0, 4.0, 100.0, 100.0];
    const MASK: [u32; 3] = [1, 1, 0];

    #[test]
    fn each_mode_ignores_padding() {
        assert_eq!(pool(Pooling::Cls, &TOKENS, &MASK, 2), vec![1.0, -2.0]);
        assert_eq!(pool(Pooling::Mean, &TOKENS, &MASK, 2), vec![2.0, 1.0]);
        assert_eq!(pool(Pooling::Max, &TOKENS, &MASK, 2), vec![3.0, 4.0]);
        let root_two = 2.0f64.sqrt();
        assert_eq!(
            pool(Pooling::MeanSqrtLen, &TOKENS, &MASK, 2),
            vec![(4.0 / root_two) as f32, (2.0 / root_two) as f32]
        );
    }

    #[test]
    fn fully_masked_text_pools_to_zeros() {
        assert_eq!(pool(Pooling::Mean, &TOKENS, &[0, 0, 0], 2), vec![0.0, 0.0]);
        assert_eq!(pool(Pooling::Max, &TOKENS, &[0, 0, 0], 2), vec![0.0, 0.0]);
    }

    #[test]
    fn normalization_gives_unit_length_and_keeps_zero() {
        let mut vector = vec![3.0, 4.0];
        l2_normalize(&mut vector);
        assert_eq!(vector, vec![0.6, 0.8]);
        let mut zero = vec![0.0, 0.0];
        l2_normalize(&mut zero);
        assert_eq!(zero, vec![0.0, 0.0]);
    }
}
