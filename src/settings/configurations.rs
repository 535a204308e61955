//! Which configurations a run evaluates and with which parameters: the built-in presets
//! and the config file's `[configuration.NAME]` tables, then `[params]`, the dedicated
//! flags and `--set`, lowest precedence first.

use crate::configuration::{
    Configuration, Fusion, ParamOverrides, Preset, Weights, LIST_FUSION_PARAMS, PARAM_NAMES,
};
use crate::error::{Error, Problem};
use crate::metrics::MetricSettings;
use crate::report::files::check_output_name;

use super::{ConfigFile, RunOptions};

/// Overrides set by the dedicated command-line flags (they apply to every configuration).
fn flag_overrides(args: &RunOptions) -> Result<ParamOverrides, Error> {
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
    /// Evaluated when the run names no configurations.
    in_default_run: bool,
}

fn configuration_candidates(file: &ConfigFile) -> Result<Vec<Candidate>, Error> {
    let mut candidates: Vec<Candidate> = Preset::ALL
        .into_iter()
        .map(|preset| Candidate {
            name: preset.name().to_owned(),
            preset,
            file_overrides: ParamOverrides::default(),
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
        let check_list_fusion = |preset: Preset| {
            if overrides.sets_list_fusion() && preset.plan().fusion != Fusion::RankedLists {
                return Err(problem(format!(
                    "{} apply to configurations that fuse ranked lists (presets {}); preset {} fuses otherwise",
                    LIST_FUSION_PARAMS.join(", "),
                    Preset::ALL
                        .iter()
                        .filter(|preset| preset.plan().fusion == Fusion::RankedLists)
                        .map(|preset| preset.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    preset.name()
                )));
            }
            Ok(())
        };
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
                check_list_fusion(builtin.preset)?;
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
                check_list_fusion(preset)?;
                candidates.push(Candidate {
                    name: name.clone(),
                    preset,
                    file_overrides: overrides,
                    in_default_run: true,
                });
            }
        }
    }
    Ok(candidates)
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

    Ok(configurations)
}
