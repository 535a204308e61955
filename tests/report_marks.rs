//! One meaning per mark, and leaders that are not significantly apart shown as tied:
//! the terminal marks a column's leaders `▲` and keeps `*` / `**` for significance,
//! every table that uses a mark prints its legend (terminal, Markdown, HTML), two
//! configurations 0.0009 apart on devmem's nDCG@10 are both leaders in every table and
//! in the bar chart, and judged@k (coverage) is never marked best.

mod common;

use std::path::Path;

/// Runs `hyde-eval ARGS` in the repository and returns stdout (exit 0 required).
fn succeed(args: &[&str]) -> String {
    let output = common::command()
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The cells of the terminal table row of `configuration` under `header` (the line
/// that starts the table), split at the column separators.
fn terminal_row<'a>(text: &'a str, header: &str, configuration: &str) -> Vec<&'a str> {
    let table = &text[text.find(header).expect(header)..];
    let line = table
        .lines()
        .find(|line| line.starts_with(&format!("│ {configuration} ")))
        .unwrap();
    line.split(['│', '┆']).map(str::trim).collect()
}

const LEGEND: &str = "▲ = best in column or tied with it: not significantly below it (paired randomization test over";

#[test]
fn best_and_significance_never_share_a_mark_and_every_marked_table_has_its_legend() {
    let stdout = succeed(&["run", "--no-report", "-q"]);
    // The metric and tag tables mark leaders ▲, each followed by its legend.
    let metric_header = "│ configuration ┆     R@1";
    let tag_header = "│ nDCG@10 by query tag";
    let hyde_header = "│ HyDE configuration";
    let after = |start: &str| &stdout[stdout.find(start).unwrap()..];
    let legend_after = |start: &str| {
        after(start)
            .lines()
            .find(|line| !line.starts_with(['│', '╞', '└', '┌', '├']))
            .unwrap()
            .to_owned()
    };
    assert!(legend_after(metric_header).starts_with(&format!("{LEGEND} the 90 evaluated queries, Holm-corrected over the column's 9 comparisons, p ≥ 0.05)")), "{stdout}");
    assert!(
        legend_after(tag_header).starts_with(&format!("{LEGEND} each tag's queries")),
        "{stdout}"
    );
    let metric_table = &after(metric_header)[..after(metric_header).find(LEGEND).unwrap()];
    assert!(
        metric_table.contains('▲') && !metric_table.contains('*'),
        "{metric_table}"
    );
    // The HyDE table's `**` is significance, and its legend says so.
    let hyde_row = terminal_row(&stdout, hyde_header, "hyde-3b");
    assert!(
        hyde_row
            .iter()
            .any(|cell| cell.starts_with("+0.1055** vs blend")),
        "{hyde_row:?}"
    );
    assert!(
        legend_after(hyde_header).starts_with(
            "vs counterpart: * p adj. < 0.05, ** p adj. < 0.01 (paired randomization test"
        ),
        "{stdout}"
    );
    assert!(!after(hyde_header).contains('▲'));

    // The Markdown summary: bold leaders with their legend, the HyDE legend.
    let markdown = succeed(&["run", "--no-report", "-q", "--format", "markdown"]);
    assert_eq!(
        markdown
            .matches("**Bold** = best in column or tied with it")
            .count(),
        2,
        "metric and tag tables: {markdown}"
    );
    assert!(
        markdown.contains("\nvs counterpart: * p adj. < 0.05"),
        "{markdown}"
    );
    assert!(!markdown.contains("best in column;"), "{markdown}");
}

/// The cells of the Markdown table row of `configuration` in `text`'s first table.
fn markdown_row<'a>(text: &'a str, configuration: &str) -> Vec<&'a str> {
    text.lines()
        .find(|line| line.starts_with(&format!("| {configuration} |")))
        .unwrap()
        .split('|')
        .map(str::trim)
        .collect()
}

/// Counts the runs of `color` and of any other bar colour down the pixel column `x` of
/// a PNG (RGB): (runs of `color`, runs of `other`).
fn bar_runs(png: &Path, x: u32, color: [u8; 3], other: [u8; 3]) -> (usize, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let (mut colored, mut plain, mut previous) = (0, 0, [255u8; 3]);
    for y in 0..info.height {
        let at = ((y * info.width + x) * 3) as usize;
        let pixel = [pixels[at], pixels[at + 1], pixels[at + 2]];
        if pixel != previous {
            if pixel == color {
                colored += 1;
            } else if pixel == other {
                plain += 1;
            }
        }
        previous = pixel;
    }
    (colored, plain)
}

#[test]
fn leaders_a_hair_apart_are_tied_in_tables_and_bars_and_judged_is_never_best() {
    let output_dir = tempfile::tempdir().unwrap();
    let stdout = succeed(&[
        "run",
        "-q",
        "--html",
        "--output-dir",
        output_dir.path().to_str().unwrap(),
    ]);
    let directory = output_dir.path().join("devmem");
    // nDCG@10: hyde-3b-hyp 0.8334, multi-hyde 0.8325 (0.0009 below): both lead.
    let header = "│ configuration ┆     R@1";
    let column = |row: &[&str]| row.len() - 4; // nDCG@10: before MRR, MAP and the edge
    for (configuration, value) in [("hyde-3b-hyp", "0.8334▲"), ("multi-hyde", "0.8325▲")] {
        let row = terminal_row(&stdout, header, configuration);
        assert_eq!(row[column(&row)], value, "{row:?}");
    }
    let keyword = terminal_row(&stdout, header, "keyword");
    assert_eq!(keyword[column(&keyword)], "0.3551", "{keyword:?}");

    let metrics_md = std::fs::read_to_string(directory.join("metrics.md")).unwrap();
    let header_cells: Vec<&str> = metrics_md
        .lines()
        .find(|line| line.starts_with("| configuration |"))
        .unwrap()
        .split('|')
        .map(str::trim)
        .collect();
    let at = |name: &str| header_cells.iter().position(|cell| *cell == name).unwrap();
    assert_eq!(
        markdown_row(&metrics_md, "hyde-3b-hyp")[at("nDCG@10")],
        "**0.8334**"
    );
    assert_eq!(
        markdown_row(&metrics_md, "multi-hyde")[at("nDCG@10")],
        "**0.8325**"
    );
    // hybrid has the largest judged@k (0.6315 at 10): coverage, never bold.
    for configuration in ["keyword", "hybrid", "hyde-3b-hyp", "multi-hyde"] {
        let row = markdown_row(&metrics_md, configuration);
        for judged in ["Judged@1", "Judged@5", "Judged@10"] {
            assert!(
                !row[at(judged)].contains("**"),
                "{configuration} {judged}: {row:?}"
            );
        }
    }
    assert_eq!(
        markdown_row(&metrics_md, "hybrid")[at("Judged@10")],
        "0.6315"
    );

    // The HTML table: as many leaders as bold cells, none in a judged column.
    let page = std::fs::read_to_string(directory.join("report.html")).unwrap();
    let bold = metrics_md.matches("**0.").count() + metrics_md.matches("**1.").count();
    let metric_table = &page[page.find("<table class=\"metrics\">").unwrap()..];
    let metric_table = &metric_table[..metric_table.find("</table>").unwrap()];
    assert_eq!(metric_table.matches("class=\"num best\"").count(), bold);
    assert!(!metric_table.contains("best in column or tied with it; judged@"));
    assert!(
        page.contains("Blue</span> = best in column or tied with it: not significantly below it")
    );

    // The bar chart's nDCG@10 panel: a pixel column just right of the axis crosses
    // all 10 bars; as many are blue as nDCG@10 leaders in the tables (at least the two
    // 0.0009 apart).
    let leaders = [
        "keyword",
        "bm25",
        "dense",
        "blend",
        "hyde-3a",
        "hyde-3b",
        "hyde-3b-hyp",
        "hyde-mean",
        "multi-hyde",
        "hybrid",
    ]
    .iter()
    .filter(|configuration| {
        markdown_row(&metrics_md, configuration)[at("nDCG@10")].starts_with("**")
    })
    .count();
    assert!(leaders >= 2);
    let best = hyde_eval::report::palette::BEST;
    let neutral = hyde_eval::report::palette::NEUTRAL;
    // Layout: 130 px of labels, 4 px of margin, then the axis; 2 bitmap px per layout px.
    let (blue, grey) = bar_runs(
        &directory.join("charts/metrics.png"),
        2 * (130 + 4 + 12),
        [best.0, best.1, best.2],
        [neutral.0, neutral.1, neutral.2],
    );
    assert_eq!((blue, blue + grey), (leaders, 10));
}
