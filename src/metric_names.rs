//! Metric names: every spelling a user may type for one of hyde-eval's metrics, mapped
//! to its canonical name (the key of results.json, CSV and JSON outputs), and the one
//! spelling the terminal and Markdown print. Accepted, case-insensitively: hyde-eval's
//! names (`ndcg@10`), its table headers (`nDCG@10`, `R@5`), trec_eval's `-m` and output
//! names (`ndcg_cut.10`, `ndcg_cut_10`, `recip_rank`) and ir_measures' (`nDCG@10`,
//! `P@5`, `R@100`, `RR`, `RR@10`, `AP`, `Success@1`, `Judged@10`). A spelling maps to a
//! metric only where its definition is the same; unknown names get a "did you mean".
//! Pure string functions: what a run computes is the caller's to pass.

use crate::error::Error;

/// The spellings accepted for each metric, for help texts and errors.
pub const ACCEPTED_SPELLINGS: &str = "hyde-eval's (ndcg@10, recall@5, mrr), its table headers (nDCG@10, R@5, MRR), trec_eval's (ndcg_cut.10, ndcg_cut_10, P_5, recip_rank) or ir_measures' (nDCG@10, P@5, RR, AP, Success@1), in any case";

/// The canonical name (`ndcg@10`, `precision@5`, `mrr`, `map`, `judged@10`) of a metric
/// spelled in any accepted vocabulary; `None` when the spelling names no metric of
/// hyde-eval's.
pub fn canonical(spelling: &str) -> Option<String> {
    let lower = spelling.trim().to_ascii_lowercase();
    match lower.as_str() {
        "mrr" | "rr" | "recip_rank" => return Some("mrr".into()),
        "map" | "ap" => return Some("map".into()),
        "bpref" => return Some("bpref".into()),
        _ => {}
    }
    let (family, cutoff) = if let Some((family, cutoff)) = lower.split_once('@') {
        // hyde-eval's and ir_measures' `NAME@k`.
        let family = match family {
            "recall" | "r" => "recall",
            "precision" | "p" => "precision",
            "ndcg" => "ndcg",
            "hit" | "success" => "hit",
            "mrr" | "rr" => "mrr",
            "judged" => "judged",
            _ => return None,
        };
        (family, cutoff)
    } else {
        // trec_eval's `-m NAME.k` and printed `NAME_k`.
        let (family, cutoff) = lower.rsplit_once('.').or_else(|| lower.rsplit_once('_'))?;
        let family = match family {
            "recall" => "recall",
            "p" => "precision",
            "ndcg_cut" => "ndcg",
            "success" => "hit",
            _ => return None,
        };
        (family, cutoff)
    };
    let k: usize = cutoff.parse().ok().filter(|&k| k > 0)?;
    Some(format!("{family}@{k}"))
}

/// The printed spelling of a canonical name, for terminal tables and Markdown:
/// `recall@5` -> `R@5`, `precision@5` -> `P@5`, `ndcg@5` -> `nDCG@5`, `hit@5` ->
/// `Hit@5`, `mrr@10` -> `MRR@10`, `mrr` -> `MRR`, `map` -> `MAP`, `judged@10` ->
/// `Judged@10`; any other name unchanged.
pub fn display(metric: &str) -> String {
    let (name, k) = metric
        .split_once('@')
        .map_or((metric, None), |(name, k)| (name, Some(k)));
    let short = match name {
        "recall" => "R",
        "precision" => "P",
        "ndcg" => "nDCG",
        "hit" => "Hit",
        "mrr" => "MRR",
        "map" => "MAP",
        "judged" => "Judged",
        other => other,
    };
    match k {
        Some(k) => format!("{short}@{k}"),
        None => short.to_owned(),
    }
}

/// The canonical name of `spelling` when `computed` (canonical names) holds it; else a
/// usage error for `place` (`--max-drop`, `[gate] min`, ...) naming what was asked,
/// the closest computed name and every computed one.
pub fn resolve(spelling: &str, computed: &[String], place: &str) -> Result<String, Error> {
    let known: Vec<&str> = computed.iter().map(String::as_str).collect();
    match canonical(spelling) {
        Some(name) if known.contains(&name.as_str()) => Ok(name),
        Some(name) => Err(Error::Usage(format!(
            "{place}: {spelling:?} is {name}, which this run does not compute; it computes: {}{}",
            known.join(", "),
            missing_cutoff_hint(&name, &known)
        ))),
        None => Err(Error::Usage(format!(
            "{place}: unknown metric {spelling:?}{}; it computes: {}; names may be {ACCEPTED_SPELLINGS}",
            crate::hints::suggestion(&spelling.trim().to_ascii_lowercase(), &known),
            known.join(", ")
        ))),
    }
}

/// "; add the cut-off: --k 1,5,10,100" when `name` is measured at a cut-off none of the
/// `computed` names has: the cut-offs computed, with the missing one.
fn missing_cutoff_hint(name: &str, computed: &[&str]) -> String {
    let cutoff = |name: &str| {
        name.split_once('@')
            .and_then(|(_, k)| k.parse::<usize>().ok())
    };
    let Some(missing) = cutoff(name) else {
        return String::new();
    };
    let mut cutoffs: Vec<usize> = computed.iter().filter_map(|name| cutoff(name)).collect();
    if cutoffs.contains(&missing) {
        return String::new();
    }
    cutoffs.push(missing);
    cutoffs.sort_unstable();
    cutoffs.dedup();
    let list: Vec<String> = cutoffs.iter().map(usize::to_string).collect();
    format!("; add the cut-off: --k {}", list.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_vocabulary_names_the_same_metric() {
        let cases = [
            // hyde-eval's names and table headers, any case.
            ("ndcg@10", "ndcg@10"),
            ("nDCG@10", "ndcg@10"),
            ("NDCG@10", "ndcg@10"),
            ("R@1", "recall@1"),
            ("recall@100", "recall@100"),
            ("P@5", "precision@5"),
            ("precision@5", "precision@5"),
            ("Hit@3", "hit@3"),
            ("MRR@10", "mrr@10"),
            ("MRR", "mrr"),
            ("MAP", "map"),
            // trec_eval's -m names and printed names.
            ("ndcg_cut.10", "ndcg@10"),
            ("ndcg_cut_10", "ndcg@10"),
            ("P.5", "precision@5"),
            ("P_5", "precision@5"),
            ("recall_1000", "recall@1000"),
            ("recall.5", "recall@5"),
            ("success_1", "hit@1"),
            ("success.10", "hit@10"),
            ("recip_rank", "mrr"),
            ("map", "map"),
            // ir_measures' names.
            ("RR", "mrr"),
            ("RR@10", "mrr@10"),
            ("AP", "map"),
            ("Success@5", "hit@5"),
            ("Judged@10", "judged@10"),
            (" ndcg@10 ", "ndcg@10"),
        ];
        for (spelling, expected) in cases {
            assert_eq!(canonical(spelling).as_deref(), Some(expected), "{spelling}");
        }
    }

    #[test]
    fn names_of_other_definitions_map_to_nothing() {
        // trec_eval's ndcg (no cut-off), map_cut (AP@k) and Rprec are not
        // hyde-eval metrics; a cut-off must be a positive integer.
        for spelling in [
            "ndcg",
            "ndcg_cut",
            "map_cut.10",
            "AP@10",
            "Rprec",
            "ndcg@0",
            "ndcg@x",
            "P.5,10",
            "ndcg@-1",
            "",
            "ndgc@10",
        ] {
            assert_eq!(canonical(spelling), None, "{spelling}");
        }
    }

    #[test]
    fn every_canonical_name_prints_as_a_table_header_that_reads_back() {
        let names = [
            "recall@5",
            "precision@5",
            "ndcg@10",
            "hit@1",
            "mrr@10",
            "mrr",
            "map",
        ];
        let printed: Vec<String> = names.iter().map(|name| display(name)).collect();
        assert_eq!(
            printed,
            ["R@5", "P@5", "nDCG@10", "Hit@1", "MRR@10", "MRR", "MAP"]
        );
        for (name, printed) in names.iter().zip(&printed) {
            assert_eq!(canonical(printed).as_deref(), Some(*name));
        }
    }

    #[test]
    fn resolving_checks_what_the_run_computes() {
        let computed: Vec<String> = ["recall@5", "ndcg@10", "mrr", "map"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            resolve("nDCG@10", &computed, "--metrics").unwrap(),
            "ndcg@10"
        );
        assert_eq!(resolve("RR", &computed, "--metrics").unwrap(), "mrr");
        let message = resolve("ndcg@7", &computed, "--max-drop")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("--max-drop: \"ndcg@7\" is ndcg@7, which this run does not compute"),
            "{message}"
        );
        let message = resolve("ndgc@10", &computed, "--min")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("unknown metric \"ndgc@10\" (did you mean \"ndcg@10\"?)"),
            "{message}"
        );
        let message = resolve("Judged@10", &computed, "--metrics")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("\"Judged@10\" is judged@10, which this run does not compute"),
            "{message}"
        );
    }
}
