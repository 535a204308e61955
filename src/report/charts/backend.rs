//! A bitmap drawing backend whose text is laid out correctly.
//!
//! plotters 0.3.7's pure-Rust (`ab_glyph`) text path places each glyph's bitmap at the
//! pen position without the glyph's left bearing and rounds the pen to whole pixels,
//! so letters drift ("bl end"). This backend delegates every drawing call to
//! [`BitMapBackend`] except text, which it lays out itself with ab_glyph: kerning,
//! sub-pixel pen positions and bearings from the glyph outlines, anti-aliased coverage
//! blended into the bitmap, and plotters' anchors and rotations honoured.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};
use plotters_bitmap::BitMapBackendError;

/// [`BitMapBackend`] with correct text layout in one font.
pub struct TextBackend<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl<'a> TextBackend<'a> {
    pub fn new(inner: BitMapBackend<'a>, font: FontRef<'static>) -> Self {
        TextBackend { inner, font }
    }

    /// Width and height of `text` at `size` pixels, and the baseline's offset from the
    /// top of that box.
    fn measure(&self, text: &str, size: f64) -> (f32, f32, f32) {
        let font = self.font.as_scaled(PxScale::from(size as f32));
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
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), Failure> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), Failure> {
        self.inner.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Failure> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Failure> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Failure> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vertices: I,
        style: &S,
    ) -> Result<(), Failure> {
        self.inner.fill_polygon(vertices, style)
    }

    fn blit_bitmap(
        &mut self,
        position: BackendCoord,
        size: (u32, u32),
        source: &[u8],
    ) -> Result<(), Failure> {
        self.inner.blit_bitmap(position, size, source)
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
        let (width, height, ascent) = self.measure(text, style.size());
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
        let (canvas_width, canvas_height) = self.get_size();
        let font = self.font.as_scaled(PxScale::from(style.size() as f32));
        let mut pen = dx;
        let mut previous = None;
        for character in text.chars() {
            let id = font.glyph_id(character);
            if let Some(previous) = previous {
                pen += font.kern(previous, id);
            }
            previous = Some(id);
            let glyph = id.with_scale_and_position(
                PxScale::from(style.size() as f32),
                ab_glyph::point(pen, dy + ascent),
            );
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
    use plotters::style::{IntoFont, TextStyle, BLACK};

    /// Draws `text` at 20 px and returns the ink columns and the measured width.
    fn ink_columns(text: &str) -> (Vec<u32>, u32) {
        let font = FontRef::try_from_slice(ttf_noto_sans::REGULAR).unwrap();
        let (width, height) = (320u32, 50u32);
        let mut pixels = vec![255u8; (width * height * 3) as usize];
        let measured = {
            let mut backend = TextBackend::new(
                BitMapBackend::with_buffer(&mut pixels, (width, height)),
                font,
            );
            let style: TextStyle = ("sans-serif", 20).into_font().color(&BLACK);
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
}
