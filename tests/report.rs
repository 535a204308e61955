//! `hyde-eval report` and `run --html`: results.json reads back byte-identically, the
//! per-query records agree with the TREC run files, the exports agree with the
//! results, dataset text is escaped, and the page passes the headless-Chromium check
//! (no console messages, no network requests) when Chromium is installed.

mod common;

use std::path::Path;
use std::process::Command;

use hyde_eval::report::palette;
use hyde_eval::results::Results;
use hyde_eval::trec::read_trec_run;

use common::hyde_eval;

fn succeed(args: &[&str]) -> String {
    let output = hyde_eval(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Runs devmem with --html into a temporary directory; returns it.
fn run_with_html() -> tempfile::TempDir {
    let output_dir = tempfile::tempdir().unwrap();
    let stdout = succeed(&[
        "run",
        "--quiet",
        "--html",
        "--output-dir",
        output_dir.path().to_str().unwrap(),
    ]);
    // Data on stdout; where the reports went is a note on stderr (none with --quiet).
    assert!(!stdout.contains("written to"), "{stdout}");
    output_dir
}

fn load(path: &Path) -> (Vec<u8>, Results) {
    let bytes = std::fs::read(path).unwrap();
    let results = serde_json::from_slice(&bytes).unwrap();
    (bytes, results)
}

#[test]
fn results_json_reads_back_byte_identically() {
    let output_dir = run_with_html();
    let (bytes, results) = load(&output_dir.path().join("devmem/results.json"));
    let mut again = serde_json::to_vec_pretty(&results).unwrap();
    again.push(b'\n');
    if let Some(at) = bytes.iter().zip(&again).position(|(a, b)| a != b) {
        let context = |text: &[u8]| {
            String::from_utf8_lossy(&text[at.saturating_sub(80)..(at + 80).min(text.len())])
                .into_owned()
        };
        panic!(
            "results.json changes when read back, at byte {at}:\n{}\n---\n{}",
            context(&bytes),
            context(&again)
        );
    }
    assert_eq!(bytes.len(), again.len());
    assert_eq!(results.queries.len(), 90);
    assert!(results.queries.iter().all(|q| q.hypotheses.len() == 3));
}

/// `top` and `relevant_ranks` in results.json are what the TREC run files hold: the
/// first 10 fact ids, and the 1-based position of every relevant fact.
#[test]
fn per_query_records_match_the_run_files() {
    let output_dir = run_with_html();
    let directory = output_dir.path().join("devmem");
    let (_, results) = load(&directory.join("results.json"));
    let judgments: std::collections::HashMap<_, _> = results
        .queries
        .iter()
        .map(|q| (q.id.clone(), &q.judgments))
        .collect();
    for configuration in &results.configurations {
        let path = directory.join(format!("runs/{}.run", configuration.name));
        let run = read_trec_run(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
        for query in &configuration.per_query {
            let ranking = run
                .iter()
                .find(|r| r.query == query.query)
                .map(|r| {
                    r.results
                        .iter()
                        .map(|(fact, _)| fact.clone())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            let top: Vec<_> = ranking.iter().take(10).cloned().collect();
            assert_eq!(
                *query.top,
                top[..],
                "{} {}",
                configuration.name,
                query.query
            );
            let relevant: Vec<_> = judgments[&query.query]
                .iter()
                .filter(|(_, &grade)| grade >= 1)
                .map(|(fact, _)| fact.clone())
                .collect();
            assert_eq!(query.relevant_ranks.facts().count(), relevant.len());
            for fact in relevant {
                let position = ranking.iter().position(|f| *f == fact).map(|p| p + 1);
                assert_eq!(
                    query.relevant_ranks.get(&fact),
                    Some(position),
                    "{} {}",
                    configuration.name,
                    query.query
                );
            }
        }
    }
}

/// The report files exist; metrics.md and metrics.csv carry results.json's numbers,
/// the best of each column marked as in the terminal table; the page embeds every
/// chart, references nothing outside itself and opens on the results (the metric
/// table and its charts before the dataset and configuration details).
#[test]
fn report_writes_page_charts_and_metric_exports() {
    let output_dir = run_with_html();
    let directory = output_dir.path().join("devmem");
    let (_, results) = load(&directory.join("results.json"));
    for file in [
        "report.html",
        "metrics.md",
        "metrics.csv",
        "charts/metrics.png",
        "charts/cutoffs.png",
        "charts/delta-hyde-3b-hyp-vs-blend.png",
        "charts/delta-hyde-3a-vs-keyword.png",
    ] {
        assert!(directory.join(file).is_file(), "{file}");
    }
    let csv = std::fs::read_to_string(directory.join("metrics.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "configuration");
    assert_eq!(
        header[1..],
        results
            .evaluation
            .metrics
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()[..]
    );
    for (line, configuration) in lines.zip(&results.configurations) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells[0], configuration.name);
        for (cell, metric) in cells[1..].iter().zip(&results.evaluation.metrics) {
            assert_eq!(
                cell.parse::<f64>().unwrap(),
                configuration.macro_metrics[metric].as_f64().unwrap()
            );
        }
    }
    // README figures: hyde-3b-hyp has the best P@1 (0.8889), multi-hyde the best MAP.
    let markdown = std::fs::read_to_string(directory.join("metrics.md")).unwrap();
    let row = |name: &str| {
        markdown
            .lines()
            .find(|line| line.starts_with(&format!("| {name} |")))
            .unwrap()
            .to_owned()
    };
    assert!(
        row("hyde-3b-hyp").contains("**0.8889**"),
        "{}",
        row("hyde-3b-hyp")
    );
    assert!(
        row("multi-hyde").contains("| **0.7038** |"),
        "{}",
        row("multi-hyde")
    );
    assert!(!row("keyword").contains("**"));

    let page = std::fs::read_to_string(directory.join("report.html")).unwrap();
    assert_eq!(page.matches("src=\"data:image/png;base64,").count(), 2 + 5);
    for external in ["src=\"http", "href=\"http", "src=\"//", "url(", "@import"] {
        assert!(!page.contains(external), "{external}");
    }
    assert!(page.contains("default-src 'none'"));
    assert!(page.contains("hyde-3b-hyp vs blend on ndcg@10"));
    let position = |anchor: &str| page.find(anchor).unwrap_or_else(|| panic!("{anchor}"));
    assert!(position("id=\"metrics\"") < position("id=\"dataset\""));
    assert!(position("alt=\"bar chart") < position("id=\"dataset\""));
    assert!(position("id=\"dataset\"") < position("id=\"configurations\""));
}

/// Writes a copy of `directory`'s results.json whose queries, hypotheses, facts and
/// dataset description carry `injected`, and returns its path.
fn write_injected_results(directory: &Path, injected: &str) -> std::path::PathBuf {
    let (_, mut results) = load(&directory.join("results.json"));
    // The largest hyde-3b-hyp loss is diagnosed, so its query text is shown.
    for query in &mut results.queries {
        query.text = format!("{injected} {}", query.text);
        for hypothesis in &mut query.hypotheses {
            *hypothesis = injected.to_owned();
        }
    }
    for fact in &mut results.facts {
        fact.content = injected.to_owned();
    }
    results.dataset.description = injected.to_owned();
    let path = directory.join("injected.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&results).unwrap()).unwrap();
    path
}

/// Dataset text is escaped: a query, a hypothesis and a fact with markup in them come
/// out as text.
#[test]
fn dataset_text_is_escaped() {
    let output_dir = run_with_html();
    let directory = output_dir.path().join("devmem");
    let injected = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    let path = write_injected_results(&directory, injected);
    let report_dir = output_dir.path().join("injected");
    succeed(&[
        "report",
        path.to_str().unwrap(),
        "--output-dir",
        report_dir.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    assert!(!page.contains("<script"), "raw script tag in the page");
    assert!(!page.contains("<img src=x"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

#[test]
fn report_input_errors_exit_2() {
    let output_dir = run_with_html();
    let directory = output_dir.path().join("devmem");
    let results = directory.join("results.json");
    let results = results.to_str().unwrap();
    let output = hyde_eval(&["report", results, "--reference", "blnd"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("did you mean \"blend\""));
    let output = hyde_eval(&["report", results, "--metric", "ndcg@7"]);
    assert_eq!(output.status.code(), Some(2));
    let not_results = directory.join("timings.json");
    let output = hyde_eval(&["report", not_results.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .contains("timings.json: is a timings.json (a run's stage times), not a results.json"),
        "{stderr}"
    );
    // A sweep of another dataset is refused.
    let sweep_dir = output_dir.path().join("sweeps");
    succeed(&[
        "sweep",
        "--quiet",
        "--dataset",
        "datasets/chatcli-ab",
        "--configurations",
        "blend",
        "--steps",
        "4",
        "--folds",
        "2",
        "--output-dir",
        sweep_dir.to_str().unwrap(),
    ]);
    let sweep = sweep_dir.join("chatcli-ab-sweep/sweep.json");
    let output = hyde_eval(&["report", results, "--sweep", sweep.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("this sweep ran on dataset chatcli-ab")
    );
}

/// The pixel size and the pixels of a PNG (RGB).
fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

fn has_pixel(pixels: &[u8], color: palette::Rgb) -> bool {
    pixels
        .chunks(3)
        .any(|pixel| pixel == [color.0, color.1, color.2])
}

/// The page and the chart files speak the palette: the stylesheet's best and loss
/// colours and the charts' best bars, gains and losses are the palette's constants
/// (no red best bar any more); every embedded chart has twice the pixels of its
/// displayed size and fits a page 800 px wide; each per-query comparison sits in a
/// <details> (the first open).
#[test]
fn html_uses_the_palette_embeds_2x_charts_and_folds_the_diagnostics() {
    use base64::Engine;
    let output_dir = run_with_html();
    let directory = output_dir.path().join("devmem");
    let page = std::fs::read_to_string(directory.join("report.html")).unwrap();
    assert!(page.contains(&format!("--best: {};", palette::BEST.hex())));
    assert!(page.contains(&format!("--loss: {};", palette::LOSS.hex())));
    assert!(page.contains("--best: #0072b2;"), "Okabe-Ito blue");

    let (_, _, bars) = decode_png(&std::fs::read(directory.join("charts/metrics.png")).unwrap());
    assert!(has_pixel(&bars, palette::BEST) && has_pixel(&bars, palette::NEUTRAL));
    assert!(
        !has_pixel(&bars, palette::Rgb(214, 39, 40)),
        "the old red best bar"
    );
    let (_, _, deltas) =
        decode_png(&std::fs::read(directory.join("charts/delta-hyde-3b-vs-blend.png")).unwrap());
    assert!(has_pixel(&deltas, palette::GAIN) && has_pixel(&deltas, palette::LOSS));

    let images: Vec<&str> = page.split("<img ").skip(1).collect();
    assert!(images.len() >= 7, "bars, curves and 5 delta plots");
    for image in images {
        let attribute = |name: &str| -> String {
            let start = image.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            image[start..].split('"').next().unwrap().to_owned()
        };
        let data = attribute("src");
        let encoded = data.strip_prefix("data:image/png;base64,").unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        let (width, height, _) = decode_png(&bytes);
        let shown: (u32, u32) = (
            attribute("width").parse().unwrap(),
            attribute("height").parse().unwrap(),
        );
        assert!(shown.0 > 100 && shown.1 > 100, "{shown:?}");
        // Shown at its own size on a page 800 px wide (less 2 x 24 px of padding), so
        // its text is as large as it was drawn.
        assert!(shown.0 <= 800 - 48, "{shown:?}");
        assert_eq!((width, height), (2 * shown.0, 2 * shown.1));
    }

    let diagnostics = &page[page.find("id=\"diagnostics\"").unwrap()..];
    let sections: Vec<&str> = diagnostics
        .split("<details class=\"comparison\"")
        .skip(1)
        .collect();
    // hyde-3a vs keyword and four HyDE configurations vs blend.
    assert_eq!(sections.len(), 5);
    for (index, section) in sections.iter().enumerate() {
        assert_eq!(
            section.starts_with(" open>"),
            index == 0,
            "{}",
            &section[..40]
        );
        let body = &section[..section.find("</summary>").unwrap()];
        assert!(body.contains(" vs ") && body.contains("better"), "{body}");
        assert!(section.contains("alt=\"per-query ndcg@10 of "));
        assert!(
            section.contains("paired randomization test p = "),
            "{section}"
        );
    }
}

/// The page opens in headless Chromium with no console message and no network
/// request (scripts/html_check.sh), and the check itself fails on a page that loads
/// a remote image.
#[test]
#[ignore = "needs chromium (apt-get install chromium); .ci/run runs it by name"]
fn html_report_passes_the_headless_chromium_check() {
    let script = common::repo_path("scripts/html_check.sh");
    let available = ["chromium", "chromium-browser"].iter().any(|name| {
        Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .is_ok_and(|output| output.status.success())
    });
    assert!(
        available,
        "chromium is not installed (apt-get install chromium)"
    );
    let output_dir = tempfile::tempdir().unwrap();
    succeed(&[
        "sweep",
        "--quiet",
        "--output-dir",
        output_dir.path().to_str().unwrap(),
    ]);
    succeed(&[
        "run",
        "--quiet",
        "--output-dir",
        output_dir.path().to_str().unwrap(),
    ]);
    let directory = output_dir.path().join("devmem");
    succeed(&[
        "report",
        directory.join("results.json").to_str().unwrap(),
        "--sweep",
        output_dir
            .path()
            .join("devmem-sweep/sweep.json")
            .to_str()
            .unwrap(),
    ]);
    let check = |page: &Path, screenshot: &Path| {
        Command::new("bash")
            .arg(&script)
            .arg(page)
            .arg(screenshot)
            .output()
            .unwrap()
    };
    let screenshot = output_dir.path().join("report.png");
    let output = check(&directory.join("report.html"), &screenshot);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(std::fs::metadata(&screenshot).unwrap().len() > 10_000);
    let narrow = output_dir.path().join("report-800.png");
    assert!(std::fs::metadata(&narrow).unwrap().len() > 10_000);
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("no sideways overflow at 1280 or 800 px")
    );

    // Markup in dataset text does not execute: each payload would log to the console
    // (which fails the check) if the page let it run.
    let injected = "<script>console.log('x1')</script>\"'><img src=x onerror=console.log('x2')>\
                    </script><script>console.log('x3')</script><svg onload=console.log('x4')>";
    let injected_results = write_injected_results(&directory, injected);
    let injected_dir = output_dir.path().join("injected");
    succeed(&[
        "report",
        injected_results.to_str().unwrap(),
        "--output-dir",
        injected_dir.to_str().unwrap(),
    ]);
    let output = check(
        &injected_dir.join("report.html"),
        &output_dir.path().join("injected.png"),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "injected markup ran or logged: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The same payload unescaped does log, so the check above can fail.
    let unescaped = output_dir.path().join("unescaped.html");
    std::fs::write(&unescaped, format!("<!DOCTYPE html><p>{injected}</p>")).unwrap();
    let output = check(&unescaped, &output_dir.path().join("unescaped.png"));
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("x1"));

    let bad = output_dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><p>x</p><img src=\"http://127.0.0.1:9/x.png\">",
    )
    .unwrap();
    let output = check(&bad, &output_dir.path().join("bad.png"));
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("network request from the page: http://127.0.0.1:9/x.png"));

    // A 1000 px wide block fits the 1280 px window, not the 800 px one.
    let wide = output_dir.path().join("wide.html");
    std::fs::write(
        &wide,
        "<!DOCTYPE html><body style=\"margin:0\"><div style=\"width:1000px\">x</div></body>",
    )
    .unwrap();
    let output = check(&wide, &output_dir.path().join("wide.png"));
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .contains("the page overflows sideways at 800 px: scrollWidth 1000 > clientWidth 800"),
        "{stderr}"
    );
    assert!(!stderr.contains("at 1280 px"), "{stderr}");
}
