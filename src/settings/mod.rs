//! Resolves what a run does from, lowest precedence first: preset defaults, the config
//! file's `[params]`, its `[configuration.NAME]` tables, command-line flags and `--set`.
//!
//! Config file (TOML; relative paths are relative to the file):
//! ```toml
//! dataset = "datasets/devmem"
//! configurations = ["keyword", "hyde-3b", "my-blend"]
//! embedder = "hash"        # or "concept" (with lexicon = "..."), "local" (model_dir = "..."),
//!                          # or the name of an [embedders.NAME] table
//! generator = "gpt"        # a [generators.NAME] table [default: the recorded hypotheses]
//! k = [1, 5, 10]
//!
//! [params]                 # every configuration
//! half_life_days = 14
//!
//! [configuration.hyde-3b]  # one built-in configuration
//! weights = { semantic = 0.6, lexical = 0.3, temporal = 0.1 }
//!
//! [configuration.my-blend] # a new configuration: a preset plus overrides
//! preset = "blend"
//! vector_top_k = 20
//! ```
//!
//! `[embedders.NAME]` and `[generators.NAME]` tables are described in
//! [`crate::backend_config`].

mod backends;
mod configurations;
mod engines;
mod file;
mod providers;

use std::path::{Path, PathBuf};

use configurations::resolve_configurations;
pub use file::ConfigFile;
pub use providers::{chat_generator, embedder_option, given_embedder_options};
use providers::{resolve_embedder, resolve_generator};

use crate::compare::paired::{SignificanceSettings, SignificanceTest};
use crate::configuration::MAX_RESULTS;
use crate::dataset::built_in::{self, BuiltIn, Location};
use crate::dataset::manifest::normalize_cutoffs;
use crate::dataset::{Grade, Manifest};
use crate::error::{Error, Problem};
use crate::gate::{self, parse_targets, parse_thresholds};
use crate::metrics::{MetricSettings, Semantics};
use crate::pipeline::run::RunSpec;
use crate::report::files::check_output_name;
use crate::stats::Correction;
use crate::text::{Analyzer, ChunkSpec};

/// The dataset used when neither the command line nor a config file names one, when
/// this directory exists; else the built-in devmem ([`dataset_location`]).
pub const DEFAULT_DATASET: &str = "datasets/devmem";

/// What the command line asks of a run, as plain values (the `cli` module fills it from
/// its flags; tests and benches build it directly). `None` and empty lists mean "not
/// given": the config file, the dataset's manifest or the defaults decide.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub dataset: Option<PathBuf>,
    pub configurations: Vec<String>,
    /// One name for `run`; `compare` takes several.
    pub embedder: Vec<String>,
    pub generator: Option<String>,
    /// `--engine NAME`: candidates from the config file's `[engines.NAME]`.
    pub engine: Option<String>,
    /// `--chunk TOKENS,OVERLAP`: facts split into windows for vector search.
    pub chunk: Option<ChunkSpec>,
    pub offline: bool,
    pub cache_dir: Option<PathBuf>,
    pub model_dir: Option<PathBuf>,
    pub dimension: Option<usize>,
    pub lexicon: Option<PathBuf>,
    pub k: Vec<usize>,
    pub relevance_level: Option<Grade>,
    pub semantics: Option<Semantics>,
    pub weights: Vec<f64>,
    pub top_k: Option<usize>,
    pub min_cosine: Option<f64>,
    pub hyde_keywords: Option<usize>,
    pub num_hypotheses: Option<usize>,
    pub half_life: Option<f64>,
    pub bm25_k1: Option<f64>,
    pub bm25_b: Option<f64>,
    pub bm25_analyzer: Option<Analyzer>,
    pub depth: Option<usize>,
    pub skip_short_queries: Option<usize>,
    pub skip_code_mentions: bool,
    /// `[CONFIGURATION.]NAME=VALUE` parameter settings.
    pub set: Vec<String>,
    pub metrics: Vec<String>,
    pub run_name: Option<String>,
    pub output_dir: Option<PathBuf>,
    pub no_report: bool,
    /// `--run-depth N`: run-file lines per query at most.
    pub run_depth: Option<usize>,
    pub no_runs: bool,
    /// `--force`: replace a report of another set of configurations.
    pub force: bool,
    pub html: bool,
    pub threads: Option<usize>,
    pub quiet: bool,
}

/// How comparisons are tested, as the command line gives it (`None`: not given, the
/// default of [`SignificanceSettings`] applies).
#[derive(Debug, Clone, Default)]
pub struct SignificanceOptions {
    pub test: Option<SignificanceTest>,
    pub correction: Option<Correction>,
    pub alpha: Option<f64>,
    pub iterations: Option<usize>,
    pub seed: Option<u64>,
}

impl SignificanceOptions {
    /// The flags given, as the command line spells them.
    pub fn given(&self) -> Vec<&'static str> {
        [
            (self.test.is_some(), "--test"),
            (self.correction.is_some(), "--correction"),
            (self.alpha.is_some(), "--alpha"),
            (self.iterations.is_some(), "--iterations"),
            (self.seed.is_some(), "--seed"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect()
    }
}

/// The regression gate's flags (the config file's `[gate]` table fills what they leave).
#[derive(Debug, Clone)]
pub struct GateOptions {
    pub baseline: Option<PathBuf>,
    pub max_drop: Option<String>,
    pub min: Option<String>,
    pub require_significant: bool,
    pub require_expectations: bool,
    pub significance: SignificanceOptions,
}

/// The significance settings named on the command line.
pub fn significance(args: &SignificanceOptions) -> Result<SignificanceSettings, Error> {
    let defaults = SignificanceSettings::default();
    let settings = SignificanceSettings {
        test: args.test.unwrap_or(defaults.test),
        correction: args.correction.unwrap_or(defaults.correction),
        alpha: args.alpha.unwrap_or(defaults.alpha),
        iterations: args.iterations.unwrap_or(defaults.iterations),
        seed: args.seed.unwrap_or(defaults.seed),
    };
    if !(settings.alpha > 0.0 && settings.alpha < 1.0) {
        return Err(Error::Usage(format!(
            "--alpha must be in (0, 1), got {}",
            settings.alpha
        )));
    }
    if settings.iterations == 0 {
        return Err(Error::Usage("--iterations must be at least 1".into()));
    }
    Ok(settings)
}

/// The baseline (if any) and gate options, when the command line or the config file
/// names a baseline or absolute targets (`--min`).
pub fn resolve_gate(
    args: &GateOptions,
    file: &ConfigFile,
) -> Result<Option<(Option<PathBuf>, gate::GateOptions)>, Error> {
    let file_min = pairs(file, "min", file.gate.min.as_ref())?;
    let file_max_drop = pairs(file, "max_drop", file.gate.max_drop.as_ref())?;
    let table_place = |key: &str| format!("[gate] {key} in {}", file.path.display());
    let targets = match (&args.min, &file_min) {
        (Some(text), _) => parse_targets(text, "--min")?,
        (None, Some(text)) => parse_targets(text, &table_place("min"))?,
        (None, None) => Vec::new(),
    };
    let baseline = args
        .baseline
        .clone()
        .or_else(|| file.relative(&file.gate.baseline));
    if baseline.is_none() {
        if args.max_drop.is_some() || args.require_significant {
            return Err(Error::Usage(
                "--max-drop and --require-significant need --baseline FILE".into(),
            ));
        }
        // Absolute targets compare values with numbers: only a baseline is tested.
        if let Some(flag) = args.significance.given().first() {
            return Err(Error::Usage(format!(
                "{flag} sets the paired tests against a baseline; with no baseline (--baseline FILE) nothing is tested: drop {flag} or give a baseline"
            )));
        }
        if targets.is_empty() {
            if args.require_expectations {
                return Err(Error::Usage(
                    "--require-expectations needs --baseline FILE or --min METRIC=VALUE,...".into(),
                ));
            }
            return Ok(None);
        }
    }
    let thresholds = match &args.max_drop {
        Some(text) => parse_thresholds(text, "--max-drop")?,
        None => match &file_max_drop {
            Some(text) if baseline.is_some() => parse_thresholds(text, &table_place("max_drop"))?,
            _ => Vec::new(),
        },
    };
    Ok(Some((
        baseline,
        gate::GateOptions {
            thresholds,
            targets,
            require_significant: args.require_significant
                || file.gate.require_significant.unwrap_or(false),
            require_expectations: args.require_expectations
                || file.gate.require_expectations.unwrap_or(false),
            significance: significance(&args.significance)?,
        },
    )))
}

/// The config file's `[gate] key = { metric = number }` table as the command line
/// writes it; an empty table is refused, as an empty `--min` or `--max-drop` is: it
/// would make a gate that checks nothing.
fn pairs(
    file: &ConfigFile,
    key: &str,
    table: Option<&std::collections::BTreeMap<String, f64>>,
) -> Result<Option<String>, Error> {
    let Some(table) = table else {
        return Ok(None);
    };
    if table.is_empty() {
        return Err(Error::problem(
            Problem::new(
                &file.path,
                None,
                format!("[gate] {key} is an empty table: it names no metric, so the gate would check nothing"),
            )
            .with_hint(format!(
                "name a metric, e.g. {key} = {{ \"ndcg@10\" = {} }}, or remove {key}",
                if key == "min" { "0.8" } else { "0.01" }
            )),
        ));
    }
    let pairs: Vec<String> = table
        .iter()
        .map(|(metric, number)| format!("{metric}={number}"))
        .collect();
    Ok(Some(pairs.join(",")))
}

/// Everything a run needs, resolved.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// What the pipeline runs.
    pub run: RunSpec,
    /// Metric columns of the terminal table.
    pub table_metrics: Vec<String>,
    pub output_dir: PathBuf,
    pub write_reports: bool,
    /// Write the run files (`runs/NAME.run`) into the report.
    pub write_runs: bool,
    /// Run-file lines per query at most (`None`: the whole ranking).
    pub run_depth: Option<usize>,
    /// Replace a report whose configurations differ from this run's.
    pub force: bool,
    /// Also render the HTML report after writing the results.
    pub html: bool,
    pub threads: Option<usize>,
    pub quiet: bool,
}

/// The most worker threads a command may start.
pub const MAX_THREADS: usize = 1024;

/// Refuses a `--threads` value of 0 or above [`MAX_THREADS`].
pub fn check_threads(threads: Option<usize>) -> Result<(), Error> {
    match threads {
        Some(threads) if threads == 0 || threads > MAX_THREADS => Err(Error::Usage(format!(
            "--threads must be between 1 and {MAX_THREADS}, got {threads}"
        ))),
        _ => Ok(()),
    }
}

/// The search engine of the config file's `[engines.NAME]` table.
pub fn engine_spec(name: &str, file: &ConfigFile) -> Result<crate::engine::EngineSpec, Error> {
    engines::resolve_engine(name, &file.engines)
}

/// The dataset directory named by the command line, the config file or the default.
pub fn dataset_path(args: &RunOptions, file: &ConfigFile) -> PathBuf {
    named_dataset(args, file).unwrap_or_else(|| PathBuf::from(DEFAULT_DATASET))
}

/// The dataset the command line or the config file names, if either does (a config
/// file's `built-in:NAME` as written, any other path relative to the file's directory).
fn named_dataset(args: &RunOptions, file: &ConfigFile) -> Option<PathBuf> {
    args.dataset.clone().or_else(|| match &file.dataset {
        Some(path) if built_in::is_prefixed(path) => Some(path.clone()),
        _ => file.relative(&file.dataset),
    })
}

/// Where the run's dataset is, read in hyde-eval's own layout when `native`: the one the
/// command line or the config file names ([`built_in::locate`]), else
/// [`DEFAULT_DATASET`] when that directory exists, else the built-in devmem (the
/// `bool` is then true, for the command to say so).
pub fn dataset_location(
    args: &RunOptions,
    file: &ConfigFile,
    native: bool,
) -> Result<(Location, bool), Error> {
    if let Some(path) = named_dataset(args, file) {
        return Ok((built_in::locate(&path, native)?, false));
    }
    let default = Path::new(DEFAULT_DATASET);
    match BuiltIn::named("devmem") {
        Some(devmem) if native && std::fs::symlink_metadata(default).is_err() => {
            Ok((Location::BuiltIn(devmem), true))
        }
        _ => Ok((Location::Directory(default.to_path_buf()), false)),
    }
}

/// Resolves the run from the command line, the config file and the dataset's manifest,
/// lowest precedence first (see the module docs).
pub fn resolve(
    args: &RunOptions,
    file: &ConfigFile,
    manifest: &Manifest,
) -> Result<RunSettings, Error> {
    let metrics = resolve_metrics(args, file, manifest)?;
    let configurations = resolve_configurations(args, file, &metrics)?;
    refuse_unused_providers(args, &configurations)?;
    let embedder = resolve_embedder(args, file, manifest)?;
    let generator = resolve_generator(args, file)?;
    let engine = args
        .engine
        .as_ref()
        .or(file.engine.as_ref())
        .map(|name| engines::resolve_engine(name, &file.engines))
        .transpose()?;
    let chunk = match args.chunk {
        Some(spec) => Some(spec),
        None => file.chunk_spec()?,
    };
    if chunk.is_some() && engine.is_some() {
        return Err(Error::Usage(
            "--chunk indexes chunks in process; a search engine holds whole facts: drop --chunk or --engine".into(),
        ));
    }
    let table_metrics = resolve_table_metrics(args, file, &metrics)?;
    check_threads(args.threads)?;
    let run_name = args
        .run_name
        .clone()
        .or_else(|| file.run_name.clone())
        .unwrap_or_else(|| manifest.name.clone());
    check_output_name("run name", &run_name)?;
    crate::trec::check_token("run name", &run_name)?;
    if args.run_depth == Some(0) {
        return Err(Error::Usage(
            "--run-depth must be at least 1 (--no-runs writes no run files)".into(),
        ));
    }
    if args.no_report {
        let writes = [
            ("--output-dir", args.output_dir.is_some()),
            ("--no-runs", args.no_runs),
            ("--run-depth", args.run_depth.is_some()),
            ("--force", args.force),
        ];
        if let Some((flag, _)) = writes.iter().find(|(_, given)| *given) {
            return Err(Error::Usage(format!(
                "{flag} applies to the files written, and --no-report writes none; drop one of them"
            )));
        }
    }
    if args.no_runs && args.run_depth.is_some() {
        return Err(Error::Usage(
            "--no-runs writes no run files, so --run-depth has nothing to cut; drop one of them"
                .into(),
        ));
    }
    Ok(RunSettings {
        run: RunSpec {
            configurations,
            embedder,
            generator,
            engine,
            cache_dir: args
                .cache_dir
                .clone()
                .or_else(|| file.relative(&file.cache_dir)),
            offline: args.offline,
            metrics,
            run_name,
            progress: !args.quiet,
            shard: None,
            chunk,
            sources: file.source_policy()?,
        },
        table_metrics,
        output_dir: args
            .output_dir
            .clone()
            .or_else(|| file.relative(&file.output_dir))
            .unwrap_or_else(|| PathBuf::from("reports")),
        write_reports: !args.no_report,
        write_runs: !args.no_report && !args.no_runs,
        run_depth: args.run_depth,
        force: args.force,
        html: args.html,
        threads: args.threads,
        quiet: args.quiet,
    })
}

/// Refuses the embedder's options when no configuration of the run searches vectors, and
/// `--generator` when none uses hypotheses: nothing would read them.
fn refuse_unused_providers(
    args: &RunOptions,
    configurations: &[crate::configuration::Configuration],
) -> Result<(), Error> {
    let names = || {
        configurations
            .iter()
            .map(|configuration| configuration.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let searches_vectors = configurations
        .iter()
        .any(|configuration| configuration.plan().vector.is_some());
    if !searches_vectors {
        let embedding = [
            ("--embedder", !args.embedder.is_empty()),
            ("--chunk", args.chunk.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .chain(providers::given_embedder_options(args));
        if let Some(flag) = embedding.into_iter().next() {
            return Err(Error::Usage(format!(
                "{flag}: no configuration of this run ({}) searches vectors, so nothing is embedded: drop {flag}",
                names()
            )));
        }
    }
    let uses_hypotheses = configurations
        .iter()
        .any(|configuration| configuration.plan().uses_hypotheses());
    if args.generator.is_some() && !uses_hypotheses {
        return Err(Error::Usage(format!(
            "--generator: no configuration of this run ({}) uses hypotheses: drop --generator",
            names()
        )));
    }
    Ok(())
}

/// The metrics and depth runs of any system are scored with against qrels (`compare
/// --qrels`): the command line's or config file's cut-offs, relevance level, semantics
/// and depth, else the defaults a dataset without a manifest gets.
pub fn external_metrics(
    args: &RunOptions,
    file: &ConfigFile,
) -> Result<(MetricSettings, usize), Error> {
    let metrics = resolve_metrics(args, file, &Manifest::defaults("qrels"))?;
    let depth = args
        .depth
        .unwrap_or(crate::configuration::Params::default().depth);
    if depth == 0 || depth > MAX_RESULTS {
        return Err(Error::Usage(format!(
            "--depth must be between 1 and {MAX_RESULTS}, got {depth}"
        )));
    }
    Ok((metrics, depth))
}

/// The cut-offs, relevance level and semantics of the metrics.
fn resolve_metrics(
    args: &RunOptions,
    file: &ConfigFile,
    manifest: &Manifest,
) -> Result<MetricSettings, Error> {
    let cutoffs = if !args.k.is_empty() {
        args.k.clone()
    } else {
        file.k.clone().unwrap_or_else(|| manifest.cutoffs.clone())
    };
    if cutoffs.is_empty() {
        return Err(Error::Usage(
            "k: cut-offs must be a non-empty list of positive integers".into(),
        ));
    }
    if cutoffs.contains(&0) {
        return Err(Error::Usage("k: cut-offs must be positive integers".into()));
    }
    if let Some(&too_large) = cutoffs.iter().find(|&&k| k > MAX_RESULTS) {
        return Err(Error::Usage(format!(
            "k: cut-off {too_large} is more than {MAX_RESULTS}, the most results hyde-eval ranks per query"
        )));
    }
    let metrics = MetricSettings {
        cutoffs: normalize_cutoffs(cutoffs),
        relevance_level: args.relevance_level.or(file.relevance_level).unwrap_or(1),
        semantics: args.semantics.or(file.semantics).unwrap_or(Semantics::Trec),
    };
    if metrics.relevance_level < 1 {
        return Err(Error::Usage(
            "relevance level must be at least 1 (grade 0 means judged not relevant)".into(),
        ));
    }

    Ok(metrics)
}

/// The metric columns of the terminal table: named ones (checked, each metric once
/// whatever its spellings), else recall, precision and nDCG at every cut-off, MRR and
/// MAP.
fn resolve_table_metrics(
    args: &RunOptions,
    file: &ConfigFile,
    metrics: &MetricSettings,
) -> Result<Vec<String>, Error> {
    let metric_names = metrics.metric_names();
    let table_metrics = if !args.metrics.is_empty() {
        args.metrics.clone()
    } else {
        file.metrics.clone().unwrap_or_default()
    };
    let table_metrics = if table_metrics.is_empty() {
        let mut default = Vec::new();
        for k in &metrics.cutoffs {
            default.extend([
                format!("recall@{k}"),
                format!("precision@{k}"),
                format!("ndcg@{k}"),
            ]);
        }
        default.extend(["mrr".to_owned(), "map".to_owned()]);
        default
    } else {
        let place = if args.metrics.is_empty() {
            "metrics (config file)"
        } else {
            "--metrics"
        };
        // Two spellings of one metric (`ndcg@10`, `nDCG@10`) are one column.
        let mut columns: Vec<String> = Vec::new();
        for name in &table_metrics {
            let metric = crate::metric_names::resolve(name, &metric_names, place)?;
            if !columns.contains(&metric) {
                columns.push(metric);
            }
        }
        columns
    };

    Ok(table_metrics)
}

/// The cache directory: `explicit` (`--cache-dir`), else the config file's `cache_dir`
/// (relative to the file), else `None` (the default, resolved when used).
pub fn cache_dir(explicit: Option<&std::path::Path>, file: &ConfigFile) -> Option<PathBuf> {
    explicit
        .map(std::path::Path::to_path_buf)
        .or_else(|| file.relative(&file.cache_dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configuration::Preset;

    fn manifest() -> Manifest {
        Manifest::defaults("test")
    }

    #[test]
    fn precedence_preset_file_flags_set() {
        let file: ConfigFile = toml::from_str(
            "[params]\nvector_top_k = 20\nhalf_life_days = 7\n[configuration.hyde-3b]\nvector_top_k = 30\n[configuration.wide]\npreset = \"blend\"\nmin_cosine = 0.1\n",
        )
        .unwrap();
        let args = RunOptions {
            half_life: Some(10.0),
            set: vec!["hyde-3b.min_cosine=0.4".into(), "depth=50".into()],
            ..RunOptions::default()
        };
        let settings = resolve(&args, &file, &manifest()).unwrap();
        let get = |name: &str| {
            settings
                .run
                .configurations
                .iter()
                .find(|c| c.name == name)
                .unwrap()
        };
        assert_eq!(settings.run.configurations.len(), 11);
        assert_eq!(get("blend").params.vector_top_k, 20);
        assert_eq!(get("hyde-3b").params.vector_top_k, 30);
        assert_eq!(get("hyde-3b").params.min_cosine, 0.4);
        assert_eq!(get("blend").params.min_cosine, 0.25);
        assert_eq!(get("wide").preset, Preset::Blend);
        assert_eq!(get("wide").params.min_cosine, 0.1);
        assert!(settings
            .run
            .configurations
            .iter()
            .all(|c| c.params.half_life_days == 10.0 && c.params.depth == 50));
        assert_eq!(
            get("hybrid").params.hybrid_limit,
            10,
            "0 resolves to the largest k"
        );
        assert_eq!(get("multi-hyde").params.num_hypotheses, 3);
    }

    #[test]
    fn two_spellings_of_one_metric_are_one_column() {
        let args = RunOptions {
            metrics: vec![
                "ndcg@10".into(),
                "RR".into(),
                "nDCG@10".into(),
                "NDCG_CUT_10".into(),
                "mrr".into(),
            ],
            ..RunOptions::default()
        };
        let settings = resolve(&args, &ConfigFile::default(), &manifest()).unwrap();
        assert_eq!(settings.table_metrics, ["ndcg@10", "mrr"]);
    }

    #[test]
    fn helpful_errors() {
        let file = ConfigFile::default();
        let error = |args: RunOptions| resolve(&args, &file, &manifest()).unwrap_err().to_string();
        let message = error(RunOptions {
            configurations: vec!["hyde3b".into()],
            ..RunOptions::default()
        });
        assert!(
            message.contains("unknown configuration \"hyde3b\" (did you mean \"hyde-3b\"?)"),
            "{message}"
        );
        let message = error(RunOptions {
            set: vec!["vector_topk=3".into()],
            ..RunOptions::default()
        });
        assert!(
            message.contains("(did you mean \"vector_top_k\"?)"),
            "{message}"
        );
        let message = error(RunOptions {
            weights: vec![0.0, 0.0, 0.0],
            ..RunOptions::default()
        });
        assert!(message.contains("weights are all zero"), "{message}");
        let message = error(RunOptions {
            weights: vec![-1.0, 0.5, 0.5],
            ..RunOptions::default()
        });
        assert!(message.contains("must be finite and >= 0"), "{message}");
        let message = error(RunOptions {
            k: vec![0],
            ..RunOptions::default()
        });
        assert!(message.contains("positive"), "{message}");
        let message = error(RunOptions {
            metrics: vec!["ndcg@7".into()],
            ..RunOptions::default()
        });
        assert!(
            message.contains("--metrics: \"ndcg@7\" is ndcg@7, which this run does not compute"),
            "{message}"
        );
    }

    #[test]
    fn gate_settings_from_the_config_file_and_flags() {
        // The flags `run` gives the gate: a baseline and --max-drop, or neither.
        let parse = |flags: &[&str]| {
            let value = |name: &str| {
                flags
                    .iter()
                    .position(|flag| *flag == name)
                    .map(|at| flags[at + 1].to_owned())
            };
            GateOptions {
                baseline: value("--baseline").map(PathBuf::from),
                max_drop: value("--max-drop"),
                min: value("--min"),
                require_significant: false,
                require_expectations: false,
                significance: SignificanceOptions::default(),
            }
        };
        let file: ConfigFile = toml::from_str(
            "[gate]\nbaseline = \"base.json\"\nmax_drop = { \"ndcg@10\" = 0.01, \"mrr\" = 0.02 }\nrequire_significant = true\n",
        )
        .unwrap();
        let (path, options) = resolve_gate(&parse(&[]), &file).unwrap().unwrap();
        assert_eq!(path, Some(PathBuf::from("base.json")));
        let thresholds: Vec<(String, f64)> = options
            .thresholds
            .iter()
            .map(|t| (t.metric.clone(), t.max_drop))
            .collect();
        assert_eq!(
            thresholds,
            vec![("mrr".into(), 0.02), ("ndcg@10".into(), 0.01)]
        );
        assert!(options.require_significant && !options.require_expectations);
        // Flags win over the file.
        let (path, options) = resolve_gate(
            &parse(&["--baseline", "b2.json", "--max-drop", "map=0.5"]),
            &file,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (path, options.thresholds.len()),
            (Some(PathBuf::from("b2.json")), 1)
        );
        // Gate options without a baseline are a usage error; no baseline means no gate.
        assert!(resolve_gate(&parse(&["--max-drop", "map=0.5"]), &ConfigFile::default()).is_err());
        assert!(resolve_gate(&parse(&[]), &ConfigFile::default())
            .unwrap()
            .is_none());
        // Absolute targets need no baseline; the flag wins over the file's table.
        let file: ConfigFile =
            toml::from_str("[gate]\nmin = { \"ndcg@10\" = 0.8, \"mrr\" = 0.7 }\n").unwrap();
        let (path, options) = resolve_gate(&parse(&[]), &file).unwrap().unwrap();
        let targets: Vec<(String, f64)> = options
            .targets
            .iter()
            .map(|t| (t.metric.clone(), t.min))
            .collect();
        assert_eq!(
            (path, targets, options.thresholds.len()),
            (None, vec![("mrr".into(), 0.7), ("ndcg@10".into(), 0.8)], 0)
        );
        let (_, options) = resolve_gate(&parse(&["--min", "map=0.5"]), &file)
            .unwrap()
            .unwrap();
        assert_eq!(options.targets.len(), 1);
        assert!(resolve_gate(&parse(&["--min", "map=1.5"]), &file).is_err());
    }

    #[test]
    fn config_file_errors_name_the_line() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("c.toml");
        std::fs::write(&path, "k = [1]\n\n[params]\nweigths = 1\n").unwrap();
        let message = ConfigFile::load(&path).unwrap_err().to_string();
        assert!(
            message.contains("c.toml:4: unknown field `weigths`"),
            "{message}"
        );
    }
}
