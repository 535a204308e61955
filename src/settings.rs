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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::backend_config::{self, EmbedderTableChoice, EmbedderTables, GeneratorTables};
use crate::cli::{GateArgs, RunArgs, SignificanceArgs};
use crate::compare::paired::SignificanceSettings;
use crate::configuration::{
    Configuration, ParamOverrides, Preset, Weights, MAX_RESULTS, PARAM_NAMES,
};
use crate::dataset::manifest::normalize_cutoffs;
use crate::dataset::{Grade, Manifest};
use crate::embed::choice::EmbedderChoice;
use crate::error::{Error, Problem};
use crate::gate::{parse_thresholds, GateOptions};
use crate::generate::choice::GeneratorChoice;
use crate::metrics::{MetricSettings, Semantics};
use crate::pipeline::run::RunSpec;
use crate::report::files::check_output_name;

/// The dataset used when neither the command line nor a config file names one.
pub const DEFAULT_DATASET: &str = "datasets/devmem";

/// A parsed config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    dataset: Option<PathBuf>,
    configurations: Option<Vec<String>>,
    embedder: Option<String>,
    generator: Option<String>,
    cache_dir: Option<PathBuf>,
    #[serde(default)]
    embedders: EmbedderTables,
    #[serde(default)]
    generators: GeneratorTables,
    dimension: Option<usize>,
    lexicon: Option<PathBuf>,
    model_dir: Option<PathBuf>,
    k: Option<Vec<usize>>,
    relevance_level: Option<Grade>,
    semantics: Option<Semantics>,
    metrics: Option<Vec<String>>,
    run_name: Option<String>,
    output_dir: Option<PathBuf>,
    #[serde(default)]
    params: ParamOverrides,
    #[serde(default)]
    configuration: BTreeMap<String, toml::Table>,
    #[serde(default)]
    gate: GateSection,
    /// Directory of the file, for relative paths.
    #[serde(skip)]
    directory: PathBuf,
    #[serde(skip)]
    path: PathBuf,
}

impl ConfigFile {
    pub fn load(path: &Path) -> Result<ConfigFile, Error> {
        let text = crate::input::read_small_text(path)?;
        let mut file: ConfigFile = toml::from_str(&text).map_err(|error| {
            let line = error
                .span()
                .map(|span| text[..span.start].matches('\n').count() + 1);
            let message = error.message().trim();
            let mut problem = Problem::new(path, line, message.to_owned());
            if let Some(hint) = crate::hints::unknown_field_hint(message)
                .or_else(|| backend_config::field_hint(message))
            {
                problem = problem.with_hint(hint);
            }
            Error::problem(problem)
        })?;
        file.directory = path.parent().map(Path::to_path_buf).unwrap_or_default();
        file.path = path.to_path_buf();
        Ok(file)
    }

    fn relative(&self, path: &Option<PathBuf>) -> Option<PathBuf> {
        path.as_ref().map(|path| {
            if path.is_absolute() {
                path.clone()
            } else {
                self.directory.join(path)
            }
        })
    }
}

/// The config file's `[gate]` table: the same settings as `run`'s gate flags, which win.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GateSection {
    baseline: Option<PathBuf>,
    /// `{ "ndcg@10" = 0.01, "recall@5" = 0.02 }`
    #[serde(default)]
    max_drop: BTreeMap<String, f64>,
    require_significant: Option<bool>,
    require_expectations: Option<bool>,
}

/// The significance settings named on the command line.
pub fn significance(args: &SignificanceArgs) -> Result<SignificanceSettings, Error> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(Error::Usage(format!(
            "--alpha must be in (0, 1), got {}",
            args.alpha
        )));
    }
    if args.iterations == 0 {
        return Err(Error::Usage("--iterations must be at least 1".into()));
    }
    Ok(SignificanceSettings {
        test: args.test,
        correction: args.correction,
        alpha: args.alpha,
        iterations: args.iterations,
        seed: args.seed,
    })
}

/// The baseline and gate options, when the command line or the config file names a
/// baseline.
pub fn resolve_gate(
    args: &GateArgs,
    file: &ConfigFile,
) -> Result<Option<(PathBuf, GateOptions)>, Error> {
    let Some(baseline) = args
        .baseline
        .clone()
        .or_else(|| file.relative(&file.gate.baseline))
    else {
        if args.max_drop.is_some() || args.require_significant || args.require_expectations {
            return Err(Error::Usage(
                "--max-drop, --require-significant and --require-expectations need --baseline FILE"
                    .into(),
            ));
        }
        return Ok(None);
    };
    let thresholds = match &args.max_drop {
        Some(text) => parse_thresholds(text)?,
        None => {
            let text: Vec<String> = file
                .gate
                .max_drop
                .iter()
                .map(|(metric, drop)| format!("{metric}={drop}"))
                .collect();
            parse_thresholds(&text.join(","))?
        }
    };
    Ok(Some((
        baseline,
        GateOptions {
            thresholds,
            require_significant: args.require_significant
                || file.gate.require_significant.unwrap_or(false),
            require_expectations: args.require_expectations
                || file.gate.require_expectations.unwrap_or(false),
            significance: significance(&args.significance)?,
        },
    )))
}

/// The built-in embedder names (config tables add their own).
const BUILTIN_EMBEDDERS: [&str; 3] = ["hash", "concept", "local"];

/// Everything a run needs, resolved.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// What the pipeline runs.
    pub run: RunSpec,
    /// Metric columns of the terminal table.
    pub table_metrics: Vec<String>,
    pub output_dir: PathBuf,
    pub write_reports: bool,
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

/// The dataset directory named by the command line, the config file or the default.
pub fn dataset_path(args: &RunArgs, file: &ConfigFile) -> PathBuf {
    args.dataset
        .clone()
        .or_else(|| file.relative(&file.dataset))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DATASET))
}

/// Overrides set by the dedicated command-line flags (they apply to every configuration).
fn flag_overrides(args: &RunArgs) -> Result<ParamOverrides, Error> {
    if !args.weights.is_empty() && args.weights.len() != 3 {
        return Err(Error::Usage(format!(
            "--weights takes three numbers, semantic,lexical,temporal (e.g. 0.55,0.30,0.15); got {}",
            args.weights.len()
        )));
    }
    Ok(ParamOverrides {
        weights: (args.weights.len() == 3).then(|| Weights {
            semantic: args.weights[0],
            lexical: args.weights[1],
            temporal: args.weights[2],
        }),
        vector_top_k: args.top_k,
        min_cosine: args.min_cosine,
        hyde_keywords: args.hyde_keywords,
        num_hypotheses: args.num_hypotheses,
        half_life_days: args.half_life,
        bm25_k1: args.bm25_k1,
        bm25_b: args.bm25_b,
        bm25_analyzer: args.bm25_analyzer,
        depth: args.depth,
        skip_short_queries: args.skip_short_queries,
        skip_code_mentions: args.skip_code_mentions.then_some(true),
        ..ParamOverrides::default()
    })
}

/// One `--set [CONFIG.]NAME=VALUE`, parsed.
struct SetArgument {
    configuration: Option<String>,
    overrides: ParamOverrides,
}

fn parse_set(argument: &str) -> Result<SetArgument, Error> {
    let usage = |message: String| Error::Usage(format!("--set {argument}: {message}"));
    let (key, value) = argument
        .split_once('=')
        .ok_or_else(|| usage("expected [CONFIGURATION.]NAME=VALUE".into()))?;
    let (configuration, name) = match key.trim().split_once('.') {
        Some((configuration, name)) => (Some(configuration.to_owned()), name),
        None => (None, key.trim()),
    };
    if !PARAM_NAMES.contains(&name) {
        return Err(usage(format!(
            "unknown parameter {name:?}{}; parameters: {}",
            crate::hints::suggestion(name, PARAM_NAMES),
            PARAM_NAMES.join(", ")
        )));
    }
    let overrides = ParamOverrides::parse(name, value).map_err(usage)?;
    Ok(SetArgument {
        configuration,
        overrides,
    })
}

/// A configuration known to this run before overrides: its preset and file overrides.
struct Candidate {
    name: String,
    preset: Preset,
    file_overrides: ParamOverrides,
}

fn configuration_candidates(file: &ConfigFile) -> Result<Vec<Candidate>, Error> {
    let mut candidates: Vec<Candidate> = Preset::ALL
        .into_iter()
        .map(|preset| Candidate {
            name: preset.name().to_owned(),
            preset,
            file_overrides: ParamOverrides::default(),
        })
        .collect();
    for (name, table) in &file.configuration {
        // The table's name as TOML spells it: bare when it can be, else quoted.
        let key = if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            name.clone()
        } else {
            format!("{name:?}")
        };
        let problem = |message: String| {
            Error::problem(Problem::new(
                &file.path,
                None,
                format!("[configuration.{key}]: {message}"),
            ))
        };
        // A configuration's name becomes its run file's name (runs/NAME.run).
        if let Err(error) = check_output_name("configuration name", name) {
            return Err(problem(error.to_string()));
        }
        let mut table = table.clone();
        let preset_name = match table.remove("preset") {
            Some(toml::Value::String(preset)) => Some(preset),
            Some(other) => return Err(problem(format!("preset must be a string, got {other}"))),
            None => None,
        };
        let overrides: ParamOverrides = table
            .try_into()
            .map_err(|error: toml::de::Error| problem(error.message().trim().to_owned()))?;
        let preset_names: Vec<&str> = Preset::ALL.iter().map(|preset| preset.name()).collect();
        match candidates
            .iter_mut()
            .find(|candidate| candidate.name == *name)
        {
            Some(builtin) => {
                if preset_name
                    .as_deref()
                    .is_some_and(|preset| preset != builtin.preset.name())
                {
                    return Err(problem("a built-in configuration keeps its own preset; pick a new name for a variant".into()));
                }
                builtin.file_overrides = overrides;
            }
            None => {
                let preset_name = preset_name.ok_or_else(|| {
                    problem(format!(
                        "a new configuration needs preset = one of {}",
                        preset_names.join(", ")
                    ))
                })?;
                let preset = Preset::from_name(&preset_name).ok_or_else(|| {
                    problem(format!(
                        "unknown preset {preset_name:?}{}; presets: {}",
                        crate::hints::suggestion(&preset_name, &preset_names),
                        preset_names.join(", ")
                    ))
                })?;
                candidates.push(Candidate {
                    name: name.clone(),
                    preset,
                    file_overrides: overrides,
                });
            }
        }
    }
    Ok(candidates)
}

/// Resolves the run from the command line, the config file and the dataset's manifest.
pub fn resolve(
    args: &RunArgs,
    file: &ConfigFile,
    manifest: &Manifest,
) -> Result<RunSettings, Error> {
    let cutoffs = if !args.k.is_empty() {
        args.k.clone()
    } else {
        file.k.clone().unwrap_or_else(|| manifest.cutoffs.clone())
    };
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

    let candidates = configuration_candidates(file)?;
    let names: Vec<&str> = candidates
        .iter()
        .map(|candidate| candidate.name.as_str())
        .collect();
    let selected: Vec<String> = if !args.configurations.is_empty() {
        args.configurations
            .iter()
            .map(|name| name.trim().to_owned())
            .collect()
    } else if let Some(list) = &file.configurations {
        list.clone()
    } else {
        names.iter().map(|name| name.to_string()).collect()
    };
    for name in &selected {
        if !names.contains(&name.as_str()) {
            return Err(Error::Usage(format!(
                "unknown configuration {name:?}{}; available: {}",
                crate::hints::suggestion(name, &names),
                names.join(", ")
            )));
        }
    }
    let sets: Vec<SetArgument> = args
        .set
        .iter()
        .map(|argument| parse_set(argument))
        .collect::<Result<_, _>>()?;
    for set in &sets {
        if let Some(configuration) = &set.configuration {
            if !names.contains(&configuration.as_str()) {
                return Err(Error::Usage(format!(
                    "--set: unknown configuration {configuration:?}{}",
                    crate::hints::suggestion(configuration, &names)
                )));
            }
        }
    }
    let flags = flag_overrides(args)?;
    let largest_cutoff = *metrics.cutoffs.last().expect("cut-offs are non-empty");
    let mut configurations = Vec::new();
    for name in &selected {
        if configurations
            .iter()
            .any(|configuration: &Configuration| configuration.name == *name)
        {
            continue;
        }
        let candidate = candidates
            .iter()
            .find(|candidate| candidate.name == *name)
            .expect("checked above");
        let mut params = candidate.preset.default_params();
        file.params.apply(&mut params);
        candidate.file_overrides.apply(&mut params);
        flags.apply(&mut params);
        for set in sets.iter().filter(|set| {
            set.configuration
                .as_deref()
                .is_none_or(|target| target == name)
        }) {
            set.overrides.apply(&mut params);
        }
        if params.hybrid_limit == 0 {
            params.hybrid_limit = largest_cutoff;
        }
        params.validate(name)?;
        params.weights = params.weights.normalized();
        configurations.push(Configuration {
            name: name.clone(),
            preset: candidate.preset,
            params,
        });
    }

    if args.embedder.len() > 1 {
        return Err(Error::Usage(format!(
            "run takes one --embedder (got {}); `hyde-eval compare` compares several",
            args.embedder.join(", ")
        )));
    }
    let embedder_name = args
        .embedder
        .first()
        .cloned()
        .or_else(|| file.embedder.clone())
        .or_else(|| manifest.embedder.clone())
        .unwrap_or_else(|| "hash".into());
    let local_default = || crate::models::model_dir(crate::models::DEFAULT_LOCAL_MODEL);
    let embedder = if let Some(table) = file.embedders.get(&embedder_name) {
        match backend_config::embedder_choice(&file.path, &embedder_name, table)? {
            EmbedderTableChoice::Remote(remote) => EmbedderChoice::Remote(remote),
            EmbedderTableChoice::Local { model_dir } => EmbedderChoice::Local {
                model_dir: match args.model_dir.clone().or(model_dir) {
                    Some(path) => path,
                    None => local_default()?,
                },
            },
            EmbedderTableChoice::Hash { dimension } => EmbedderChoice::Hash {
                dimension: args
                    .dimension
                    .or(dimension)
                    .unwrap_or(crate::embed::DEFAULT_HASH_DIMENSION),
            },
            EmbedderTableChoice::Concept { lexicon } => EmbedderChoice::Concept {
                lexicon: args.lexicon.clone().or(lexicon),
            },
        }
    } else {
        match embedder_name.as_str() {
            "hash" => EmbedderChoice::Hash {
                dimension: args
                    .dimension
                    .or(file.dimension)
                    .unwrap_or(crate::embed::DEFAULT_HASH_DIMENSION),
            },
            "concept" => EmbedderChoice::Concept {
                lexicon: args
                    .lexicon
                    .clone()
                    .or_else(|| file.relative(&file.lexicon)),
            },
            "local" => EmbedderChoice::Local {
                model_dir: match args
                    .model_dir
                    .clone()
                    .or_else(|| file.relative(&file.model_dir))
                {
                    Some(path) => path,
                    None => local_default()?,
                },
            },
            other => {
                let mut known: Vec<&str> = BUILTIN_EMBEDDERS.to_vec();
                known.extend(file.embedders.keys().map(String::as_str));
                let hint = if file.embedders.is_empty() {
                    "; an HTTP provider is an [embedders.NAME] table in the --config file"
                } else {
                    ""
                };
                return Err(Error::Usage(format!(
                    "unknown embedder {other:?}{}; available: {}{hint}",
                    crate::hints::suggestion(other, &known),
                    known.join(", ")
                )));
            }
        }
    };

    let generator_name = args.generator.clone().or_else(|| file.generator.clone());
    let generator = match generator_name.as_deref() {
        None | Some("recorded") => GeneratorChoice::Recorded,
        Some(name) => match file.generators.get(name) {
            Some(table) => backend_config::generator_choice(&file.path, name, table)?,
            None => {
                let mut known = vec!["recorded"];
                known.extend(file.generators.keys().map(String::as_str));
                return Err(Error::Usage(format!(
                    "unknown generator {name:?}{}; available: {} (a generator is a [generators.NAME] table in the --config file)",
                    crate::hints::suggestion(name, &known),
                    known.join(", ")
                )));
            }
        },
    };

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
        for name in &table_metrics {
            if !metric_names.contains(name) {
                let known: Vec<&str> = metric_names.iter().map(String::as_str).collect();
                return Err(Error::Usage(format!(
                    "unknown metric {name:?}{}; this run computes: {}",
                    crate::hints::suggestion(name, &known),
                    known.join(", ")
                )));
            }
        }
        table_metrics
    };

    check_threads(args.threads)?;
    let run_name = args
        .run_name
        .clone()
        .or_else(|| file.run_name.clone())
        .unwrap_or_else(|| manifest.name.clone());
    check_output_name("run name", &run_name)?;
    Ok(RunSettings {
        run: RunSpec {
            configurations,
            embedder,
            generator,
            cache_dir: args
                .cache_dir
                .clone()
                .or_else(|| file.relative(&file.cache_dir)),
            offline: args.offline,
            metrics,
            run_name,
            progress: !args.quiet,
        },
        table_metrics,
        output_dir: args
            .output_dir
            .clone()
            .or_else(|| file.relative(&file.output_dir))
            .unwrap_or_else(|| PathBuf::from("reports")),
        write_reports: !args.no_report,
        html: args.html,
        threads: args.threads,
        quiet: args.quiet,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest::defaults("test")
    }

    #[test]
    fn precedence_preset_file_flags_set() {
        let file: ConfigFile = toml::from_str(
            "[params]\nvector_top_k = 20\nhalf_life_days = 7\n[configuration.hyde-3b]\nvector_top_k = 30\n[configuration.wide]\npreset = \"blend\"\nmin_cosine = 0.1\n",
        )
        .unwrap();
        let args = RunArgs {
            half_life: Some(10.0),
            set: vec!["hyde-3b.min_cosine=0.4".into(), "depth=50".into()],
            ..RunArgs::default()
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
    fn helpful_errors() {
        let file = ConfigFile::default();
        let error = |args: RunArgs| resolve(&args, &file, &manifest()).unwrap_err().to_string();
        let message = error(RunArgs {
            configurations: vec!["hyde3b".into()],
            ..RunArgs::default()
        });
        assert!(
            message.contains("unknown configuration \"hyde3b\" (did you mean \"hyde-3b\"?)"),
            "{message}"
        );
        let message = error(RunArgs {
            set: vec!["vector_topk=3".into()],
            ..RunArgs::default()
        });
        assert!(
            message.contains("(did you mean \"vector_top_k\"?)"),
            "{message}"
        );
        let message = error(RunArgs {
            weights: vec![0.0, 0.0, 0.0],
            ..RunArgs::default()
        });
        assert!(message.contains("weights are all zero"), "{message}");
        let message = error(RunArgs {
            weights: vec![-1.0, 0.5, 0.5],
            ..RunArgs::default()
        });
        assert!(message.contains("must be finite and >= 0"), "{message}");
        let message = error(RunArgs {
            k: vec![0],
            ..RunArgs::default()
        });
        assert!(message.contains("positive"), "{message}");
        let message = error(RunArgs {
            metrics: vec!["ndcg@7".into()],
            ..RunArgs::default()
        });
        assert!(message.contains("unknown metric \"ndcg@7\""), "{message}");
    }

    #[test]
    fn gate_settings_from_the_config_file_and_flags() {
        use clap::Parser;
        let parse = |extra: &[&str]| {
            let mut argv = vec!["hyde-eval", "run"];
            argv.extend_from_slice(extra);
            match crate::cli::Cli::parse_from(argv).command {
                crate::cli::Command::Run(command) => command.gate,
                _ => unreachable!(),
            }
        };
        let file: ConfigFile = toml::from_str(
            "[gate]\nbaseline = \"base.json\"\nmax_drop = { \"ndcg@10\" = 0.01, \"mrr\" = 0.02 }\nrequire_significant = true\n",
        )
        .unwrap();
        let (path, options) = resolve_gate(&parse(&[]), &file).unwrap().unwrap();
        assert_eq!(path, PathBuf::from("base.json"));
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
            (PathBuf::from("b2.json"), 1)
        );
        // Gate options without a baseline are a usage error; no baseline means no gate.
        assert!(resolve_gate(&parse(&["--max-drop", "map=0.5"]), &ConfigFile::default()).is_err());
        assert!(resolve_gate(&parse(&[]), &ConfigFile::default())
            .unwrap()
            .is_none());
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
