//! The points a sweep visits: integer grids over weight simplices and decimal ranges of
//! one numeric parameter.
//!
//! Grid points are integer tuples divided by the step count once, so every point of the
//! simplex is present exactly once and none is lost or duplicated by float rounding
//! (ranx's `optimize_fusion` builds its grid by float steps and can drop the last
//! point). Parameter ranges are parsed as decimals for the same reason: `0.1:0.5:0.1`
//! yields exactly 0.1, 0.2, 0.3, 0.4 and 0.5.

use crate::configuration::PARAM_NAMES;
use crate::error::Error;

/// Largest number of steps per unit accepted for a weight grid (C(202, 2) = 20,301
/// blend points).
pub const MAX_STEPS: u32 = 200;

/// Largest number of values accepted for a parameter range.
pub const MAX_PARAM_VALUES: usize = 1000;

/// Every point of the simplex of `dimensions` integer coordinates summing to `steps`,
/// in lexicographic order (for 3 dimensions the points `(i, j, m - i - j) / m` ordered by
/// `i`, then `j`; a fusion method's weight axes say how many dimensions).
pub fn simplex_grid(dimensions: usize, steps: u32) -> Vec<Vec<u32>> {
    match dimensions {
        0 => Vec::new(),
        1 => vec![vec![steps]],
        _ => (0..=steps)
            .flat_map(|first| {
                simplex_grid(dimensions - 1, steps - first)
                    .into_iter()
                    .map(move |rest| std::iter::once(first).chain(rest).collect())
            })
            .collect(),
    }
}

/// Integer grid coordinate to weight.
pub fn weight(coordinate: u32, steps: u32) -> f64 {
    f64::from(coordinate) / f64::from(steps)
}

/// Checks a `--steps` value.
pub fn check_steps(steps: u32) -> Result<(), Error> {
    if steps == 0 || steps > MAX_STEPS {
        return Err(Error::Usage(format!(
            "--steps must be between 1 and {MAX_STEPS}, got {steps} (20 gives weights in steps of 0.05)"
        )));
    }
    Ok(())
}

/// Parameters whose values are whole numbers.
const INTEGER_PARAMS: &[&str] = &[
    "vector_top_k",
    "hyde_keywords",
    "num_hypotheses",
    "hybrid_candidate_multiplier",
    "hybrid_limit",
    "skip_short_queries",
    "depth",
    "rrf_k",
];

/// Parameters that cannot be swept with `--param`, and why.
const NOT_SWEEPABLE: &[(&str, &str)] = &[
    (
        "weights",
        "blend weights are swept over the simplex by default (omit --param)",
    ),
    (
        "skip_code_mentions",
        "it is a yes/no switch; compare runs with and without --skip-code-mentions",
    ),
    (
        "bm25_analyzer",
        "it names an analyzer; compare runs with --bm25-analyzer chatcli and english",
    ),
    (
        "fusion",
        "it names a fusion method; compare configurations with fusion = \"rrf\", \"wsum\", ...",
    ),
    (
        "normalization",
        "it names a normalization; compare configurations with normalization = \"min-max\", \"zmuv\", ...",
    ),
];

/// One value of a swept parameter: the number and its decimal text (what `--set`
/// would be given, and what reports print).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamValue {
    pub value: f64,
    pub text: String,
}

/// A parsed `--param NAME=START:STOP:STEP`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamRange {
    pub name: String,
    pub values: Vec<ParamValue>,
}

/// A decimal number as an integer mantissa and a count of fractional digits.
fn parse_decimal(text: &str) -> Option<(i128, u32)> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |part: &str| part.chars().all(|c| c.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty())
        || !all_digits(whole)
        || !all_digits(fraction)
        || fraction.len() > 12
        || whole.len() > 15
    {
        return None;
    }
    let mantissa: i128 = format!("{whole}{fraction}").parse().ok()?;
    Some((
        if negative { -mantissa } else { mantissa },
        fraction.len() as u32,
    ))
}

/// Formats `mantissa / 10^scale` without trailing zeros.
fn decimal_text(mantissa: i128, scale: u32) -> String {
    let divisor = 10i128.pow(scale);
    let sign = if mantissa < 0 { "-" } else { "" };
    let whole = mantissa.abs() / divisor;
    let fraction = mantissa.abs() % divisor;
    if scale == 0 || fraction == 0 {
        return format!("{sign}{whole}");
    }
    let fraction = format!("{fraction:0width$}", width = scale as usize);
    format!("{sign}{whole}.{}", fraction.trim_end_matches('0'))
}

impl ParamRange {
    /// Parses `NAME=START:STOP:STEP` (decimals; STOP is included when the steps reach
    /// it exactly).
    pub fn parse(argument: &str) -> Result<ParamRange, Error> {
        let usage = |message: String| {
            Error::Usage(format!(
                "--param {argument}: {message} (expected NAME=START:STOP:STEP, e.g. min_cosine=0.1:0.5:0.05)"
            ))
        };
        let (name, range) = argument
            .split_once('=')
            .ok_or_else(|| usage("missing '='".into()))?;
        let name = name.trim();
        if let Some((_, why)) = NOT_SWEEPABLE.iter().find(|(known, _)| *known == name) {
            return Err(usage(format!("{name} cannot be swept: {why}")));
        }
        if !PARAM_NAMES.contains(&name) {
            let sweepable: Vec<&str> = PARAM_NAMES
                .iter()
                .copied()
                .filter(|known| !NOT_SWEEPABLE.iter().any(|(other, _)| other == known))
                .collect();
            return Err(usage(format!(
                "unknown parameter {name:?}{}; sweepable: {}",
                crate::hints::suggestion(name, &sweepable),
                sweepable.join(", ")
            )));
        }
        let parts: Vec<&str> = range.split(':').collect();
        let [start, stop, step] = parts[..] else {
            return Err(usage(format!(
                "expected three numbers separated by ':', got {}",
                parts.len()
            )));
        };
        let number = |what: &str, text: &str| {
            parse_decimal(text).ok_or_else(|| {
                usage(format!(
                    "{what} {text:?} is not a plain decimal number (like 3, 0.25 or 1.5)"
                ))
            })
        };
        let (start, stop, step) = (
            number("start", start)?,
            number("stop", stop)?,
            number("step", step)?,
        );
        let scale = start.1.max(stop.1).max(step.1);
        let rescale = |(mantissa, digits): (i128, u32)| mantissa * 10i128.pow(scale - digits);
        let (first, last, increment) = (rescale(start), rescale(stop), rescale(step));
        if INTEGER_PARAMS.contains(&name) && scale > 0 {
            return Err(usage(format!("{name} takes whole numbers")));
        }
        if increment <= 0 {
            return Err(usage("step must be positive".into()));
        }
        if first > last {
            return Err(usage("start must not exceed stop".into()));
        }
        let count = (last - first) / increment + 1;
        if count as usize > MAX_PARAM_VALUES {
            return Err(usage(format!(
                "{count} values; at most {MAX_PARAM_VALUES} are allowed (use a larger step)"
            )));
        }
        let divisor = 10f64.powi(scale as i32);
        let values = (0..count)
            .map(|index| {
                let mantissa = first + index * increment;
                ParamValue {
                    // Exact integers divided once: the nearest double to the decimal.
                    value: mantissa as f64 / divisor,
                    text: decimal_text(mantissa, scale),
                }
            })
            .collect();
        Ok(ParamRange {
            name: name.to_owned(),
            values,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Straightforward definitions of the 2- and 1-simplex grids: the oracle that
    // simplex_grid must equal.
    /// Every point `(i, j, m - i - j) / m` of the 2-simplex with integer `i, j >= 0`,
    /// ordered by `i`, then `j`: exactly C(m + 2, 2) points.
    fn simplex_points(steps: u32) -> Vec<[u32; 3]> {
        let mut points = Vec::with_capacity(((steps + 1) * (steps + 2) / 2) as usize);
        for i in 0..=steps {
            for j in 0..=steps - i {
                points.push([i, j, steps - i - j]);
            }
        }
        points
    }

    /// Every point `(i, m - i) / m` of the 1-simplex, ordered by `i`: exactly m + 1 points.
    fn line_points(steps: u32) -> Vec<[u32; 2]> {
        (0..=steps).map(|i| [i, steps - i]).collect()
    }

    fn binomial(n: u64, k: u64) -> u64 {
        (1..=k).fold(1, |product, i| product * (n + 1 - i) / i)
    }

    #[test]
    fn simplex_has_exactly_binomial_points_each_once() {
        for steps in [1u32, 2, 3, 7, 10, 20, 33, 100] {
            let points = simplex_points(steps);
            assert_eq!(
                points.len() as u64,
                binomial(u64::from(steps) + 2, 2),
                "m = {steps}"
            );
            let mut unique = points.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), points.len());
            assert!(points.iter().all(|p| p[0] + p[1] + p[2] == steps));
        }
        assert_eq!(simplex_points(20).len(), 231);
        assert_eq!(
            simplex_points(2),
            vec![
                [0, 0, 2],
                [0, 1, 1],
                [0, 2, 0],
                [1, 0, 1],
                [1, 1, 0],
                [2, 0, 0]
            ]
        );
        assert_eq!(line_points(4).len(), 5);
        for steps in [1u32, 2, 7, 20] {
            let simplex: Vec<Vec<u32>> = simplex_points(steps).iter().map(|p| p.to_vec()).collect();
            assert_eq!(simplex_grid(3, steps), simplex);
            let line: Vec<Vec<u32>> = line_points(steps).iter().map(|p| p.to_vec()).collect();
            assert_eq!(simplex_grid(2, steps), line);
            assert_eq!(simplex_grid(1, steps), vec![vec![steps]]);
        }
    }

    #[test]
    fn chatcli_default_weights_lie_on_the_twenty_step_grid() {
        // 11/20, 6/20 and 3/20 are the doubles nearest 0.55, 0.30 and 0.15, so the
        // grid point and the preset's literal weights are the same numbers.
        assert_eq!(weight(11, 20), 0.55);
        assert_eq!(weight(6, 20), 0.30);
        assert_eq!(weight(3, 20), 0.15);
    }

    #[test]
    fn param_ranges_are_exact_decimals() {
        let range = ParamRange::parse("min_cosine=0.1:0.5:0.1").unwrap();
        let texts: Vec<&str> = range.values.iter().map(|v| v.text.as_str()).collect();
        assert_eq!(texts, ["0.1", "0.2", "0.3", "0.4", "0.5"]);
        assert_eq!(range.values[2].value, 0.3, "not 0.30000000000000004");
        let range = ParamRange::parse("vector_top_k=4:20:8").unwrap();
        let values: Vec<f64> = range.values.iter().map(|v| v.value).collect();
        assert_eq!(values, [4.0, 12.0, 20.0]);
        let range = ParamRange::parse("bm25_b=0:1:0.25").unwrap();
        assert_eq!(range.values.len(), 5);
        assert_eq!(range.values[4].text, "1");
        // The stop is included only when a step lands on it.
        let range = ParamRange::parse("half_life_days=7:30:10").unwrap();
        let texts: Vec<&str> = range.values.iter().map(|v| v.text.as_str()).collect();
        assert_eq!(texts, ["7", "17", "27"]);
    }

    #[test]
    fn param_range_errors_explain_themselves() {
        let message = |argument: &str| ParamRange::parse(argument).unwrap_err().to_string();
        assert!(message("min_cosin=0:1:0.1").contains("did you mean \"min_cosine\""));
        assert!(message("weights=0:1:0.1").contains("simplex"));
        assert!(message("vector_top_k=1:10:0.5").contains("whole numbers"));
        assert!(message("min_cosine=0.5:0.1:0.1").contains("start must not exceed stop"));
        assert!(message("min_cosine=0:1:0").contains("step must be positive"));
        assert!(message("min_cosine=0:1").contains("three numbers"));
        assert!(message("min_cosine=0:1e-1:0.1").contains("not a plain decimal"));
        assert!(message("depth=1:100000:1").contains("at most 1000"));
    }
}
