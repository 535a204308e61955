//! No parameter is accepted and ignored: for every preset and every parameter, setting
//! the parameter to another valid value either changes what the configuration computes
//! (its rankings, which are its run file, or its part of `results.json`) or is refused
//! with exit code 2 naming the configuration and the parameter. The presets and
//! parameters come from the code's own lists (`Preset::ALL`, `PARAM_NAMES`), so a new
//! one is walked as soon as it exists.

mod common;

use hyde_eval::configuration::{ParamOverrides, Preset, PARAM_NAMES};
use hyde_eval::dataset::Dataset;
use hyde_eval::error::Error;
use hyde_eval::pipeline::run::{execute, Execution, RankingOutputs};
use hyde_eval::settings::{resolve, ConfigFile, RunOptions, RunSettings};

/// One valid value other than every preset's default, for each parameter.
const PERTURBED: [(&str, &str); 27] = [
    (
        "weights",
        "{ semantic = 0.1, lexical = 0.1, temporal = 0.8 }",
    ),
    ("vector_top_k", "3"),
    ("min_cosine", "0.6"),
    ("hyde_keywords", "1"),
    // Below every preset's default (1, 2 or 3), so each preset that reads it uses fewer
    // hypotheses than before; the presets reading only the first one ignore it.
    ("num_hypotheses", "1"),
    ("half_life_days", "2"),
    ("bm25_k1", "2.5"),
    ("bm25_b", "1.0"),
    ("bm25_analyzer", "\"english\""),
    ("hybrid_vector_weight", "0.1"),
    ("hybrid_text_weight", "0.9"),
    ("hybrid_candidate_multiplier", "1"),
    ("hybrid_min_score", "0.05"),
    ("hybrid_limit", "3"),
    ("adaptive_floor_start", "0.7"),
    ("adaptive_floor_step", "0.2"),
    ("skip_short_queries", "6"),
    ("skip_code_mentions", "true"),
    // devmem's shortest queries have 41 to 47 characters.
    ("min_query_chars", "50"),
    ("intent_gate", "true"),
    ("recency_decay_days", "30"),
    // The hybrid's minimum score leaves it two or three facts for most devmem queries.
    ("depth", "1"),
    ("fusion", "\"combmnz\""),
    ("normalization", "\"zmuv\""),
    ("rrf_k", "5"),
    ("fusion_vector_weight", "0.9"),
    ("fusion_text_weight", "0.1"),
];

fn devmem() -> Dataset {
    Dataset::load(&common::repo_path("datasets/devmem")).unwrap()
}

fn every_preset() -> Vec<String> {
    Preset::ALL
        .iter()
        .map(|preset| preset.name().to_owned())
        .collect()
}

fn resolved(dataset: &Dataset, args: RunOptions) -> Result<RunSettings, Error> {
    resolve(
        &RunOptions {
            quiet: true,
            ..args
        },
        &ConfigFile::default(),
        &dataset.manifest,
    )
}

/// What a configuration computed: its rankings (its run file) and its part of
/// `results.json`, less what restates its parameters or depends on the other
/// configurations of the run, all perturbed at once here:
/// - `params`, and the `adaptive_floor` summary, which restates the floor's parameters
///   beside a summary of each query's settled floor (those stay, in `per_query`);
/// - the HyDE improvement, measured against the counterpart configuration and
///   Holm-corrected over every HyDE configuration of the run;
/// - the hypotheses served, counted for the whole run (the most any configuration reads).
fn computed(execution: &Execution, position: usize) -> (String, String) {
    let serde_json::Value::Object(mut result) =
        serde_json::to_value(&execution.results.configurations[position]).unwrap()
    else {
        unreachable!("a configuration's results are a JSON object")
    };
    result.remove("params");
    result.remove("adaptive_floor");
    if let Some(hyde) = result.get_mut("hyde").and_then(|hyde| hyde.as_object_mut()) {
        for run_wide in [
            "improvement",
            "hypotheses_generated",
            "hypotheses_from_cache",
            "hypotheses_recorded",
            "cache_hit_rate",
            "generation_time",
        ] {
            hyde.remove(run_wide);
        }
    }
    (
        format!("{:?}", execution.rankings[position]),
        serde_json::Value::Object(result).to_string(),
    )
}

#[test]
fn every_parameter_changes_what_a_preset_computes_or_is_refused() {
    let mut names: Vec<&str> = PERTURBED.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    let mut known = PARAM_NAMES.to_vec();
    known.sort_unstable();
    assert_eq!(names, known, "PERTURBED holds one value per parameter");

    let mut dataset = devmem();
    let all = resolved(
        &dataset,
        RunOptions {
            configurations: every_preset(),
            ..RunOptions::default()
        },
    )
    .unwrap();
    let reference = execute(&mut dataset, &all.run, RankingOutputs::kept()).unwrap();
    let mut outcomes = Vec::new();
    for (name, value) in PERTURBED {
        let overrides = ParamOverrides::parse(name, value).unwrap();
        // The pipeline's answer: the value applied to every configuration, past the
        // settings' refusals.
        let mut perturbed = all.run.clone();
        for configuration in &mut perturbed.configurations {
            overrides.apply(&mut configuration.params);
            configuration.params.validate(&configuration.name).unwrap();
        }
        let changed = execute(&mut dataset, &perturbed, RankingOutputs::kept()).unwrap();
        for (position, preset) in Preset::ALL.iter().enumerate() {
            let setting = format!("{}.{name}={value}", preset.name());
            let settings = resolved(
                &dataset,
                RunOptions {
                    configurations: vec![preset.name().to_owned()],
                    set: vec![setting.clone()],
                    ..RunOptions::default()
                },
            );
            let effect = computed(&reference, position) != computed(&changed, position);
            outcomes.push((setting, effect, settings.err()));
        }
    }
    let mut wrong = Vec::new();
    for (setting, effect, refusal) in &outcomes {
        match (effect, refusal) {
            (true, None) => {}
            (false, Some(error)) => {
                let message = error.to_string();
                let (configuration, parameter) = setting
                    .split_once('=')
                    .and_then(|(key, _)| key.split_once('.'))
                    .unwrap();
                assert_eq!(error.exit_code(), 2, "{setting}: {message}");
                assert!(
                    message.contains(&format!(
                        "configuration {configuration:?} ignores {parameter}: "
                    )),
                    "{setting}: {message}"
                );
            }
            (true, Some(error)) => wrong.push(format!(
                "{setting}: refused, yet it changes the results: {error}"
            )),
            (false, None) => wrong.push(format!(
                "{setting}: accepted, yet the results stay the same"
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let refused = outcomes
        .iter()
        .filter(|(_, _, refusal)| refusal.is_some())
        .count();
    assert_eq!(outcomes.len(), Preset::ALL.len() * PARAM_NAMES.len());
    assert!(refused > 0 && refused < outcomes.len(), "{refused} refused");
}

/// The table of docs/configurations.md that lists the parameters each preset reads says
/// what the code reads (`fusion::plan_reads`), so a reader is never told a parameter
/// applies where it would be refused.
#[test]
fn the_docs_list_the_parameters_each_preset_reads() {
    let docs = std::fs::read_to_string(common::repo_path("docs/configurations.md")).unwrap();
    let mut expected = Vec::new();
    for preset in Preset::ALL {
        let plan = preset.plan();
        let read: Vec<String> = PARAM_NAMES
            .iter()
            .filter(|name| hyde_eval::fusion::plan_reads(&plan, name))
            .map(|name| format!("`{name}`"))
            .collect();
        expected.push(format!("| `{}` | {} |", preset.name(), read.join(", ")));
    }
    let missing: Vec<&String> = expected
        .iter()
        .filter(|row| !docs.lines().any(|line| line == row.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "rows to write:\n{}",
        expected.join("\n")
    );
}
