//! Run scores read as C's `atof` and Rust's `str::parse` read them, bit for bit.
//!
//! Scores are almost always plain decimals (`-12.345678`). For those with at most 15
//! digits the value is `digits / 10^fraction_digits`, one division of two exactly
//! represented numbers, which IEEE 754 rounds correctly: the same f64 as `str::parse`
//! and `atof` (Clinger's fast path). Everything else goes to `str::parse`.
//!
//! The digits are read byte by byte ([`parse_score`]), or, on x86-64 processors with
//! SSSE3, all at once from the 16 bytes that start at the score ([`parse_score_window`],
//! for a run line whose next bytes are in the buffer): the digits are found and checked
//! by comparing the 16 bytes at once, gathered right-aligned without the point by one
//! shuffle, and summed by three multiply-add steps. The digits, and so the value, are
//! the same either way; a text the vector path does not take falls back to the loop.

/// Powers of ten that are exact in an f64.
const EXACT_POWERS_OF_TEN: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Parses a score; `None` for anything that is not a number, and for NaN.
#[inline(always)]
pub fn parse_score(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let (negative, digits) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let mut mantissa: u64 = 0;
    let mut digit_count = 0;
    let mut fraction_digits = None;
    for (position, &byte) in digits.iter().enumerate() {
        match byte {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(byte - b'0');
                digit_count += 1;
            }
            b'.' if fraction_digits.is_none() => {
                fraction_digits = Some(digits.len() - position - 1)
            }
            _ => {
                digit_count = usize::MAX;
                break;
            }
        }
        if digit_count > 15 {
            break;
        }
    }
    if digit_count == 0 || digit_count > 15 {
        return text.parse::<f64>().ok().filter(|score| !score.is_nan());
    }
    Some(decimal_value(
        negative,
        mantissa,
        fraction_digits.unwrap_or(0),
    ))
}

/// `±mantissa / 10^fraction_digits`, correctly rounded (both are exact in an f64).
#[inline(always)]
fn decimal_value(negative: bool, mantissa: u64, fraction_digits: usize) -> f64 {
    // Below 10^15, so the conversion from a signed integer (one instruction) is exact.
    let value = mantissa as i64 as f64 / EXACT_POWERS_OF_TEN[fraction_digits];
    if negative {
        -value
    } else {
        value
    }
}

/// [`parse_score`] of `text`, given `window`: the 16 bytes from `text`'s start (the
/// bytes after `text` are not read for their values). The same result as
/// [`parse_score`], sooner.
#[inline(always)]
pub fn parse_score_window(text: &str, window: &[u8; 16]) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    if text.len() <= 16
        && std::arch::is_x86_feature_detected!("ssse3")
        && std::arch::is_x86_feature_detected!("popcnt")
    {
        // SAFETY: the processor has SSSE3 and POPCNT, checked just above.
        if let Some(value) = unsafe { plain_decimal_ssse3(window, text.len()) } {
            return Some(value);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = window;
    parse_score(text)
}

/// The value of the first `length` (at most 16) bytes of `window` when they are a plain
/// decimal of 1 to 15 digits (an optional sign, digits and at most one point), else
/// `None`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3,popcnt")]
fn plain_decimal_ssse3(window: &[u8; 16], length: usize) -> Option<f64> {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cvtsi128_si32, _mm_loadu_si128,
        _mm_madd_epi16, _mm_maddubs_epi16, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_packs_epi32, _mm_set1_epi16, _mm_set1_epi32, _mm_set1_epi8, _mm_setr_epi8,
        _mm_shuffle_epi8, _mm_srli_si128, _mm_sub_epi8,
    };
    let sign_length = usize::from(matches!(window[0], b'-' | b'+'));
    // Lanes `sign_length..length`: the digits and the point.
    let number_lanes = ((1u32 << length) - 1) & !((1u32 << sign_length) - 1);
    // SAFETY: `window` holds 16 bytes, which an unaligned load reads.
    let bytes: __m128i = unsafe { _mm_loadu_si128(window.as_ptr().cast()) };
    let digits = _mm_sub_epi8(bytes, _mm_set1_epi8(b'0' as i8));
    // A byte is a digit when it is at most 9 after subtracting '0' (wrapping).
    let is_digit = _mm_cmpeq_epi8(_mm_min_epu8(digits, _mm_set1_epi8(9)), digits);
    let digit_lanes = _mm_movemask_epi8(is_digit) as u32 & number_lanes;
    let point_lanes =
        _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'.' as i8))) as u32 & number_lanes;
    let digit_count = digit_lanes.count_ones() as usize;
    if digit_lanes | point_lanes != number_lanes
        || point_lanes & point_lanes.wrapping_sub(1) != 0
        || !(1..=15).contains(&digit_count)
    {
        return None;
    }
    let (point, fraction_digits) = match point_lanes {
        0 => (16, 0),
        lanes => {
            let point = lanes.trailing_zeros() as usize;
            (point, length - point - 1)
        }
    };
    // Output lane j takes digit j - (16 - digit_count) (lanes before the first digit
    // are zeroed): source lane sign_length + that, one further from the point on.
    let lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mut source = _mm_add_epi8(lane, _mm_set1_epi8((sign_length + digit_count) as i8 - 16));
    let past_point = _mm_cmpgt_epi8(source, _mm_set1_epi8(point as i8 - 1));
    source = _mm_sub_epi8(source, past_point);
    // A control byte with its high bit set zeroes the lane.
    let leading = _mm_cmpgt_epi8(_mm_set1_epi8(16 - digit_count as i8), lane);
    let aligned = _mm_shuffle_epi8(digits, _mm_or_si128(source, leading));
    // Pairs of digits, then fours, then eights (the first lane is the most significant).
    let pairs = _mm_maddubs_epi16(aligned, _mm_set1_epi16(0x010a));
    let fours = _mm_madd_epi16(pairs, _mm_set1_epi32(0x0001_0064));
    let fours = _mm_packs_epi32(fours, fours);
    let eights = _mm_madd_epi16(fours, _mm_set1_epi32(0x0001_2710));
    let high = _mm_cvtsi128_si32(eights) as u64;
    let low = _mm_cvtsi128_si32(_mm_srli_si128::<4>(eights)) as u64;
    Some(decimal_value(
        window[0] == b'-',
        high * 100_000_000 + low,
        fraction_digits,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both readers of `text`: the loop, and the vector path with `after` in the window
    /// past the text (when the text fits in one).
    fn both_ways(text: &str, after: u8) -> [Option<u64>; 2] {
        let mut window = [after; 16];
        let windowed = (text.len() <= 16).then(|| {
            window[..text.len()].copy_from_slice(text.as_bytes());
            parse_score_window(text, &window).map(f64::to_bits)
        });
        let looped = parse_score(text).map(f64::to_bits);
        [looped, windowed.unwrap_or(looped)]
    }

    /// What both promise: `str::parse`'s f64, bit for bit, NaN refused.
    fn standard_score(text: &str) -> Option<u64> {
        text.parse::<f64>()
            .ok()
            .filter(|score| !score.is_nan())
            .map(f64::to_bits)
    }

    fn assert_standard(text: &str) {
        for after in [b' ', b'\n', b'7', b'.', b'-', 0xff] {
            let expected = standard_score(text);
            assert_eq!(
                both_ways(text, after),
                [expected; 2],
                "{text:?} then {after}"
            );
        }
    }

    #[test]
    fn scores_equal_the_standard_library() {
        for text in [
            "2.129133",
            "-0.5",
            "+3",
            "-0",
            "1.",
            ".5",
            "-.5",
            "123456789012345",
            "-123456789012345",
            "12345678.9012345",
            "0.000000000000001",
            "-0.00000000000001",
            "1234567890123456",
            "-1234567890123456",
            "12345678901234567",
            "1e5",
            "-1.5E-3",
            "inf",
            "-infinity",
            "12.345678901234567",
            "0.30000000000000004",
            "9007199254740993",
        ] {
            assert!(standard_score(text).is_some(), "{text}");
            assert_standard(text);
        }
        for text in [
            "", "-", ".", "1.2.3", "1,5", "nan", "NaN", "0x10", "--1", "1-", "+-1", "+.",
        ] {
            assert_eq!(standard_score(text), None, "{text}");
            assert_standard(text);
        }
    }

    #[test]
    fn short_scores_equal_the_standard_library_exhaustively() {
        // Every text of up to 5 bytes over digits, points, signs and an exponent.
        let alphabet = b"0159.-+e";
        let mut texts = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|text| {
                    alphabet
                        .iter()
                        .map(move |&byte| format!("{text}{}", byte as char))
                })
                .collect();
            for text in &longer {
                assert_eq!(both_ways(text, b'9'), [standard_score(text); 2], "{text:?}");
            }
            texts = longer;
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
        #[test]
        fn decimal_scores_equal_the_standard_library(
            text in "[-+]?[0-9]{0,9}[.]?[0-9]{0,9}[.]?[0-9]{0,2}",
            after in proptest::prelude::any::<u8>(),
        ) {
            let expected = standard_score(&text);
            proptest::prop_assert_eq!(both_ways(&text, after), [expected; 2]);
        }

        #[test]
        fn any_short_text_scores_as_the_standard_library(
            text in "[-+.0-9eE\\x00 a]{0,18}",
            after in proptest::prelude::any::<u8>(),
        ) {
            let expected = standard_score(&text);
            proptest::prop_assert_eq!(both_ways(&text, after), [expected; 2]);
        }
    }
}
