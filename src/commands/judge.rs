//! `hyde-eval judge`: pools the unjudged top results of stored runs and TREC runs,
//! has a person grade them in the terminal (or from scripted keys), with an LLM's
//! proposal beside each pair on request; `--agreement` reports Cohen's kappa between
//! the proposals and the grades. Everything it writes is in the dataset directory.

use std::io::BufReader;

use crate::cli::JudgeArgs;
use crate::dataset::Dataset;
use crate::embed::choice::CacheAccess;
use crate::error::{exit_code, Error};
use crate::generate::{HypothesisGenerator, PromptTemplate};
use crate::judging::session::{read_log, Flow, Session, LOG_FILE};
use crate::judging::{agreement, assist, pool, tui, ASSIST_PROMPT};
use crate::results::stored::StoredResults;
use crate::settings::{self, ConfigFile};

use super::*;

/// The pool depth when `--depth` is not given: each configuration's and run's top 10.
const DEFAULT_POOL_DEPTH: usize = 10;

/// `hyde-eval judge`.
pub fn judge(args: &JudgeArgs) -> Result<u8, Error> {
    let assisted = [
        ("--config", args.config.is_some()),
        ("--offline", args.offline),
        ("--cache-dir", args.cache_dir.is_some()),
    ];
    if args.agreement {
        let judging = [
            ("--results", !args.results.is_empty()),
            ("--run", !args.runs.is_empty()),
            ("--depth", args.depth.is_some()),
            ("--assist", args.assist.is_some()),
            ("--keys", args.keys.is_some()),
        ];
        if let Some((flag, _)) = judging.iter().chain(&assisted).find(|(_, given)| *given) {
            return Err(Error::Usage(format!(
                "{flag} does not apply: --agreement reads the grades already logged in the dataset's judgments.jsonl, and judges nothing; drop {flag}"
            )));
        }
        return report_agreement(args);
    }
    if args.assist.is_none() {
        if let Some((flag, _)) = assisted.iter().find(|(_, given)| *given) {
            return Err(Error::Usage(format!(
                "{flag} configures the --assist generator, and none is asked: drop {flag} or add --assist NAME"
            )));
        }
    }
    if args.results.is_empty() && args.runs.is_empty() {
        return Err(Error::Usage(
            "judge needs something to pool: --results FILE (a results.json) or --run FILE (a TREC run)".into(),
        ));
    }
    let depth = args.depth.unwrap_or(DEFAULT_POOL_DEPTH);
    if depth == 0 {
        return Err(Error::Usage("--depth must be at least 1".into()));
    }
    let dataset = Dataset::load(&args.dataset)?;
    let results = args
        .results
        .iter()
        .map(|path| StoredResults::load(path))
        .collect::<Result<Vec<_>, _>>()?;
    let mut runs = Vec::new();
    for path in &args.runs {
        let bytes = crate::input::read(path)?;
        let text = crate::trec::parse::as_text(path, &bytes)?;
        runs.push(crate::trec::read_trec_run(path, text)?);
    }
    let (pairs, summary) = pool::pool(&dataset, &results, &runs, depth);
    super::note(
        args.quiet,
        &format!(
            "pool of depth {}: {} pairs, {} already judged, {} to judge{}",
            depth,
            summary.pooled,
            summary.already_judged,
            pairs.len(),
            if summary.unknown > 0 {
                format!(
                    "; {} pooled facts or queries are not in the dataset and were left out",
                    summary.unknown
                )
            } else {
                String::new()
            }
        ),
    );
    let generator = match &args.assist {
        Some(name) => Some(assist_generator(name, args)?),
        None => None,
    };
    let mut proposer = |session: &Session<'_>| -> Result<Option<crate::dataset::Grade>, Error> {
        let generator = generator.as_ref().expect("only called with --assist");
        let pair = session.pairs[session.position];
        assist(
            generator.as_ref(),
            &session.dataset.queries[pair.query],
            &session.dataset.facts[pair.fact].content,
        )
    };
    let proposer: Option<&mut tui::Proposer<'_>> = match generator {
        Some(_) => Some(&mut proposer),
        None => None,
    };
    let mut session = Session::new(&dataset, pairs)?;
    let flow = match &args.keys {
        Some(path) if path.as_os_str() == "-" => tui::run_scripted(
            &mut session,
            proposer,
            std::io::stdin().lock(),
            &mut std::io::stdout(),
        )?,
        Some(path) => {
            let (file, _) = crate::input::open(path)?;
            tui::run_scripted(
                &mut session,
                proposer,
                BufReader::new(file),
                &mut std::io::stdout(),
            )?
        }
        None => tui::run_terminal(&mut session, proposer)?,
    };
    let graded = session.pairs.len() - session.left();
    print_line(&format!(
        "{}: {graded} graded, {} left; grades are in {}",
        if flow == Flow::Done {
            "every pooled pair is judged"
        } else {
            "stopped"
        },
        session.left(),
        args.dataset.join(crate::dataset::QRELS_FILE).display()
    ))?;
    Ok(exit_code::OK)
}

/// The `--assist` generator, with hyde-eval's grading prompt.
fn assist_generator(name: &str, args: &JudgeArgs) -> Result<Box<dyn HypothesisGenerator>, Error> {
    let file = match &args.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    let mut choice = settings::chat_generator(name, &file)?;
    choice.chat.prompt = PromptTemplate {
        name: "judge-assist".into(),
        text: ASSIST_PROMPT.into(),
    };
    let cache_dir = settings::cache_dir(args.cache_dir.as_deref(), &file);
    let cache_root = || crate::cache::cache_root(cache_dir.as_deref());
    let cache = CacheAccess {
        root: &cache_root,
        offline: args.offline,
    };
    Ok(Box::new(crate::generate::choice::build_chat(
        &choice, &cache,
    )?))
}

/// `judge --agreement`: Cohen's kappa over the logged grades that had a proposal (the
/// latest grade of each pair).
fn report_agreement(args: &JudgeArgs) -> Result<u8, Error> {
    let log = read_log(&args.dataset.join(LOG_FILE))?;
    let mut latest: std::collections::BTreeMap<
        (&str, &str),
        &crate::judging::session::LoggedGrade,
    > = std::collections::BTreeMap::new();
    for entry in &log {
        latest.insert((&entry.query, &entry.fact), entry);
    }
    let pairs: Vec<(crate::dataset::Grade, crate::dataset::Grade)> = latest
        .values()
        .filter_map(|entry| entry.proposed.map(|proposed| (proposed, entry.grade)))
        .collect();
    let result = agreement::cohens_kappa(&pairs);
    print_line(&format!(
        "{} graded pairs, {} with an LLM proposal: observed agreement {:.4}, chance {:.4}, Cohen's kappa {}",
        latest.len(),
        result.pairs,
        result.observed,
        result.expected,
        result
            .kappa
            .map_or("undefined (no pairs, or both raters constant)".into(), |kappa| format!("{kappa:.4}"))
    ))?;
    Ok(exit_code::OK)
}
