//! PNG charts drawn with plotters into memory: metric bars per configuration (with 95%
//! bootstrap whiskers), metric curves over the cut-off k, per-query deltas against a baseline, and sweep charts
//! (a heatmap over the blend-weight simplex, lines over one parameter).
//!
//! Text uses Noto Sans, compiled in (the `ttf-noto-sans` crate) and laid out with
//! ab_glyph by [`backend::TextBackend`], so charts render the same on a machine without
//! system fonts. Every function is pure: data in, PNG bytes out. Legends sit in their
//! own panel so they never cover data, and long labels are shortened.
//!
//! Charts are laid out at most [`MAX_WIDTH`] pixels wide with text of 12 pixels or
//! more, so a report page 800 pixels wide shows them at their own size and their text
//! stays readable. In line charts each configuration has its own colour and marker
//! (12 distinct pairs, [`palette::SERIES`] and [`series_marker`]), and the legend draws
//! both; the loss colour appears only on losses (the per-query difference plot).

mod backend;

use ab_glyph::FontRef;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::colors::colormaps::ViridisRGB;

use super::palette;
use crate::results::scored::ScoredConfiguration;
use crate::stats::{bootstrap_mean_interval, Interval};
use crate::sweep::{ConfigurationSweep, MetricSummary, SweepResults, BLEND_AXES};

/// Why a chart could not be drawn.
#[derive(Debug)]
pub struct ChartError(pub String);

impl std::fmt::Display for ChartError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "chart drawing failed: {}", self.0)
    }
}

type Drawn = Result<(), Box<dyn std::error::Error>>;
type Area<'a> = DrawingArea<backend::TextBackend<'a>, Shift>;

const FONT: &str = "sans-serif";
const GRID_GRAY: RGBColor = RGBColor(225, 225, 225);

/// Bitmap pixels per layout pixel: charts are laid out at their display size and drawn
/// at twice that, so they stay sharp on HiDPI screens.
pub const SCALE: u32 = 2;

/// The widest chart layout: the content of a report page 800 pixels wide (less its
/// padding) holds it at its own size.
pub const MAX_WIDTH: u32 = 740;

/// A palette colour for plotters.
pub fn color(rgb: palette::Rgb) -> RGBColor {
    RGBColor(rgb.0, rgb.1, rgb.2)
}

/// The colour of the `index`-th series.
pub fn series_color(index: usize) -> RGBColor {
    color(palette::series(index))
}

/// The display size of a chart's PNG (its pixel size over [`SCALE`]); `None` when the
/// bytes are not a PNG.
pub fn display_size(png: &[u8]) -> Option<(u32, u32)> {
    let header = png.get(..24)?;
    if &header[..8] != b"\x89PNG\r\n\x1a\n" || &header[12..16] != b"IHDR" {
        return None;
    }
    let number = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    Some((number(16) / SCALE, number(20) / SCALE))
}

/// Lays out on a white `width` x `height` canvas, draws at [`SCALE`] times that and
/// returns the PNG.
fn render(
    width: u32,
    height: u32,
    draw: impl FnOnce(&Area<'_>) -> Drawn,
) -> Result<Vec<u8>, ChartError> {
    let font = FontRef::try_from_slice(ttf_noto_sans::REGULAR)
        .map_err(|error| ChartError(format!("bundled font: {error}")))?;
    let (width, height) = (width * SCALE, height * SCALE);
    let mut pixels = vec![255u8; width as usize * height as usize * 3];
    {
        let bitmap = BitMapBackend::with_buffer(&mut pixels, (width, height));
        let root = backend::TextBackend::new(bitmap, font, SCALE).into_drawing_area();
        draw(&root).map_err(|error| ChartError(error.to_string()))?;
        root.present()
            .map_err(|error| ChartError(error.to_string()))?;
    }
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder
        .write_header()
        .map_err(|error| ChartError(error.to_string()))?;
    writer
        .write_image_data(&pixels)
        .map_err(|error| ChartError(error.to_string()))?;
    writer
        .finish()
        .map_err(|error| ChartError(error.to_string()))?;
    Ok(png)
}

fn text_style(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// Shortens `text` to at most `limit` characters with an ellipsis.
fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_owned()
    } else {
        let kept: String = text.chars().take(limit.saturating_sub(1)).collect();
        format!("{kept}…")
    }
}

/// A marker shape of a line chart's points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Pentagon,
}

/// The marker of the `index`-th series: its shape and whether it is filled. The six
/// shapes filled, then the six hollow: 12 distinct markers, as many as colours.
fn series_marker(index: usize) -> (Shape, bool) {
    const SHAPES: [Shape; 6] = [
        Shape::Circle,
        Shape::Square,
        Shape::TriangleUp,
        Shape::Diamond,
        Shape::TriangleDown,
        Shape::Pentagon,
    ];
    let index = index % (2 * SHAPES.len());
    (SHAPES[index % SHAPES.len()], index < SHAPES.len())
}

/// Radius of a series marker, in layout pixels.
const MARKER_RADIUS: f64 = 4.5;

/// Draws the `index`-th series' marker centred on `center` (pixels of `area`).
fn draw_marker(area: &Area<'_>, center: (i32, i32), index: usize) -> Drawn {
    let color = series_color(index);
    let (shape, filled) = series_marker(index);
    // Corners and the angle of the first, in degrees clockwise from 3 o'clock, and the
    // radius that gives the shape about the area of the circle.
    let polygon = match shape {
        Shape::Circle => None,
        Shape::Square => Some((4, 45.0, 1.15)),
        Shape::TriangleUp => Some((3, -90.0, 1.35)),
        Shape::Diamond => Some((4, 0.0, 1.3)),
        Shape::TriangleDown => Some((3, 90.0, 1.35)),
        Shape::Pentagon => Some((5, -90.0, 1.15)),
    };
    match polygon {
        None => {
            let radius = MARKER_RADIUS.round() as u32;
            if filled {
                area.draw(&Circle::new(center, radius, color.filled()))?;
            } else {
                area.draw(&Circle::new(center, radius, WHITE.filled()))?;
                area.draw(&Circle::new(center, radius, color.stroke_width(2)))?;
            }
        }
        Some((corners, start, scale)) => {
            let radius = MARKER_RADIUS * scale;
            let points: Vec<(i32, i32)> = (0..corners)
                .map(|corner| {
                    let angle =
                        (start + 360.0 * f64::from(corner) / f64::from(corners)).to_radians();
                    (
                        center.0 + (radius * angle.cos()).round() as i32,
                        center.1 + (radius * angle.sin()).round() as i32,
                    )
                })
                .collect();
            if filled {
                area.draw(&Polygon::new(points, color.filled()))?;
            } else {
                area.draw(&Polygon::new(points.clone(), WHITE.filled()))?;
                let mut outline = points.clone();
                outline.push(points[0]);
                area.draw(&PathElement::new(outline, color.stroke_width(2)))?;
            }
        }
    }
    Ok(())
}

/// The symbol of a legend entry.
enum Swatch {
    /// The `index`-th series: its colour's line through its marker.
    Series(usize),
    /// A black cross (best points).
    Cross,
    /// A black ring (own parameters).
    Ring,
}

/// Height of a legend row, in layout pixels.
const LEGEND_ROW: i32 = 22;

/// A legend below a plot: one symbol and name per entry, in `columns` columns filled
/// row by row.
fn draw_legend(area: &Area<'_>, entries: &[(String, Swatch)], columns: usize) -> Drawn {
    let columns = columns.max(1);
    let (width, _) = area.dim_in_pixel();
    let column_width = (width as i32 - 16) / columns as i32;
    let characters = ((column_width - 44) / 7).max(8) as usize;
    for (position, (name, swatch)) in entries.iter().enumerate() {
        let x = 8 + (position % columns) as i32 * column_width;
        let y = 6 + (position / columns) as i32 * LEGEND_ROW;
        let middle = (x + 14, y + 8);
        match swatch {
            Swatch::Series(index) => {
                area.draw(&PathElement::new(
                    vec![(x, middle.1), (x + 28, middle.1)],
                    series_color(*index).stroke_width(2),
                ))?;
                draw_marker(area, middle, *index)?;
            }
            Swatch::Cross => area.draw(&Cross::new(middle, 6, BLACK.stroke_width(2)))?,
            Swatch::Ring => area.draw(&Circle::new(middle, 7, BLACK.stroke_width(2)))?,
        }
        area.draw(&Text::new(
            shorten(name, characters),
            (x + 36, y + 1),
            text_style(13),
        ))?;
    }
    Ok(())
}

/// The rows a legend of `entries` takes in `columns` columns.
fn legend_rows(entries: usize, columns: usize) -> u32 {
    entries.div_ceil(columns.max(1)) as u32
}

fn value_of(configuration: &impl ScoredConfiguration, metric: &str) -> f64 {
    configuration.macro_value(metric).unwrap_or(0.0)
}

/// Resamples behind the bars' confidence whiskers and the HTML table's intervals
/// (seeded, so charts and pages are reproducible).
pub const BAR_INTERVAL_RESAMPLES: usize = 2_000;

/// The 95% percentile-bootstrap interval of `metric`'s mean over the evaluated queries.
pub fn mean_interval(configuration: &impl ScoredConfiguration, metric: &str) -> Interval {
    let values: Vec<f64> = configuration
        .query_metrics()
        .filter_map(|(_, metrics)| metrics.get(metric))
        .collect();
    bootstrap_mean_interval(&values, BAR_INTERVAL_RESAMPLES, 0.95, 42)
}

/// What a chart's title says the values are: macro averages over `evaluated_queries`
/// queries of the dataset (or qrels) `dataset`.
pub struct ChartTitle<'a> {
    pub dataset: &'a str,
    pub evaluated_queries: usize,
}

/// Horizontal bars of `metrics` (one panel each) for every configuration, with 95%
/// bootstrap confidence whiskers over queries; the leaders of each panel (the best bar
/// and every bar tied with it, [`super::leaders`]) are blue ([`palette::BEST`]), the
/// others grey, and every bar carries its value.
pub fn metric_bars<C: ScoredConfiguration>(
    chart_title: &ChartTitle<'_>,
    configurations: &[C],
    metrics: &[String],
) -> Result<Vec<u8>, ChartError> {
    let rows = configurations.len().max(1) as i32;
    let height = (120 + 30 * rows as u32).max(260);
    let label_width = 130;
    let panel_width = ((MAX_WIDTH - label_width) / metrics.len().max(1) as u32).min(300);
    let width = label_width + panel_width * metrics.len().max(1) as u32;
    let leading: Vec<Vec<bool>> = metrics
        .iter()
        .map(|metric| super::leaders::of_configurations(configurations, metric))
        .collect();
    render(width, height, |root| {
        root.fill(&WHITE)?;
        let (title, body) = root.split_vertically(50);
        title.draw(&Text::new(
            format!(
                "{}: macro averages over {} queries",
                chart_title.dataset, chart_title.evaluated_queries
            ),
            (10, 8),
            text_style(15),
        ))?;
        title.draw(&Text::new(
            "blue = best or tied with it (paired randomization test, Holm, p ≥ 0.05); whiskers = 95% bootstrap CI",
            (10, 29),
            text_style(12),
        ))?;
        let mut rest = body;
        for (panel, (metric, leads)) in metrics.iter().zip(&leading).enumerate() {
            let this_width = if panel == 0 {
                label_width + panel_width
            } else {
                panel_width
            };
            let (area, remaining) = rest.split_horizontally(this_width);
            rest = remaining;
            let names: Vec<String> = configurations
                .iter()
                .map(|c| shorten(c.name(), 16))
                .collect();
            let mut chart = ChartBuilder::on(&area)
                .caption(metric, text_style(14))
                .margin_right(14)
                .margin_left(if panel == 0 { 4 } else { 0 })
                .x_label_area_size(46)
                .y_label_area_size(if panel == 0 { label_width } else { 0 })
                .build_cartesian_2d(0.0..1.25f64, (0..rows - 1).into_segmented())?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .light_line_style(WHITE)
                .bold_line_style(GRID_GRAY)
                .x_labels(6)
                .x_label_formatter(&|x| format!("{x:.1}"))
                .y_label_formatter(&|y| match y {
                    SegmentValue::CenterOf(row) => names
                        .get((rows - 1 - *row) as usize)
                        .cloned()
                        .unwrap_or_default(),
                    _ => String::new(),
                })
                .label_style(text_style(12))
                .x_desc("value")
                .axis_desc_style(text_style(12))
                .draw()?;
            // The first configuration is drawn at the top.
            let row_of = |index: usize| rows - 1 - index as i32;
            chart.draw_series(configurations.iter().enumerate().map(|(index, c)| {
                let row = row_of(index);
                let value = value_of(c, metric);
                let color = if leads[index] {
                    color(palette::BEST)
                } else {
                    color(palette::NEUTRAL)
                };
                let mut bar = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(row)),
                        (value, SegmentValue::Exact(row + 1)),
                    ],
                    color.filled(),
                );
                bar.set_margin(4, 4, 0, 0);
                bar
            }))?;
            let intervals: Vec<Interval> = configurations
                .iter()
                .map(|c| mean_interval(c, metric))
                .collect();
            chart.draw_series(intervals.iter().enumerate().map(|(index, interval)| {
                let row = SegmentValue::CenterOf(row_of(index));
                PathElement::new(
                    vec![(interval.low, row.clone()), (interval.high, row)],
                    BLACK.stroke_width(2),
                )
            }))?;
            chart.draw_series(configurations.iter().enumerate().map(|(index, c)| {
                let value = value_of(c, metric);
                Text::new(
                    format!("{value:.3}"),
                    (
                        value.max(intervals[index].high) + 0.015,
                        SegmentValue::CenterOf(row_of(index)),
                    ),
                    text_style(12).pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Left,
                        plotters::style::text_anchor::VPos::Center,
                    )),
                )
            }))?;
        }
        Ok(())
    })
}

/// `family@k` over the run's cut-offs, one line per configuration (its own colour and
/// marker), one panel per family (e.g. `recall` and `ndcg`) side by side, and the
/// legend below.
pub fn cutoff_curves<C: ScoredConfiguration>(
    cutoffs: &[usize],
    configurations: &[C],
    families: &[&str],
) -> Result<Vec<u8>, ChartError> {
    const LEGEND_COLUMNS: usize = 3;
    let width = MAX_WIDTH;
    let panel_width = width / families.len().max(1) as u32;
    let plot_height = 340;
    let legend_height = 16 + LEGEND_ROW as u32 * legend_rows(configurations.len(), LEGEND_COLUMNS);
    render(width, plot_height + legend_height, |root| {
        root.fill(&WHITE)?;
        let (plots, legend) = root.split_vertically(plot_height);
        let mut rest = plots;
        for family in families {
            let (area, remaining) = rest.split_horizontally(panel_width);
            rest = remaining;
            let points = cutoffs.len().max(1) as i32;
            let mut chart = ChartBuilder::on(&area)
                .caption(format!("{family}@k"), text_style(15))
                .margin(10)
                .x_label_area_size(46)
                .y_label_area_size(44)
                .build_cartesian_2d((0..points - 1).into_segmented(), 0.0..1.0f64)?;
            chart
                .configure_mesh()
                .light_line_style(WHITE)
                .bold_line_style(GRID_GRAY)
                .x_label_formatter(&|x| match x {
                    SegmentValue::CenterOf(index) => cutoffs
                        .get(*index as usize)
                        .map(|k| k.to_string())
                        .unwrap_or_default(),
                    _ => String::new(),
                })
                .y_label_formatter(&|y| format!("{y:.1}"))
                .label_style(text_style(12))
                .x_desc("cut-off k")
                .y_desc(format!("{family}@k"))
                .axis_desc_style(text_style(12))
                .draw()?;
            for (index, configuration) in configurations.iter().enumerate() {
                let series: Vec<(SegmentValue<i32>, f64)> = cutoffs
                    .iter()
                    .enumerate()
                    .map(|(position, k)| {
                        (
                            SegmentValue::CenterOf(position as i32),
                            value_of(configuration, &format!("{family}@{k}")),
                        )
                    })
                    .collect();
                chart.draw_series(LineSeries::new(
                    series.clone(),
                    series_color(index).stroke_width(2),
                ))?;
                for point in &series {
                    draw_marker(root, chart.backend_coord(point), index)?;
                }
            }
        }
        let entries: Vec<(String, Swatch)> = configurations
            .iter()
            .enumerate()
            .map(|(index, c)| (c.name().to_owned(), Swatch::Series(index)))
            .collect();
        draw_legend(&legend.margin(6, 0, 40, 0), &entries, LEGEND_COLUMNS)
    })
}

/// Per-query `metric` of `configuration` minus `baseline`, sorted from largest gain to
/// largest loss; the caption counts wins, losses and ties.
pub fn delta_plot(
    configuration: &impl ScoredConfiguration,
    baseline: &impl ScoredConfiguration,
    metric: &str,
) -> Result<Vec<u8>, ChartError> {
    let deltas = super::diagnostics::per_query_deltas(configuration, baseline, metric);
    let mut sorted: Vec<f64> = deltas.iter().map(|delta| delta.delta).collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let wins = sorted.iter().filter(|&&d| d > 0.0).count();
    let losses = sorted.iter().filter(|&&d| d < 0.0).count();
    let ties = sorted.len() - wins - losses;
    let extent = sorted
        .iter()
        .fold(0.1f64, |largest, delta| largest.max(delta.abs()))
        .min(1.0)
        * 1.1;
    let count = sorted.len().max(1);
    // Narrower than the others: it sits in a collapsible box with its own padding.
    render(MAX_WIDTH - 40, 400, |root| {
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!(
                    "{} vs {}: {wins} better, {losses} worse, {ties} tied",
                    shorten(configuration.name(), 24),
                    shorten(baseline.name(), 24)
                ),
                text_style(17),
            )
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..count as f64, -extent..extent)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE)
            .bold_line_style(GRID_GRAY)
            .x_labels(6)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| {
                if y.abs() < 0.005 {
                    "0".to_owned()
                } else {
                    format!("{y:+.2}")
                }
            })
            .label_style(text_style(13))
            .x_desc("queries, sorted by difference")
            .y_desc(format!("Δ {metric}"))
            .axis_desc_style(text_style(13))
            .draw()?;
        chart.draw_series(sorted.iter().enumerate().map(|(index, &delta)| {
            let color = if delta > 0.0 {
                color(palette::GAIN)
            } else {
                color(palette::LOSS)
            };
            Rectangle::new(
                [(index as f64 + 0.1, 0.0), (index as f64 + 0.9, delta)],
                color.filled(),
            )
        }))?;
        chart.draw_series(LineSeries::new(
            [(0.0, 0.0), (count as f64, 0.0)],
            BLACK.stroke_width(1),
        ))?;
        Ok(())
    })
}

/// Blend weights normalized to sum to 1 (rankings do not change with the scale).
fn on_simplex(at: &[f64]) -> (f64, f64) {
    let total: f64 = at.iter().sum();
    if total > 0.0 {
        (at[0] / total, at[1] / total)
    } else {
        (0.0, 0.0)
    }
}

fn weights_label(at: &[f64]) -> String {
    at.iter()
        .map(|weight| format!("{weight:.2}"))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// Layout size of a sweep heatmap: two fit side by side on the report page at 1:1.
const HEATMAP_SIZE: (u32, u32) = (560, 470);
/// Width of the heatmap's side panel (colour bar and legend).
const HEATMAP_SIDE: u32 = 140;

/// A blend configuration's `metric` over the weight simplex: semantic weight on x,
/// lexical on y, temporal = 1 - both. The configuration's own weights are a white
/// circle, the best points black crosses, and a slim colour bar beside the plot gives
/// the scale (viridis: ordered in lightness, readable with any colour vision).
pub fn sweep_heatmap(
    sweep: &ConfigurationSweep,
    steps: u32,
    metric: &str,
) -> Result<Vec<u8>, ChartError> {
    let values: Vec<f64> = sweep.points.iter().map(|p| p.value(metric)).collect();
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (low, high) = if high - low < 1e-9 {
        (low - 0.01, high + 0.01)
    } else {
        (low, high)
    };
    let summary = sweep.summaries.iter().find(|s| s.metric == metric);
    let half = 0.5 / f64::from(steps.max(1));
    let (width, height) = HEATMAP_SIZE;
    render(width, height, |root| {
        root.fill(&WHITE)?;
        let (plot, side) = root.split_horizontally(width - HEATMAP_SIDE);
        let mut chart = ChartBuilder::on(&plot)
            .caption(
                format!("{}: {metric}", shorten(&sweep.name, 28)),
                text_style(16),
            )
            .margin(10)
            .x_label_area_size(48)
            .y_label_area_size(52)
            .build_cartesian_2d(-half..1.0 + half, -half..1.0 + half)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(6)
            .y_labels(6)
            .x_label_formatter(&|x| format!("{x:.1}"))
            .y_label_formatter(&|y| format!("{y:.1}"))
            .label_style(text_style(13))
            .x_desc(format!("{} weight", BLEND_AXES[0]))
            .y_desc(format!("{} weight  (temporal = rest)", BLEND_AXES[1]))
            .axis_desc_style(text_style(13))
            .draw()?;
        chart.draw_series(sweep.points.iter().zip(&values).map(|(point, &value)| {
            let (x, y) = (point.at[0], point.at[1]);
            let color: RGBColor = ViridisRGB.get_color_normalized(value, low, high);
            Rectangle::new([(x - half, y - half), (x + half, y + half)], color.filled())
        }))?;
        if let Some(summary) = summary {
            chart.draw_series(
                summary
                    .best_points
                    .iter()
                    .map(|at| Cross::new((at[0], at[1]), 6, BLACK.stroke_width(2))),
            )?;
        }
        let (x, y) = on_simplex(&sweep.default.at);
        chart.draw_series([
            Circle::new((x, y), 7, WHITE.filled()),
            Circle::new((x, y), 7, BLACK.stroke_width(2)),
        ])?;
        draw_color_bar(&side, metric, low, high)?;
        draw_heatmap_legend(&side, sweep, summary)
    })
}

/// A slim vertical colour bar from `low` (bottom) to `high` (top) with five labelled
/// ticks, at the top of the heatmap's side panel.
fn draw_color_bar(side: &Area<'_>, metric: &str, low: f64, high: f64) -> Drawn {
    let (left, right, top, bottom) = (10, 28, 58, 290);
    side.draw(&Text::new(
        shorten(metric, 16),
        (left, top - 26),
        text_style(13),
    ))?;
    for y in top..bottom {
        let value = high - (high - low) * f64::from(y - top) / f64::from(bottom - top - 1);
        let color: RGBColor = ViridisRGB.get_color_normalized(value, low, high);
        side.draw(&Rectangle::new([(left, y), (right, y + 1)], color.filled()))?;
    }
    side.draw(&Rectangle::new(
        [(left, top), (right, bottom)],
        BLACK.stroke_width(1),
    ))?;
    let ticks = 5;
    for tick in 0..ticks {
        let y = top + (bottom - 1 - top) * tick / (ticks - 1);
        let value = high - (high - low) * f64::from(tick) / f64::from(ticks - 1);
        side.draw(&PathElement::new(
            vec![(right, y), (right + 4, y)],
            BLACK.stroke_width(1),
        ))?;
        side.draw(&Text::new(
            format!("{value:.3}"),
            (right + 7, y),
            text_style(12).pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Center,
            )),
        ))?;
    }
    Ok(())
}

/// The heatmap's legend, below its colour bar: the own weights' ring and the best
/// points' cross, each with its weights.
fn draw_heatmap_legend(
    side: &Area<'_>,
    sweep: &ConfigurationSweep,
    summary: Option<&MetricSummary>,
) -> Drawn {
    let top = 316;
    side.draw(&Circle::new((17, top + 7), 7, WHITE.filled()))?;
    side.draw(&Circle::new((17, top + 7), 7, BLACK.stroke_width(2)))?;
    side.draw(&Text::new("own (S / L / T)", (30, top), text_style(12)))?;
    side.draw(&Text::new(
        weights_label(&sweep.default.at),
        (30, top + 17),
        text_style(12),
    ))?;
    let top = top + 48;
    side.draw(&Cross::new((17, top + 7), 6, BLACK.stroke_width(2)))?;
    let best_count = summary.map_or(0, |s| s.best_points.len());
    side.draw(&Text::new(
        if best_count == 1 {
            "best".to_owned()
        } else {
            format!("best ({best_count} tied)")
        },
        (30, top),
        text_style(12),
    ))?;
    if let Some(at) = summary.and_then(|s| s.best_points.first()) {
        side.draw(&Text::new(
            weights_label(at),
            (30, top + 17),
            text_style(12),
        ))?;
    }
    Ok(())
}

/// `metric` along one axis (the hybrid's vector weight, or a swept parameter), one line
/// per configuration (its own colour and marker); own values are black rings, best
/// points black crosses (as on the heatmaps); the legend is below.
pub fn sweep_lines(
    results: &SweepResults,
    configurations: &[&ConfigurationSweep],
    metric: &str,
) -> Result<Vec<u8>, ChartError> {
    const LEGEND_COLUMNS: usize = 3;
    let axis = configurations
        .first()
        .and_then(|c| c.axes.first())
        .cloned()
        .unwrap_or_default();
    let xs = configurations
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.at[0]).chain([c.default.at[0]]));
    let (mut x_low, mut x_high) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), x| {
        (low.min(x), high.max(x))
    });
    if x_high - x_low < 1e-9 {
        x_low -= 0.5;
        x_high += 0.5;
    }
    let ys = configurations.iter().flat_map(|c| {
        c.points
            .iter()
            .map(|p| p.value(metric))
            .chain([c.default.value(metric)])
    });
    let (y_low, y_high) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), y| {
        (low.min(y), high.max(y))
    });
    let pad = ((y_high - y_low) * 0.1).max(0.01);
    let (y_low, y_high) = ((y_low - pad).max(0.0), (y_high + pad).min(1.0));
    let mut entries: Vec<(String, Swatch)> = configurations
        .iter()
        .enumerate()
        .map(|(index, c)| (c.name.clone(), Swatch::Series(index)))
        .collect();
    entries.push(("best".into(), Swatch::Cross));
    entries.push(("own value".into(), Swatch::Ring));
    let plot_height = 400;
    let legend_height = 16 + LEGEND_ROW as u32 * legend_rows(entries.len(), LEGEND_COLUMNS);
    render(MAX_WIDTH, plot_height + legend_height, |root| {
        root.fill(&WHITE)?;
        let (plot, legend) = root.split_vertically(plot_height);
        let mut chart = ChartBuilder::on(&plot)
            .caption(
                format!("{}: {metric} by {axis}", shorten(&results.dataset.name, 30)),
                text_style(16),
            )
            .margin(12)
            .margin_right(24)
            .x_label_area_size(48)
            .y_label_area_size(56)
            .build_cartesian_2d(x_low..x_high, y_low..y_high)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(GRID_GRAY)
            .x_labels(8)
            .y_labels(6)
            .y_label_formatter(&|y| format!("{y:.3}"))
            .label_style(text_style(12))
            .x_desc(match configurations.first().map(|c| c.axes.as_slice()) {
                Some([first, second]) => format!("{first}  ({second} = 1 − {first})"),
                _ => axis.clone(),
            })
            .y_desc(metric)
            .axis_desc_style(text_style(12))
            .draw()?;
        for (index, configuration) in configurations.iter().enumerate() {
            let series: Vec<(f64, f64)> = configuration
                .points
                .iter()
                .map(|p| (p.at[0], p.value(metric)))
                .collect();
            chart.draw_series(LineSeries::new(
                series.clone(),
                series_color(index).stroke_width(2),
            ))?;
            for point in &series {
                draw_marker(root, chart.backend_coord(point), index)?;
            }
            if let Some(summary) = configuration.summaries.iter().find(|s| s.metric == metric) {
                chart.draw_series(
                    summary
                        .best_points
                        .iter()
                        .map(|at| Cross::new((at[0], summary.best), 7, BLACK.stroke_width(2))),
                )?;
            }
            chart.draw_series([Circle::new(
                (
                    configuration.default.at[0],
                    configuration.default.value(metric),
                ),
                8,
                BLACK.stroke_width(2),
            )])?;
        }
        draw_legend(&legend.margin(6, 0, 40, 0), &entries, LEGEND_COLUMNS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_keeps_short_text_and_marks_cuts() {
        assert_eq!(shorten("hyde-3b", 10), "hyde-3b");
        assert_eq!(shorten("a-very-long-configuration", 8), "a-very-…");
    }

    /// A configuration with macro values only.
    struct Macro {
        name: String,
        values: Vec<(String, f64)>,
    }

    impl ScoredConfiguration for Macro {
        fn name(&self) -> &str {
            &self.name
        }

        fn macro_value(&self, metric: &str) -> Option<f64> {
            self.values
                .iter()
                .find(|(name, _)| name == metric)
                .map(|(_, value)| *value)
        }

        fn query_metrics(
            &self,
        ) -> impl Iterator<Item = (&crate::dataset::QueryId, &crate::results::MetricValues)>
        {
            std::iter::empty()
        }
    }

    /// The pixels of a PNG (RGB) and its size.
    fn pixels(png: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(png))
            .read_info()
            .unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut pixels).unwrap();
        pixels.truncate(info.buffer_size());
        (info.width, info.height, pixels)
    }

    fn has(pixels: &[u8], color: palette::Rgb) -> bool {
        pixels
            .chunks(3)
            .any(|pixel| pixel == [color.0, color.1, color.2])
    }

    #[test]
    fn twelve_configurations_get_twelve_colours_and_markers_and_no_loss_colour() {
        let configurations: Vec<Macro> = (0..12)
            .map(|index| Macro {
                name: format!("configuration-{index}"),
                values: ["recall", "ndcg"]
                    .iter()
                    .flat_map(|family| {
                        [1, 5, 10].map(|k| (format!("{family}@{k}"), 0.05 + 0.07 * index as f64))
                    })
                    .collect(),
            })
            .collect();
        let png = cutoff_curves(&[1, 5, 10], &configurations, &["recall", "ndcg"]).unwrap();
        let (_, _, pixels) = pixels(&png);
        for index in 0..12 {
            assert!(has(&pixels, palette::series(index)), "series {index}");
        }
        assert!(!has(&pixels, palette::LOSS));
        let markers: std::collections::HashSet<(Shape, bool)> =
            (0..12).map(series_marker).collect();
        assert_eq!(markers.len(), 12);
    }

    #[test]
    fn the_legend_draws_each_configuration_in_its_line_colour() {
        // 12 configurations in 3 legend columns in a box below the 340 px plot, inset 6
        // px from the top and 40 from the left of the 740 px chart: columns of (700 -
        // 16) / 3 = 228 px, and entry i's line starts at x = 40 + 8 + (i % 3) x 228 and
        // runs at y = 340 + 6 + 6 + (i / 3) x 22 + 8; 2 bitmap pixels per layout pixel.
        let configurations: Vec<Macro> = (0..12)
            .map(|index| Macro {
                name: format!("configuration-{index}"),
                values: vec![("ndcg@10".into(), 0.05 + 0.07 * index as f64)],
            })
            .collect();
        let png = cutoff_curves(&[10], &configurations, &["ndcg"]).unwrap();
        let (width, _, pixels) = pixels(&png);
        for index in 0..12u32 {
            let x = 2 * (40 + 8 + (index % 3) * 228 + 3);
            let y = 2 * (340 + 6 + 6 + (index / 3) * 22 + 8);
            let at = ((y * width + x) * 3) as usize;
            let expected = palette::series(index as usize);
            assert_eq!(
                pixels[at..at + 3],
                [expected.0, expected.1, expected.2],
                "legend entry {index}"
            );
        }
    }

    #[test]
    fn charts_fit_a_page_800_px_wide() {
        // The report's page is 800 px wide less 2 x 24 px of padding.
        const { assert!(MAX_WIDTH <= 800 - 48) };
        let configurations: Vec<Macro> = (0..10)
            .map(|index| Macro {
                name: format!("a-rather-long-configuration-name-{index}"),
                values: vec![
                    ("ndcg@10".into(), 0.1 * index as f64),
                    ("recall@10".into(), 0.5),
                    ("mrr".into(), 0.9),
                ],
            })
            .collect();
        let title = ChartTitle {
            dataset: "devmem",
            evaluated_queries: 90,
        };
        let metrics = ["ndcg@10", "recall@10", "mrr"].map(String::from);
        let bars = metric_bars(&title, &configurations, &metrics).unwrap();
        let curves = cutoff_curves(&[10], &configurations, &["recall", "ndcg"]).unwrap();
        let deltas = delta_plot(&configurations[1], &configurations[0], "ndcg@10").unwrap();
        for png in [bars, curves, deltas] {
            let (width, _) = display_size(&png).unwrap();
            assert!(width <= MAX_WIDTH, "{width}");
        }
    }

    #[test]
    fn renders_a_png() {
        let png = render(40, 30, |root| {
            root.fill(&WHITE)?;
            root.draw(&Text::new("x", (5, 5), text_style(12)))?;
            Ok(())
        })
        .unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}
