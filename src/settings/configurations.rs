//! Which configurations a run evaluates and with which parameters: the built-in presets
//! and the config file's `[configuration.NAME]` tables, then `[params]`, the dedicated
//! flags and `--set`, lowest precedence first. A parameter set for a configuration that
//! ignores it (`fusion::ignored_parameter`) is refused, and so is one set for every
//! configuration when none of the run's reads it.

use std::path::Path;

use crate::configuration::{Configuration, ParamOverrides, Preset, Weights, PARAM_NAMES};
use crate::error::{Error, Problem};
use crate::fusion::ignored_parameter;
use crate::metrics::MetricSettings;
use crate::report::files::check_output_name;

use super::{ConfigFile, RunOptions};

/// Parameter overrides as one place of the command line or config file gives them.
struct Given {
    /// Where they were given, as a refusal names it.
    place: Place,
    /// The configuration they apply to; `None`: every configuration of the run.
    configuration: Option<String>,
    overrides: ParamOverrides,
}

/// Where parameter overrides were given.
enum Place {
    /// A `--set` argument, as typed.
    Set(String),
    /// The dedicated flags (`--weights`, `--top-k`, ...; see [`PARAM_FLAGS`]).
    Flags,
    /// A table of the config file (`[params]`, `[configuration.NAME]`).
    File(String),
}

/// The parameters that have a dedicated flag, and the flag.
const PARAM_FLAGS: [(&str, &str); 12] = [
    ("weights", "--weights"),
    ("vector_top_k", "--top-k"),
    ("min_cosine", "--min-cosine"),
    ("hyde_keywords", "--hyde-keywords"),
    ("num_hypotheses", "--num-hypotheses"),
    ("half_life_days", "--half-life"),
    ("bm25_k1", "--bm25-k1"),
    ("bm25_b", "--bm25-b"),
    ("bm25_analyzer", "--bm25-analyzer"),
    ("depth", "--depth"),
    ("skip_short_queries", "--skip-short-queries"),
    ("skip_code_mentions", "--skip-code-mentions"),
];

impl Given {
    /// A refusal of this setting of `parameter`, naming where it was given.
    fn refusal(&self, file: &Path, parameter: &str, message: String) -> Error {
        match &self.place {
            Place::Set(argument) => Error::Usage(format!("--set {argument}: {message}")),
            Place::Flags => {
                let flag = PARAM_FLAGS
                    .iter()
                    .find(|(name, _)| *name == parameter)
                    .map_or(parameter, |(_, flag)| flag);
                Error::Usage(format!("{flag}: {message}"))
            }
            Place::File(table) => {
                Error::problem(Problem::new(file, None, format!("{table}: {message}")))
            }
        }
    }
}

/// Overrides set by the dedicated command-line flags (they apply to every configuration).
fn flag_overrides(args: &RunOptions) -> Result<Given, Error> {
    if !args.weights.is_empty() && args.weights.len() != 3 {
        return Err(Error::Usage(format!(
            "--weights takes three numbers, semantic,lexical,temporal (e.g. 0.55,0.30,0.15); got {}",
            args.weights.len()
        )));
    }
    let overrides = ParamOverrides {
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
    };
    Ok(Given {
        place: Place::Flags,
        configuration: None,
        overrides,
    })
}

/// One `--set [CONFIG.]NAME=VALUE`, parsed.
fn parse_set(argument: &str) -> Result<Given, Error> {
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
    Ok(Given {
        place: Place::Set(argument.to_owned()),
        configuration,
        overrides,
    })
}

/// A configuration known to this run before overrides: its preset and file overrides.
struct Candidate {
    name: String,
    preset: Preset,
    /// Its `[configuration.NAME]` table of the config file, when it has one.
    file_overrides: Option<Given>,
    /// Evaluated when the run names no configurations.
    in_default_run: bool,
}

fn configuration_candidates(file: &ConfigFile) -> Result<Vec<Candidate>, Error> {
    let mut candidates: Vec<Candidate> = Preset::ALL
        .into_iter()
        .map(|preset| Candidate {
            name: preset.name().to_owned(),
            preset,
            file_overrides: None,
            in_default_run: preset.in_default_run(),
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
        if let Err(error) = check_output_name("configuration name", name)
            .and_then(|()| crate::trec::check_token("configuration name", name))
        {
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
        // Whether the run selects it or not, a table may set only what its preset reads.
        let check_reads = |preset: Preset| {
            let params = preset.default_params();
            for parameter in overrides.names() {
                if !crate::fusion::plan_reads(&preset.plan(), parameter) {
                    let reason = ignored_parameter(preset, &params, parameter)
                        .expect("a parameter its plan does not read is ignored");
                    return Err(problem(format!("{parameter} does not apply: {reason}")));
                }
            }
            Ok(())
        };
        let file_overrides = Some(Given {
            place: Place::File(format!("[configuration.{key}]")),
            configuration: Some(name.clone()),
            overrides: overrides.clone(),
        });
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
                check_reads(builtin.preset)?;
                builtin.file_overrides = file_overrides;
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
                check_reads(preset)?;
                candidates.push(Candidate {
                    name: name.clone(),
                    preset,
                    file_overrides,
                    in_default_run: true,
                });
            }
        }
    }
    Ok(candidates)
}

/// "unknown configuration(s) ..." naming every one of `given` that is not among `names`
/// (each once, with a "did you mean"), or `None` when all are known.
fn unknown_names<'a>(given: impl Iterator<Item = &'a str>, names: &[&str]) -> Option<String> {
    let mut unknown: Vec<&str> = Vec::new();
    for name in given {
        if !names.contains(&name) && !unknown.contains(&name) {
            unknown.push(name);
        }
    }
    let listed: Vec<String> = unknown
        .iter()
        .map(|name| format!("{name:?}{}", crate::hints::suggestion(name, names)))
        .collect();
    match listed.as_slice() {
        [] => None,
        [one] => Some(format!("unknown configuration {one}")),
        several => Some(format!(
            "{} unknown configurations: {}",
            several.len(),
            several.join(", ")
        )),
    }
}

/// The configurations to run, each with its parameters after every override.
pub(super) fn resolve_configurations(
    args: &RunOptions,
    file: &ConfigFile,
    metrics: &MetricSettings,
) -> Result<Vec<Configuration>, Error> {
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
        candidates
            .iter()
            .filter(|candidate| candidate.in_default_run)
            .map(|candidate| candidate.name.clone())
            .collect()
    };
    if let Some(unknown) = unknown_names(selected.iter().map(String::as_str), &names) {
        return Err(Error::Usage(format!(
            "{unknown}; available: {}",
            names.join(", ")
        )));
    }
    let sets: Vec<Given> = args
        .set
        .iter()
        .map(|argument| parse_set(argument))
        .collect::<Result<_, _>>()?;
    let set_names = sets.iter().filter_map(|set| set.configuration.as_deref());
    if let Some(unknown) = unknown_names(set_names, &names) {
        return Err(Error::Usage(format!(
            "--set: {unknown}; available: {}",
            names.join(", ")
        )));
    }
    let file_params = Given {
        place: Place::File("[params]".into()),
        configuration: None,
        overrides: file.params.clone(),
    };
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
        // Lowest precedence first: [params], the configuration's table, flags, --set.
        let given: Vec<&Given> = std::iter::once(&file_params)
            .chain(&candidate.file_overrides)
            .chain(std::iter::once(&flags))
            .chain(&sets)
            .filter(|given| {
                given
                    .configuration
                    .as_deref()
                    .is_none_or(|target| target == name)
            })
            .collect();
        let mut params = candidate.preset.default_params();
        for given in &given {
            given.overrides.apply(&mut params);
        }
        if params.hybrid_limit == 0 {
            params.hybrid_limit = largest_cutoff;
        }
        params.validate(name)?;
        params.weights = params.weights.normalized();
        // What is set for this configuration alone must change what it computes.
        for given in given.iter().filter(|given| given.configuration.is_some()) {
            for parameter in given.overrides.names() {
                if let Some(reason) = ignored_parameter(candidate.preset, &params, parameter) {
                    return Err(given.refusal(
                        &file.path,
                        parameter,
                        format!("configuration {name:?} ignores {parameter}: {reason}"),
                    ));
                }
            }
        }
        configurations.push(Configuration {
            name: name.clone(),
            preset: candidate.preset,
            params,
        });
    }
    // What is set for every configuration must change what one of them computes.
    for given in [&file_params, &flags]
        .into_iter()
        .chain(&sets)
        .filter(|given| given.configuration.is_none())
    {
        for parameter in given.overrides.names() {
            let reasons: Vec<String> = configurations
                .iter()
                .map_while(|configuration| {
                    ignored_parameter(configuration.preset, &configuration.params, parameter)
                        .map(|reason| format!("{:?}: {reason}", configuration.name))
                })
                .collect();
            if reasons.len() == configurations.len() {
                return Err(given.refusal(
                    &file.path,
                    parameter,
                    format!(
                        "no configuration of this run reads {parameter}: {}",
                        reasons.join("; ")
                    ),
                ));
            }
        }
    }

    Ok(configurations)
}
