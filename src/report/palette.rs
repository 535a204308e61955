//! The reports' one colour language, shared by the terminal table, the charts and the
//! HTML page: blue marks the best value and gains, vermillion marks losses, grey is
//! neutral. The pair is from Okabe and Ito's palette, which stays distinguishable under
//! the common colour-vision deficiencies (unlike red against green). Series (one per
//! configuration in a line chart) take 12 distinct hues, mostly Paul Tol's, none near
//! the loss colour (a configuration is not a loss) or the best colour; the charts give
//! each its own marker too, so lines stay apart without colour vision.
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

/// One colour per configuration of a line chart: 12 hues at least 25 apart (CIE76 ΔE)
/// from each other, from [`LOSS`] and from [`BEST`].
pub const SERIES: [Rgb; 12] = [
    Rgb(0x33, 0x22, 0x88), // indigo
    Rgb(0x11, 0x77, 0x33), // green
    Rgb(0xee, 0x33, 0x77), // magenta
    Rgb(0x33, 0xbb, 0xee), // cyan
    Rgb(0x99, 0x99, 0x33), // olive
    Rgb(0x88, 0x22, 0x55), // wine
    Rgb(0x44, 0xaa, 0x99), // teal
    Rgb(0xdd, 0xaa, 0x33), // ochre
    Rgb(0xaa, 0x44, 0x99), // purple
    Rgb(0x55, 0x55, 0x55), // dark grey
    Rgb(0xcc, 0x66, 0x77), // rose
    Rgb(0x8c, 0x56, 0x4b), // brown
];

/// The colour of the `index`-th series (they repeat after 12).
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

    /// CIE L*a*b* of an sRGB colour (D65).
    fn lab(color: Rgb) -> [f64; 3] {
        let linear = |value: u8| {
            let value = f64::from(value) / 255.0;
            if value <= 0.04045 {
                value / 12.92
            } else {
                ((value + 0.055) / 1.055).powf(2.4)
            }
        };
        let (r, g, b) = (linear(color.0), linear(color.1), linear(color.2));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| {
            if t > 0.008856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        [
            116.0 * f(y) - 16.0,
            500.0 * (f(x) - f(y)),
            200.0 * (f(y) - f(z)),
        ]
    }

    /// CIE76 colour difference.
    fn delta_e(a: Rgb, b: Rgb) -> f64 {
        let (a, b) = (lab(a), lab(b));
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    }

    #[test]
    fn twelve_series_are_distinct_and_never_the_loss_or_best_colour() {
        // Black against white is 100 apart; 25 is plainly another colour.
        assert!((delta_e(Rgb(0, 0, 0), Rgb(255, 255, 255)) - 100.0).abs() < 0.01);
        for first in 0..12 {
            for second in first + 1..12 {
                let apart = delta_e(series(first), series(second));
                assert!(apart >= 25.0, "series {first} and {second}: {apart:.1}");
            }
            for (name, reserved) in [("loss", LOSS), ("best", BEST)] {
                let apart = delta_e(series(first), reserved);
                assert!(apart >= 25.0, "series {first} and {name}: {apart:.1}");
            }
        }
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
