//! The reports' one colour language, shared by the terminal table, the charts and the
//! HTML page: blue marks the best value and gains, vermillion marks losses, grey is
//! neutral. The pair is from Okabe and Ito's palette, which stays distinguishable under
//! the common colour-vision deficiencies (unlike red against green); series (one colour
//! per configuration) use Tableau's colour-blind 10.
//!
//! Every renderer takes its colours from here, so "best" and "loss" look the same in
//! every output.

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`, for CSS.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// The best value of a column or panel, and a gain over a baseline (Okabe-Ito blue).
pub const BEST: Rgb = Rgb(0, 114, 178);
/// A gain over a baseline: the same colour as the best value.
pub const GAIN: Rgb = BEST;
/// A loss against a baseline or a failed check (Okabe-Ito vermillion).
pub const LOSS: Rgb = Rgb(213, 94, 0);
/// Anything neither best, gain nor loss (plain bars).
pub const NEUTRAL: Rgb = Rgb(171, 171, 171);
/// A light tint of [`BEST`] for backgrounds behind black text.
pub const BEST_TINT: Rgb = Rgb(214, 233, 245);
/// A light tint of [`LOSS`] for backgrounds behind black text.
pub const LOSS_TINT: Rgb = Rgb(251, 226, 206);

/// Tableau's colour-blind 10, one colour per configuration of a line chart.
pub const SERIES: [Rgb; 10] = [
    Rgb(0, 107, 164),
    Rgb(255, 128, 14),
    Rgb(171, 171, 171),
    Rgb(89, 89, 89),
    Rgb(95, 158, 209),
    Rgb(200, 82, 0),
    Rgb(137, 137, 137),
    Rgb(162, 200, 236),
    Rgb(255, 188, 121),
    Rgb(207, 207, 207),
];

/// The colour of the `index`-th series.
pub fn series(index: usize) -> Rgb {
    SERIES[index % SERIES.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_css_notation() {
        assert_eq!(BEST.hex(), "#0072b2");
        assert_eq!(LOSS.hex(), "#d55e00");
    }

    /// WCAG relative luminance of an sRGB colour.
    fn luminance(color: Rgb) -> f64 {
        let channel = |value: u8| {
            let value = f64::from(value) / 255.0;
            if value <= 0.03928 {
                value / 12.92
            } else {
                ((value + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * channel(color.0) + 0.7152 * channel(color.1) + 0.0722 * channel(color.2)
    }

    #[test]
    fn colours_keep_text_readable() {
        // Blue 0072B2 has luminance 0.1525 and vermillion D55E00 0.2215 (worked out from
        // the WCAG formula): white bar labels and black text both stay above 3:1 on them,
        // and black text on either tint stays above 15:1.
        assert!((luminance(BEST) - 0.1525).abs() < 0.0005);
        assert!((luminance(LOSS) - 0.2215).abs() < 0.0005);
        for color in [BEST, LOSS] {
            assert!(1.05 / (luminance(color) + 0.05) > 3.0);
            assert!((luminance(color) + 0.05) / 0.05 > 3.0);
        }
        for tint in [BEST_TINT, LOSS_TINT] {
            assert!((luminance(tint) + 0.05) / 0.05 > 15.0);
        }
    }
}
