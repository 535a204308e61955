//! The fast paths against simple references kept for these tests:
//! - the lexical index vs chatcli keyword relevance and BM25 computed fact by fact,
//!   straight from the definitions (reference section 3; Lucene's BM25), with no
//!   postings: on every devmem query (and its hypotheses' keywords) both give
//!   bit-identical scores, with both analyzers and several (k1, b);
//! - the pipeline's batched dense search vs every fact's cosine sorted: `dense` on devmem
//!   ranks exactly as the full sort does;
//! - the streaming route's cut over keyword relevance groups vs scoring every candidate:
//!   keyword × temporal and the blend rank alike, to the bit, on random small corpora
//!   ranked a few results deep, where most groups are cut.

mod common;

use hyde_eval::configuration::{Fusion, Params, Weights};
use hyde_eval::dataset::collection::plain_fact;
use hyde_eval::dataset::{Dataset, Fact, FactId};
use hyde_eval::embed::{EmbeddingProvider, HashProvider, TextKind};
use hyde_eval::fusion::{method, LexicalMemo, Searches, SignalSources};
use hyde_eval::index::{sort_by_score_then_id, Bm25Params, FlatIndex, LexicalIndex, LexicalNeeds};
use hyde_eval::pipeline::run::{execute, RankingOutputs};
use hyde_eval::settings::RunOptions;
use hyde_eval::settings::{resolve, ConfigFile};
use hyde_eval::text::{extract_keywords, word_tokens, Analyzer};

fn devmem() -> Dataset {
    Dataset::load(&common::repo_path("datasets/devmem")).unwrap()
}

/// chatcli `computeRelevance`, fact by fact.
fn reference_relevance(facts: &[&Fact], keywords: &[String]) -> Vec<(u32, f64)> {
    let matches = |token: &str, keyword: &str| {
        token == keyword || (keyword.chars().count() >= 4 && token.starts_with(keyword))
    };
    let mut hits = Vec::new();
    for (position, fact) in facts.iter().enumerate() {
        let content = word_tokens(&fact.content);
        let tags = word_tokens(&fact.tags.join(" "));
        let mut sum = 0.0;
        for keyword in keywords {
            let keyword = keyword.trim().to_lowercase();
            if keyword.is_empty() {
                continue;
            }
            if content.iter().any(|token| matches(token, &keyword)) {
                sum += 1.0;
            }
            if tags.iter().any(|token| matches(token, &keyword)) {
                sum += 0.5;
            }
        }
        if sum > 0.0 {
            hits.push((position as u32, sum / keywords.len() as f64));
        }
    }
    hits
}

/// BM25 fact by fact: the query's terms in order, each occurrence counted.
fn reference_bm25(
    facts: &[&Fact],
    query: &str,
    params: Bm25Params,
    analyzer: Analyzer,
) -> Vec<(u32, f64)> {
    let documents: Vec<Vec<String>> = facts
        .iter()
        .map(|fact| {
            let mut text = fact.content.clone();
            for tag in &fact.tags {
                text.push(' ');
                text.push_str(tag);
            }
            analyzer.terms(&text)
        })
        .collect();
    let count = documents.len() as f64;
    let average = documents.iter().map(Vec::len).sum::<usize>() as f64 / count;
    let mut terms: Vec<(String, u32)> = Vec::new();
    for term in analyzer.terms(query) {
        match terms.iter_mut().find(|(known, _)| *known == term) {
            Some((_, occurrences)) => *occurrences += 1,
            None => terms.push((term, 1)),
        }
    }
    let mut hits = Vec::new();
    for (position, document) in documents.iter().enumerate() {
        let mut score = 0.0;
        let mut matched = false;
        for (term, occurrences) in &terms {
            let frequency = document.iter().filter(|token| *token == term).count() as f64;
            if frequency == 0.0 {
                continue;
            }
            matched = true;
            let document_frequency = documents
                .iter()
                .filter(|other| other.contains(term))
                .count() as f64;
            let idf = (1.0 + (count - document_frequency + 0.5) / (document_frequency + 0.5)).ln();
            let length_ratio = document.len() as f64 / average;
            let weight = frequency * (params.k1 + 1.0)
                / (frequency + params.k1 * (1.0 - params.b + params.b * length_ratio));
            score += f64::from(*occurrences) * idf * weight;
        }
        if matched {
            hits.push((position as u32, score));
        }
    }
    hits
}

#[test]
fn postings_give_the_reference_scores_bit_for_bit() {
    let dataset = devmem();
    let mut facts: Vec<&Fact> = dataset.facts.iter().collect();
    facts.sort_by(|a, b| a.id.cmp(&b.id));
    let index = LexicalIndex::build(
        &facts,
        &LexicalNeeds {
            keywords: true,
            bm25_analyzers: vec![Analyzer::Chatcli, Analyzer::English],
        },
    );
    let mut compared = 0;
    for query in &dataset.queries {
        let mut keyword_sets = vec![extract_keywords(&[query.text.as_str()])];
        if let Some(recorded) = dataset.hypotheses.get(&query.id) {
            keyword_sets.push(extract_keywords(&recorded.texts[..1]));
        }
        for keywords in &keyword_sets {
            assert_eq!(
                index.keyword_relevance(keywords),
                reference_relevance(&facts, keywords),
                "{}",
                query.text
            );
            compared += 1;
        }
        for analyzer in [Analyzer::Chatcli, Analyzer::English] {
            for (k1, b) in [(0.9, 0.4), (1.2, 0.75), (2.0, 0.0)] {
                let params = Bm25Params { k1, b };
                assert_eq!(
                    index.bm25(&query.text, params, analyzer),
                    reference_bm25(&facts, &query.text, params, analyzer),
                    "{} ({analyzer}, k1 {k1}, b {b})",
                    query.text
                );
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 90 * 2 + 90 * 6);
}

#[test]
fn batched_dense_search_ranks_as_the_full_sort() {
    let mut dataset = devmem();
    let settings = resolve(
        &RunOptions {
            configurations: vec!["dense".into()],
            quiet: true,
            ..RunOptions::default()
        },
        &ConfigFile::default(),
        &dataset.manifest,
    )
    .unwrap();
    let execution = execute(&mut dataset, &settings.run, RankingOutputs::kept()).unwrap();
    let rankings = &execution.rankings[0];

    let mut facts: Vec<&Fact> = dataset.facts.iter().collect();
    facts.sort_by(|a, b| a.id.cmp(&b.id));
    let provider = HashProvider::new(384).unwrap();
    let texts: Vec<&str> = facts.iter().map(|fact| fact.content.as_str()).collect();
    let index = FlatIndex::build(384, &provider.embed(&texts, TextKind::Document).unwrap());
    let depth = settings.run.configurations[0].params.depth;
    for (query, ranking) in dataset.queries.iter().zip(rankings) {
        let vector = provider
            .embed(&[query.text.as_str()], TextKind::Query)
            .unwrap()
            .remove(0);
        let mut all: Vec<(u32, f64)> = index
            .cosine_all(&vector)
            .into_iter()
            .enumerate()
            .map(|(fact, cosine)| (fact as u32, cosine))
            .collect();
        sort_by_score_then_id(&mut all);
        all.truncate(depth);
        let expected: Vec<(FactId, f64)> = all
            .into_iter()
            .map(|(fact, cosine)| (facts[fact as usize].id.clone(), cosine))
            .collect();
        let got: Vec<(FactId, f64)> = ranking
            .results
            .iter()
            .map(|(fact, score)| (fact.clone(), *score))
            .collect();
        assert_eq!(got, expected, "{}", query.text);
    }
}

/// Words of the random corpora: some are prefixes of others, so keywords match by prefix.
const WORDS: [&str; 7] = [
    "alpha", "alphabet", "beta", "gamma", "gammas", "delta", "eps",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Temporal scores and cosines come from a few values, so scores tie and the id
    /// decides; rankings are a few results deep, so the cut skips groups.
    #[test]
    fn keyword_group_cut_ranks_as_scoring_every_candidate(
        corpus in proptest::collection::vec(
            (
                proptest::collection::vec(0..WORDS.len(), 1..5),
                proptest::collection::vec(0..WORDS.len(), 0..2),
                0u8..4,
            ),
            1..80,
        ),
        keywords in proptest::collection::vec(
            proptest::sample::select(vec!["alpha", "alph", "beta", "gam", "gamma", "eps", "zeta", " "]),
            1..5,
        ),
        hits in proptest::collection::vec((0usize..80, 1u8..9), 0..6),
        depth in 1usize..10,
        weights in (0u8..3, 0u8..3, 0u8..3),
    ) {
        let facts: Vec<Fact> = corpus
            .iter()
            .enumerate()
            .map(|(position, (content, tags, _))| Fact {
                tags: tags.iter().map(|&word| WORDS[word].to_string()).collect(),
                ..plain_fact(
                    format!("f{position:03}"),
                    content.iter().map(|&word| WORDS[word]).collect::<Vec<_>>().join(" "),
                )
            })
            .collect();
        let temporal: Vec<f64> = corpus
            .iter()
            .map(|&(_, _, step)| 0.25 + f64::from(step) * 0.3)
            .collect();
        let references: Vec<&Fact> = facts.iter().collect();
        let lexical = LexicalIndex::build(
            &references,
            &LexicalNeeds { keywords: true, bm25_analyzers: Vec::new() },
        );
        let keywords: Vec<String> = keywords.iter().map(|word| word.to_string()).collect();
        // A search's hits: distinct facts, score descending, fact ascending.
        let mut search: Vec<(u32, f64)> = Vec::new();
        for &(fact, eighths) in &hits {
            let fact = (fact % facts.len()) as u32;
            if search.iter().all(|&(known, _)| known != fact) {
                search.push((fact, f64::from(eighths) / 8.0));
            }
        }
        sort_by_score_then_id(&mut search);
        let searched = [search.as_slice()];
        let (semantic, lexical_weight, temporal_weight) = weights;
        let params = Params {
            depth,
            weights: Weights {
                semantic: f64::from(semantic),
                lexical: f64::from(lexical_weight),
                temporal: f64::from(temporal_weight) + 0.5,
            },
            ..Params::default()
        };
        let memo = LexicalMemo::default();
        let sources = |lexical_memo| SignalSources {
            keywords: Some(&keywords),
            searches: Searches { hits: &searched, all_zero: false },
            query_text: "",
            params: &params,
            lexical: &lexical,
            temporal: &temporal,
            text_hits: None,
            lexical_memo,
        };
        for fusion in [Fusion::KeywordTimesTemporal, Fusion::Blend] {
            let method = method(fusion);
            let every_candidate = method.fuse(&method.candidate_table(sources(None)), &params);
            let cut = method.fused_ranking(sources(Some(&memo)));
            let bits = |ranking: &[(u32, f64)]| -> Vec<(u32, u64)> {
                ranking.iter().map(|&(fact, score)| (fact, score.to_bits())).collect()
            };
            proptest::prop_assert_eq!(bits(&cut), bits(&every_candidate), "{:?}", fusion);
        }
    }
}
