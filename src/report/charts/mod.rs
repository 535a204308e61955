//! PNG charts drawn with plotters into memory: metric bars per configuration (with 95%
//! bootstrap whiskers), metric curves over the cut-off k, per-query deltas against a baseline, and sweep charts
//! (a heatmap over the blend-weight simplex, lines over one parameter).
//!
//! Text uses Noto Sans, compiled in (the `ttf-noto-sans` crate) and laid out with
//! ab_glyph by [`backend::TextBackend`], so charts render the same on a machine without
//! system fonts. Every function is pure: data in, PNG bytes out. Legends sit in their
//! own panel beside the plot so they never cover data, and long labels are shortened.

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

/// The symbol of a legend entry.
enum Swatch {
    /// A series colour.
    Color(RGBColor),
    /// A filled dot (best points).
    Dot,
    /// A ring (own parameters).
    Ring,
}

/// A legend panel: one symbol and name per entry, top to bottom.
fn draw_legend(area: &Area<'_>, title: &str, entries: &[(String, Swatch)]) -> Drawn {
    area.draw(&Text::new(title.to_owned(), (8, 8), text_style(14)))?;
    for (row, (name, swatch)) in entries.iter().enumerate() {
        let y = 34 + row as i32 * 22;
        match swatch {
            Swatch::Color(color) => {
                area.draw(&Rectangle::new([(8, y), (26, y + 12)], color.filled()))?
            }
            Swatch::Dot => area.draw(&Circle::new((17, y + 6), 5, BLACK.filled()))?,
            Swatch::Ring => area.draw(&Circle::new((17, y + 6), 7, BLACK.stroke_width(2)))?,
        }
        area.draw(&Text::new(shorten(name, 24), (32, y - 1), text_style(13)))?;
    }
    Ok(())
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
/// bootstrap confidence whiskers over queries; the best bar of each panel is blue
/// ([`palette::BEST`]), the others grey, and every bar carries its value.
pub fn metric_bars<C: ScoredConfiguration>(
    chart_title: &ChartTitle<'_>,
    configurations: &[C],
    metrics: &[String],
) -> Result<Vec<u8>, ChartError> {
    let rows = configurations.len().max(1) as i32;
    let height = (110 + 34 * rows as u32).max(260);
    let width = 300 + 260 * metrics.len().max(1) as u32;
    render(width, height, |root| {
        root.fill(&WHITE)?;
        let (title, body) = root.split_vertically(40);
        title.draw(&Text::new(
            format!(
                "{}: macro averages over {} queries (blue = best; whiskers = 95% bootstrap CI)",
                chart_title.dataset, chart_title.evaluated_queries
            ),
            (12, 12),
            text_style(18),
        ))?;
        let label_width = 170;
        let panel_width = (width - label_width) / metrics.len().max(1) as u32;
        let mut rest = body;
        for (panel, metric) in metrics.iter().enumerate() {
            let this_width = if panel == 0 {
                label_width + panel_width
            } else {
                panel_width
            };
            let (area, remaining) = rest.split_horizontally(this_width);
            rest = remaining;
            let best = configurations
                .iter()
                .map(|c| value_of(c, metric))
                .fold(f64::NEG_INFINITY, f64::max);
            let names: Vec<String> = configurations
                .iter()
                .map(|c| shorten(c.name(), 20))
                .collect();
            let mut chart = ChartBuilder::on(&area)
                .caption(metric, text_style(16))
                .margin_right(18)
                .margin_left(if panel == 0 { 6 } else { 0 })
                .x_label_area_size(36)
                .y_label_area_size(if panel == 0 { label_width } else { 0 })
                .build_cartesian_2d(0.0..1.18f64, (0..rows - 1).into_segmented())?;
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
                .label_style(text_style(13))
                .x_desc("value")
                .axis_desc_style(text_style(13))
                .draw()?;
            // The first configuration is drawn at the top.
            let row_of = |index: usize| rows - 1 - index as i32;
            chart.draw_series(configurations.iter().enumerate().map(|(index, c)| {
                let row = row_of(index);
                let value = value_of(c, metric);
                let color = if value >= best - 1e-12 {
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
                bar.set_margin(5, 5, 0, 0);
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

/// `family@k` over the run's cut-offs, one line per configuration, one panel per family
/// (e.g. `recall` and `ndcg`).
pub fn cutoff_curves<C: ScoredConfiguration>(
    cutoffs: &[usize],
    configurations: &[C],
    families: &[&str],
) -> Result<Vec<u8>, ChartError> {
    let legend_width = 220;
    let panel_width = 420;
    let width = legend_width + panel_width * families.len().max(1) as u32;
    let height = 460.max(60 + 22 * configurations.len() as u32);
    render(width, height, |root| {
        root.fill(&WHITE)?;
        let (plots, legend) = root.split_horizontally(width - legend_width);
        let mut rest = plots;
        for family in families {
            let (area, remaining) = rest.split_horizontally(panel_width);
            rest = remaining;
            let points = cutoffs.len().max(1) as i32;
            let mut chart = ChartBuilder::on(&area)
                .caption(format!("{family}@k"), text_style(16))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(50)
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
                .label_style(text_style(13))
                .x_desc("cut-off k")
                .y_desc(format!("{family}@k"))
                .axis_desc_style(text_style(13))
                .draw()?;
            for (index, configuration) in configurations.iter().enumerate() {
                let color = series_color(index);
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
                chart.draw_series(LineSeries::new(series.clone(), color.stroke_width(2)))?;
                chart.draw_series(
                    series
                        .into_iter()
                        .map(|point| Circle::new(point, 3, color.filled())),
                )?;
            }
        }
        let entries: Vec<(String, Swatch)> = configurations
            .iter()
            .enumerate()
            .map(|(index, c)| (c.name().to_owned(), Swatch::Color(series_color(index))))
            .collect();
        draw_legend(&legend.margin(40, 0, 8, 0), "configuration", &entries)
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
    render(820, 420, |root| {
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
            .x_label_area_size(40)
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
            .x_label_area_size(40)
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
/// per configuration; own values are hollow circles, best points filled.
pub fn sweep_lines(
    results: &SweepResults,
    configurations: &[&ConfigurationSweep],
    metric: &str,
) -> Result<Vec<u8>, ChartError> {
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
    let legend_width = 220;
    render(880, 480, |root| {
        root.fill(&WHITE)?;
        let (plot, legend) = root.split_horizontally(880 - legend_width);
        let mut chart = ChartBuilder::on(&plot)
            .caption(
                format!("{}: {metric} by {axis}", results.dataset.name),
                text_style(18),
            )
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(x_low..x_high, y_low..y_high)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(GRID_GRAY)
            .x_labels(8)
            .y_labels(6)
            .y_label_formatter(&|y| format!("{y:.3}"))
            .label_style(text_style(13))
            .x_desc(match configurations.first().map(|c| c.axes.as_slice()) {
                Some([first, second]) => format!("{first}  ({second} = 1 − {first})"),
                _ => axis.clone(),
            })
            .y_desc(metric)
            .axis_desc_style(text_style(13))
            .draw()?;
        for (index, configuration) in configurations.iter().enumerate() {
            let color = series_color(index);
            let series: Vec<(f64, f64)> = configuration
                .points
                .iter()
                .map(|p| (p.at[0], p.value(metric)))
                .collect();
            chart.draw_series(LineSeries::new(series, color.stroke_width(2)))?;
            if let Some(summary) = configuration.summaries.iter().find(|s| s.metric == metric) {
                chart.draw_series(
                    summary
                        .best_points
                        .iter()
                        .map(|at| Circle::new((at[0], summary.best), 5, color.filled())),
                )?;
            }
            chart.draw_series([Circle::new(
                (
                    configuration.default.at[0],
                    configuration.default.value(metric),
                ),
                7,
                color.stroke_width(2),
            )])?;
        }
        let mut entries: Vec<(String, Swatch)> = configurations
            .iter()
            .enumerate()
            .map(|(index, c)| (c.name.clone(), Swatch::Color(series_color(index))))
            .collect();
        entries.push(("best".into(), Swatch::Dot));
        entries.push(("own value".into(), Swatch::Ring));
        draw_legend(&legend.margin(50, 0, 8, 0), "configuration", &entries)
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
