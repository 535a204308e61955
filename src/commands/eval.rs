//! `hyde-eval eval`: scores TREC runs against TREC qrels with trec_eval's semantics.

use crate::error::{Error, Problem};
use crate::input::{read_mapped, InputBytes, PageIn};
use crate::settings::{self};

use super::*;

/// A run file's bytes as TREC text (ranx JSON and ir_measures records rewritten). A
/// mapped run's pages are mapped as the threads evaluating it read them.
pub(super) fn read_run(path: &std::path::Path) -> Result<InputBytes, Error> {
    let bytes = read_mapped(path, PageIn::OnTouch)?;
    Ok(match crate::trec::formats::run_as_trec(path, &bytes)? {
        Some(rewritten) => InputBytes::Read(rewritten),
        None => bytes,
    })
}

/// A qrels file's bytes as TREC text (ranx JSON and ir_measures records rewritten; BEIR
/// TSV is read as it is). A mapped file's pages are mapped as the threads parsing it
/// read them.
pub(super) fn read_qrels(path: &std::path::Path) -> Result<InputBytes, Error> {
    let bytes = read_mapped(path, PageIn::OnTouch)?;
    Ok(match crate::trec::formats::qrels_as_trec(path, &bytes)? {
        Some(rewritten) => InputBytes::Read(rewritten),
        None => bytes,
    })
}

/// `hyde-eval eval`: scores TREC runs against TREC qrels (trec_eval semantics).
pub fn eval(args: &crate::cli::EvalArgs) -> Result<u8, Error> {
    use crate::report::{render, Document, Format};
    use crate::trec::parse;
    use crate::trec_eval::{
        evaluate_run_file, EvalOptions, EvaluatedRun, Family, MeasureSet, RunFailure,
    };

    let measures = if args.measures.is_empty() {
        MeasureSet::official()
    } else {
        MeasureSet::parse(&args.measures)
            .map_err(|message| Error::Usage(format!("-m: {message}")))?
    };
    let relevance_level = measures
        .relevance_level(args.relevance_level)
        .map_err(|message| Error::Usage(format!("-m: {message}")))?;
    if relevance_level < 0 {
        return Err(Error::Usage(
            "-l: the relevance level must be >= 0 (negative grades mean judged but unjudged)"
                .into(),
        ));
    }
    if args.collection_size.is_some() && !measures.contains(Family::Utility) {
        return Err(Error::Usage(
            "-N sets the number of documents in the collection, which only utility reads, and no utility is computed: add -m utility (or -m all_trec), or drop -N".into(),
        ));
    }
    if args.per_query && args.format == crate::cli::EvalFormat::Markdown {
        return Err(Error::Usage(
            "-q adds per-query values, and the Markdown summary holds the averages only: drop -q, or use --format trec, json or csv".into(),
        ));
    }
    if args.max_results == Some(0) {
        return Err(Error::Usage("-M must be at least 1".into()));
    }
    settings::check_threads(args.threads)?;
    let gate_settings = resolve_gate(args, relevance_level)?;
    let options = EvalOptions {
        relevance_level,
        complete: args.complete,
        max_results: args.max_results.unwrap_or(usize::MAX),
        judged_only: args.judged_only,
        collection_size: args.collection_size.unwrap_or(0),
        measures,
    };
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(threads) = args.threads {
        builder = builder.num_threads(threads);
    }
    let pool = builder
        .build()
        .map_err(|error| Error::Usage(format!("cannot start worker threads: {error}")))?;
    pool.install(|| {
        let qrels_bytes = read_qrels(&args.qrels)?;
        let qrels = parse::as_text(&args.qrels, &qrels_bytes)
            .and_then(|text| parse::parse_qrels(&args.qrels, text))
            .map_err(|error| swapped_arguments(&args.qrels, &args.runs).unwrap_or(error))?;
        qrels.check_scorable(&args.qrels, relevance_level)?;
        let mut runs = Vec::with_capacity(args.runs.len());
        for path in &args.runs {
            let bytes = read_run(path)?;
            let evaluation = evaluate_run_file(&qrels, path, &bytes, &options).map_err(|failure| {
                let duplicate = match failure {
                    RunFailure::Input(error) => return error,
                    RunFailure::Duplicate(duplicate) => duplicate,
                };
                let text = String::from_utf8_lossy(&bytes);
                let lines = parse::lines_naming(&text, &duplicate.query, &duplicate.document);
                Error::problem(
                    Problem::new(
                        path,
                        lines.get(1).copied(),
                        format!(
                            "document {} appears twice for query {} (first on line {})",
                            duplicate.document,
                            duplicate.query,
                            lines.first().copied().unwrap_or(0)
                        ),
                    )
                    .with_hint("trec_eval rejects duplicate documents: keep one line per document and query"),
                )
            })?;
            if evaluation.per_query.is_empty() {
                return Err(Error::problem(
                    Problem::new(path, None, format!("no query of this run is judged in {}", args.qrels.display()))
                        .with_hint("check that the run and the qrels use the same query ids"),
                ));
            }
            if !args.quiet {
                let missing = &evaluation.missing_from_run;
                if !missing.is_empty() && !args.complete {
                    eprintln!(
                        "note: {}: {} qrels quer{} without results ({}{}) left out of the averages, as trec_eval 9 does; pass -c to score {} as 0",
                        path.display(),
                        missing.len(),
                        if missing.len() == 1 { "y" } else { "ies" },
                        missing.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
                        if missing.len() > 5 { ", ..." } else { "" },
                        if missing.len() == 1 { "it" } else { "them" },
                    );
                }
                if evaluation.unjudged_queries > 0 {
                    eprintln!(
                        "note: {}: {} run quer{} without judgments ignored",
                        path.display(),
                        evaluation.unjudged_queries,
                        if evaluation.unjudged_queries == 1 { "y" } else { "ies" },
                    );
                }
            }
            runs.push(EvaluatedRun {
                path: path.display().to_string(),
                evaluation,
            });
        }
        let gate = gate_report(args, relevance_level, gate_settings)?;
        let format = match args.format {
            crate::cli::EvalFormat::Trec => Format::Trec,
            crate::cli::EvalFormat::Json => Format::Json,
            crate::cli::EvalFormat::Csv => Format::Csv,
            crate::cli::EvalFormat::Markdown => Format::Markdown,
        };
        let qrels = args.qrels.display().to_string();
        let text = render(
            format,
            &Document::Eval {
                qrels: &qrels,
                runs: &runs,
                options: &options,
                per_query: args.per_query,
                gate: gate.as_ref(),
            },
        )?;
        print_to_stdout(&text)?;
        match &gate {
            Some(gate) => conclude_gate(args, format, gate),
            None => Ok(crate::error::exit_code::OK),
        }
    })
}

/// Where `eval` says the gate's verdict, whatever `--quiet`: stdout keeps the measures
/// in the format asked (JSON with a `gate` object, Markdown opening with the gate's
/// summary); stderr gets the terminal summary beside trec_eval's layout (which it
/// opens with the verdict), else the verdict line; `--summary-file` gets the Markdown
/// summary. Returns the exit code.
fn conclude_gate(
    args: &crate::cli::EvalArgs,
    format: crate::report::Format,
    gate: &crate::gate::GateReport,
) -> Result<u8, Error> {
    use crate::error::exit_code;
    if format == crate::report::Format::Trec {
        eprintln!("{}", crate::report::table::gate_summary(gate));
    } else {
        eprintln!("{}", gate.verdict_line());
    }
    // After the verdict, so that a summary file that cannot be written does not hide it.
    if let Some(path) = &args.gate.summary_file {
        crate::write_policy::append(path, &crate::report::markdown::gate_section(gate))?;
    }
    Ok(if gate.passed {
        exit_code::OK
    } else {
        exit_code::REGRESSION
    })
}

/// The gate's baseline path and options, as `settings::resolve_gate` gives them.
type GateSettings = (Option<std::path::PathBuf>, crate::gate::GateOptions);

/// The gate `eval` was asked for, checked before anything is evaluated; its metrics are
/// computed at `relevance_level`.
fn resolve_gate(
    args: &crate::cli::EvalArgs,
    relevance_level: crate::dataset::Grade,
) -> Result<Option<GateSettings>, Error> {
    let gate_args = &args.gate;
    let resolved = settings::resolve_gate(
        &settings::GateOptions {
            baseline: gate_args.baseline.clone(),
            max_drop: gate_args.max_drop.clone(),
            min: gate_args.min.clone(),
            require_significant: gate_args.require_significant,
            require_expectations: false,
            significance: gate_args.significance.options(),
        },
        &settings::ConfigFile::default(),
    )?;
    if resolved.is_some() && relevance_level < 1 {
        return Err(Error::Usage(
            "the gate's metrics need -l 1 or more (grade 0 means judged not relevant)".into(),
        ));
    }
    if resolved.is_some() && args.judged_only {
        return Err(Error::Usage(
            "-J removes unjudged results before trec_eval's measures, and the gate scores whole rankings with run's metrics: drop -J, or gate in a second eval without it".into(),
        ));
    }
    if resolved.is_none() && gate_args.summary_file.is_some() {
        return Err(Error::Usage(
            "--summary-file writes the gate's summary: give --baseline RUN or --min METRIC=VALUE,...".into(),
        ));
    }
    Ok(resolved)
}

/// The cut-offs of the gate's metrics: 1, 3, 5, 10 and every `@k` the thresholds and
/// targets name.
fn gate_cutoffs(options: &crate::gate::GateOptions) -> Vec<usize> {
    let named = options
        .thresholds
        .iter()
        .map(|threshold| &threshold.metric)
        .chain(options.targets.iter().map(|target| &target.metric))
        .filter_map(|metric| metric.split_once('@'))
        .filter_map(|(_, k)| k.parse::<usize>().ok())
        .filter(|&k| k > 0);
    let mut cutoffs: Vec<usize> = [1, 3, 5, 10].into_iter().chain(named).collect();
    cutoffs.sort_unstable();
    cutoffs.dedup();
    cutoffs
}

/// `eval`'s regression gate (when asked): every run against the baseline run and the
/// targets, with `run`'s metrics at `relevance_level` and the gate of `run --baseline`.
fn gate_report(
    args: &crate::cli::EvalArgs,
    relevance_level: crate::dataset::Grade,
    gate_settings: Option<GateSettings>,
) -> Result<Option<crate::gate::GateReport>, Error> {
    use crate::gate::run_gate;
    use crate::metrics::{MetricSettings, Semantics};

    let Some((baseline_path, options)) = gate_settings else {
        return Ok(None);
    };
    let metrics = MetricSettings {
        cutoffs: gate_cutoffs(&options),
        relevance_level,
        semantics: Semantics::Trec,
    };
    let depth = args.max_results.unwrap_or(usize::MAX);
    let judgments = load_judgments(&args.qrels, relevance_level, &args.runs)?;
    let mut current = Vec::new();
    for path in &args.runs {
        let label = run_label(path);
        current.push(
            judgments
                .score(&label, load_rankings(path)?, &metrics, depth)?
                .configuration,
        );
    }
    let current = judgments.results("eval", &metrics, current);
    let baseline = match &baseline_path {
        Some(path) => {
            let scored = judgments.score("baseline", load_rankings(path)?, &metrics, depth)?;
            // The baseline under each run's name, so that every run is checked against it
            // and all checks are corrected together.
            let configurations = current
                .configurations
                .iter()
                .map(|run| crate::results::stored::StoredConfiguration {
                    name: run.name.clone(),
                    ..scored.configuration.clone()
                })
                .collect();
            Some(judgments.results(&run_label(path), &metrics, configurations))
        }
        None => None,
    };
    run_gate(
        &current,
        baseline.as_ref().zip(baseline_path.as_deref()),
        &options,
        0,
    )
    .map(Some)
}

/// How a run file is named in outputs: its path, `stdin` for `-`.
pub(super) fn run_label(path: &std::path::Path) -> String {
    if crate::input::is_stdin(path) {
        "stdin".to_owned()
    } else {
        path.display().to_string()
    }
}

/// When the qrels at `qrels` do not read as qrels: the refusal of a run given in their
/// place, rather than one error per line. It names the run file of `runs` that holds
/// judgments, when one does, with the command line that puts the two in their places.
pub(super) fn swapped_arguments(
    qrels: &std::path::Path,
    runs: &[std::path::PathBuf],
) -> Option<Error> {
    use crate::trec::parse;
    let reads_as_run = |path: &std::path::Path| {
        read_run(path).is_ok_and(|bytes| parse::parse_run(path, &bytes).is_ok())
    };
    let reads_as_qrels = |path: &std::path::Path| {
        read_qrels(path).is_ok_and(|bytes| {
            parse::as_text(path, &bytes)
                .and_then(|text| parse::parse_qrels(path, text))
                .is_ok()
        })
    };
    if !reads_as_run(qrels) {
        return None;
    }
    let (problem, hint) = match runs.iter().find(|run| reads_as_qrels(run)) {
        Some(judgments) => (
            format!(
                "holds a run (`qid Q0 docno rank score tag` lines), not judgments, and {} holds the judgments: the qrels and a run are swapped",
                judgments.display()
            ),
            format!(
                "the qrels go first: {}",
                command_line_with_qrels_first(qrels, judgments)
            ),
        ),
        None => (
            "holds a run (`qid Q0 docno rank score tag` lines), not judgments".to_owned(),
            "pass the qrels (`qid 0 docno grade` lines) first: hyde-eval eval QRELS RUN..., hyde-eval compare --qrels QRELS RUN RUN..."
                .to_owned(),
        ),
    };
    Some(Error::problem(
        Problem::new(qrels, None, problem).with_hint(hint),
    ))
}

/// This process's command line with `judgments` moved to where `qrels` (a run) was
/// given, also as an option's `--name=PATH` value, and `qrels` right after it, among the
/// runs; quoted for a POSIX shell.
fn command_line_with_qrels_first(qrels: &std::path::Path, judgments: &std::path::Path) -> String {
    let mut words: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|word| word.to_string_lossy().into_owned())
        .collect();
    let is = |word: &str, path: &std::path::Path| std::path::Path::new(word) == path;
    if let Some(at) = words.iter().position(|word| is(word, judgments)) {
        words.remove(at);
    }
    let given = words.iter().position(|word| {
        is(word, qrels)
            || word
                .split_once('=')
                .is_some_and(|(option, value)| option.starts_with("--") && is(value, qrels))
    });
    if let Some(at) = given {
        let judgments = judgments.to_string_lossy();
        words[at] = match words[at].split_once('=') {
            Some((option, _)) if option.starts_with("--") => format!("{option}={judgments}"),
            _ => judgments.into_owned(),
        };
        words.insert(at + 1, qrels.to_string_lossy().into_owned());
    }
    std::iter::once("hyde-eval".to_owned())
        .chain(words.iter().map(|word| shell_word(word)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `word` as a POSIX shell reads it back: as it is when it holds only characters no
/// shell treats specially, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain =
        |character: char| character.is_ascii_alphanumeric() || "@%+=:,./_-".contains(character);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The qrels at `path` (TREC, BEIR TSV, ranx JSON or ir_measures records) as the
/// judgments the `runs` are scored against; refused when no judgment reaches
/// `relevance_level`, and as one error when `path` holds a run (see
/// [`swapped_arguments`]).
pub(super) fn load_judgments(
    path: &std::path::Path,
    relevance_level: crate::dataset::Grade,
    runs: &[std::path::PathBuf],
) -> Result<crate::results::external::Judgments, Error> {
    let bytes = read_qrels(path)?;
    let text = crate::trec::parse::as_text(path, &bytes)?;
    let (qrels, order) = crate::trec::read_trec_qrels(path, text)
        .map_err(|error| swapped_arguments(path, runs).unwrap_or(error))?;
    if qrels.is_empty() {
        return Err(Error::problem(
            Problem::new(path, None, "no judgments")
                .with_hint("a qrels file has one `qid iteration docno grade` line per judgment"),
        ));
    }
    if !qrels
        .values()
        .flatten()
        .any(|judgment| judgment.grade >= relevance_level)
    {
        return Err(crate::dataset::nothing_to_score(
            path,
            relevance_level,
            (qrels.values().map(Vec::len).sum(), qrels.len()),
            "judge at least one document relevant, or lower --relevance-level",
        ));
    }
    Ok(crate::results::external::Judgments::new(
        run_label(path),
        text.as_bytes(),
        qrels,
        order,
    ))
}

/// The rankings of the run at `path` (TREC, ranx JSON or ir_measures records), each
/// query's results in trec_eval's order.
pub(super) fn load_rankings(
    path: &std::path::Path,
) -> Result<Vec<crate::ranking::QueryRanking>, Error> {
    let bytes = read_run(path)?;
    let text = crate::trec::parse::as_text(path, &bytes)?;
    crate::trec::read_trec_run(path, text)
}
