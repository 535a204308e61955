//! A bitmap drawing backend whose text is laid out correctly.
//!
//! plotters 0.3.7's pure-Rust (`ab_glyph`) text path places each glyph's bitmap at the
//! pen position without the glyph's left bearing and rounds the pen to whole pixels,
//! so letters drift ("bl end"). This backend delegates every drawing call to
//! [`BitMapBackend`] except text, which it lays out itself with ab_glyph: kerning,
//! sub-pixel pen positions and bearings from the glyph outlines, anti-aliased coverage
//! blended into the bitmap, and plotters' anchors and rotations honoured.
//!
//! It also draws at a pixel density: with scale 2 the charts lay out on a canvas of
//! half the bitmap's size and every coordinate, line width, radius and font size is
//! doubled, so a page that shows the PNG at its layout size is sharp on HiDPI screens.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};
use plotters_bitmap::BitMapBackendError;

/// [`BitMapBackend`] with correct text layout in one font, drawn at `scale` bitmap
/// pixels per layout pixel.
pub struct TextBackend<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
    scale: i32,
}

/// A style with its stroke width scaled to bitmap pixels.
struct Scaled {
    color: BackendColor,
    width: u32,
}

impl BackendStyle for Scaled {
    fn color(&self) -> BackendColor {
        self.color
    }

    fn stroke_width(&self) -> u32 {
        self.width
    }
}

impl<'a> TextBackend<'a> {
    /// Draws into `inner`, whose size must be a multiple of `scale` (at least 1).
    pub fn new(inner: BitMapBackend<'a>, font: FontRef<'static>, scale: u32) -> Self {
        TextBackend {
            inner,
            font,
            scale: scale.max(1) as i32,
        }
    }

    /// A layout point in bitmap pixels.
    fn up(&self, (x, y): BackendCoord) -> BackendCoord {
        (x * self.scale, y * self.scale)
    }

    fn scaled<S: BackendStyle>(&self, style: &S) -> Scaled {
        Scaled {
            color: style.color(),
            width: style.stroke_width() * self.scale as u32,
        }
    }

    /// The ab_glyph scale of a font `size` in pixels. The size is the em, as a CSS font
    /// size is; ab_glyph's `PxScale` is the ascent-to-descent height, a third larger
    /// than the em in Noto Sans, so a `PxScale` of `size` would draw 12 px text at
    /// under 9 px.
    fn px_scale(&self, size: f64) -> PxScale {
        let units_per_em = self.font.units_per_em().unwrap_or(1000.0);
        PxScale::from(size as f32 * self.font.height_unscaled() / units_per_em)
    }

    /// Width and height of `text` at `size` pixels, and the baseline's offset from the
    /// top of that box.
    fn measure(&self, text: &str, size: f64) -> (f32, f32, f32) {
        let font = self.font.as_scaled(self.px_scale(size));
        let mut width = 0.0;
        let mut previous = None;
        for character in text.chars() {
            let glyph = font.glyph_id(character);
            if let Some(previous) = previous {
                width += font.kern(previous, glyph);
            }
            width += font.h_advance(glyph);
            previous = Some(glyph);
        }
        (width, font.ascent() - font.descent(), font.ascent())
    }
}

type Failure = DrawingErrorKind<BitMapBackendError>;

impl DrawingBackend for TextBackend<'_> {
    type ErrorType = BitMapBackendError;

    fn get_size(&self) -> (u32, u32) {
        let (width, height) = self.inner.get_size();
        (width / self.scale as u32, height / self.scale as u32)
    }

    fn ensure_prepared(&mut self) -> Result<(), Failure> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), Failure> {
        self.inner.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Failure> {
        // A filled rectangle covers its upper-left corner up to, not including, the
        // bottom-right one.
        let (x, y) = self.up(point);
        let end = (x + self.scale, y + self.scale);
        self.inner
            .draw_rect((x, y), end, &Scaled { color, width: 1 }, true)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Failure> {
        let style = self.scaled(style);
        self.inner.draw_line(self.up(from), self.up(to), &style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure> {
        let style = self.scaled(style);
        self.inner
            .draw_rect(self.up(upper_left), self.up(bottom_right), &style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Failure> {
        let style = self.scaled(style);
        let path: Vec<BackendCoord> = path.into_iter().map(|point| self.up(point)).collect();
        self.inner.draw_path(path, &style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure> {
        let style = self.scaled(style);
        self.inner
            .draw_circle(self.up(center), radius * self.scale as u32, &style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vertices: I,
        style: &S,
    ) -> Result<(), Failure> {
        let style = self.scaled(style);
        let vertices: Vec<BackendCoord> =
            vertices.into_iter().map(|point| self.up(point)).collect();
        self.inner.fill_polygon(vertices, &style)
    }

    fn blit_bitmap(
        &mut self,
        position: BackendCoord,
        size: (u32, u32),
        source: &[u8],
    ) -> Result<(), Failure> {
        // Nearest-neighbour enlargement of the RGB source.
        let scale = self.scale as usize;
        let (width, height) = (size.0 as usize, size.1 as usize);
        let mut enlarged = Vec::with_capacity(source.len() * scale * scale);
        for row in 0..height * scale {
            for column in 0..width * scale {
                let at = ((row / scale) * width + column / scale) * 3;
                enlarged.extend_from_slice(source.get(at..at + 3).unwrap_or(&[0, 0, 0]));
            }
        }
        self.inner.blit_bitmap(
            self.up(position),
            (size.0 * scale as u32, size.1 * scale as u32),
            &enlarged,
        )
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), Failure> {
        let (width, height, _) = self.measure(text, style.size());
        Ok((width.ceil() as u32, height.ceil() as u32))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        position: BackendCoord,
    ) -> Result<(), Failure> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let size = style.size() * f64::from(self.scale);
        let position = self.up(position);
        let (width, height, ascent) = self.measure(text, size);
        // Offset of the text box's top-left corner from the anchor, before rotation.
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0.0,
            VPos::Center => -height / 2.0,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (canvas_width, canvas_height) = self.inner.get_size();
        let font = self.font.as_scaled(self.px_scale(size));
        let mut pen = dx;
        let mut previous = None;
        for character in text.chars() {
            let id = font.glyph_id(character);
            if let Some(previous) = previous {
                pen += font.kern(previous, id);
            }
            previous = Some(id);
            let glyph =
                id.with_scale_and_position(self.px_scale(size), ab_glyph::point(pen, dy + ascent));
            pen += font.h_advance(id);
            let Some(outline) = self.font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            let mut pixels = Vec::new();
            outline.draw(|x, y, coverage| {
                pixels.push((
                    bounds.min.x as i32 + x as i32,
                    bounds.min.y as i32 + y as i32,
                    coverage,
                ));
            });
            for (x, y, coverage) in pixels {
                if coverage <= 0.0 {
                    continue;
                }
                let (x, y) = transform.transform(x, y);
                let (x, y) = (position.0 + x, position.1 + y);
                if x >= 0 && y >= 0 && x < canvas_width as i32 && y < canvas_height as i32 {
                    self.inner.draw_pixel(
                        (x, y),
                        BackendColor {
                            alpha: color.alpha * f64::from(coverage.min(1.0)),
                            rgb: color.rgb,
                        },
                    )?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::style::{Color, IntoFont, TextStyle, BLACK};

    /// Draws `text` at 20 px and returns the ink columns and the measured width.
    fn ink_columns(text: &str) -> (Vec<u32>, u32) {
        let font = FontRef::try_from_slice(ttf_noto_sans::REGULAR).unwrap();
        let (width, height) = (320u32, 50u32);
        let mut pixels = vec![255u8; (width * height * 3) as usize];
        let measured = {
            let mut backend = TextBackend::new(
                BitMapBackend::with_buffer(&mut pixels, (width, height)),
                font,
                1,
            );
            let style: TextStyle = ("sans-serif", 15).into_font().color(&BLACK);
            let (measured, _) = backend.estimate_text_size(text, &style).unwrap();
            backend.draw_text(text, &style, (10, 10)).unwrap();
            backend.present().unwrap();
            measured
        };
        let ink = |x: u32, y: u32| pixels[((y * width + x) * 3) as usize] < 160;
        let columns = (0..width)
            .filter(|&x| (0..height).any(|y| ink(x, y)))
            .collect();
        (columns, measured)
    }

    #[test]
    fn glyphs_keep_their_spacing_and_stay_in_the_measured_box() {
        let (columns, measured) = ink_columns("blend weights");
        assert!(*columns.first().unwrap() >= 10);
        assert!(*columns.last().unwrap() <= 10 + measured);
        // Letters inside a word sit close together (plotters' own path left 3+ px holes
        // such as "bl end"); the only wide gap is the space between the words.
        let wide_gaps: Vec<u32> = columns
            .windows(2)
            .map(|pair| pair[1] - pair[0] - 1)
            .filter(|&gap| gap >= 3)
            .collect();
        assert_eq!(wide_gaps.len(), 1, "gaps: {wide_gaps:?}");
    }

    #[test]
    fn scale_two_lays_out_on_half_the_bitmap_and_doubles_every_shape() {
        let font = FontRef::try_from_slice(ttf_noto_sans::REGULAR).unwrap();
        let (width, height) = (40u32, 20u32);
        let mut pixels = vec![255u8; (width * height * 3) as usize];
        {
            let mut backend = TextBackend::new(
                BitMapBackend::with_buffer(&mut pixels, (width, height)),
                font,
                2,
            );
            assert_eq!(backend.get_size(), (20, 10));
            // A filled rectangle stops short of its bottom-right corner: layout pixels
            // 2..5 by 1..3 are bitmap pixels 4..10 by 2..6.
            backend
                .draw_rect((2, 1), (5, 3), &BLACK.filled(), true)
                .unwrap();
            backend
                .draw_pixel((15, 8), BLACK.to_backend_color())
                .unwrap();
            backend.present().unwrap();
        }
        let ink = |x: u32, y: u32| pixels[((y * width + x) * 3) as usize] == 0;
        let inked: Vec<(u32, u32)> = (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .filter(|&(x, y)| ink(x, y))
            .collect();
        let mut expected: Vec<(u32, u32)> = (2..6)
            .flat_map(|y| (4..10).map(move |x| (x, y)))
            .chain([(30, 16), (31, 16), (30, 17), (31, 17)])
            .collect();
        expected.sort_by_key(|&(x, y)| (y, x));
        assert_eq!(inked, expected);
    }

    #[test]
    fn a_font_size_is_the_em_as_in_css() {
        // Noto Sans has 1000 units per em and every digit advances 572 units, so ten
        // digits at 20 px are 10 x 20 x 0.572 = 114.4 px wide (84 px when the size was
        // taken as the ascent-to-descent height, 1362 units).
        let font = FontRef::try_from_slice(ttf_noto_sans::REGULAR).unwrap();
        let mut pixels = vec![255u8; 400 * 40 * 3];
        let backend = TextBackend::new(BitMapBackend::with_buffer(&mut pixels, (400, 40)), font, 1);
        let style: TextStyle = ("sans-serif", 20).into_font().color(&BLACK);
        let (width, _) = backend.estimate_text_size("0123456789", &style).unwrap();
        assert_eq!(width, 115);
    }

    #[test]
    fn scaled_text_is_twice_as_wide() {
        let width_at = |scale: u32| {
            let font = FontRef::try_from_slice(ttf_noto_sans::REGULAR).unwrap();
            let (width, height) = (400u32, 80u32);
            let mut pixels = vec![255u8; (width * height * 3) as usize];
            {
                let mut backend = TextBackend::new(
                    BitMapBackend::with_buffer(&mut pixels, (width, height)),
                    font,
                    scale,
                );
                let style: TextStyle = ("sans-serif", 16).into_font().color(&BLACK);
                backend.draw_text("ndcg@10", &style, (2, 2)).unwrap();
                backend.present().unwrap();
            }
            let columns: Vec<u32> = (0..width)
                .filter(|&x| (0..height).any(|y| pixels[((y * width + x) * 3) as usize] < 160))
                .collect();
            columns.last().unwrap() - columns.first().unwrap() + 1
        };
        let (single, double) = (width_at(1), width_at(2));
        assert!(
            (double as i32 - 2 * single as i32).abs() <= 2,
            "{single} px at 1x, {double} px at 2x"
        );
    }
}
