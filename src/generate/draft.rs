//! Drafting a labeled set from facts alone (`hyde-eval dataset draft-queries`): a
//! seeded sample of facts, an LLM asked through the [`HypothesisGenerator`] seam (so
//! answers are cached, recorded and replayable with `--offline`) for queries each fact
//! answers in the styles the bundled sets tag, then the two filters that keep the set
//! honest: near-duplicates are dropped, and queries that copy the fact's wording (a
//! lexical-overlap share above a threshold) are dropped so that lexical retrieval is not
//! favoured by construction. Writing the files is the command's; this module only
//! decides what they hold.

use std::collections::BTreeSet;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::{HypothesisGenerator, PromptTemplate};
use crate::dataset::{Fact, Query, QueryId};
use crate::error::{Error, Problem};

/// Default largest share of a drafted query's content words that may also be words of
/// its fact; above it the query copies the fact and is dropped (`exact` queries are
/// exempt: naming the fact's identifier is their point).
pub const DEFAULT_MAX_OVERLAP: f64 = 0.5;

/// Two drafted queries whose content-word sets have a Jaccard similarity at or above
/// this are near-duplicates; the later one is dropped.
pub const NEAR_DUPLICATE_JACCARD: f64 = 0.8;

/// hyde-eval's drafting prompt: `{style}` is the style's instruction, `{fact}` the fact.
pub const DRAFT_PROMPT: &str =
    "You are building a test set for a search engine over a developer's notes. \
Here is one note:\n\n{fact}\n\n\
Write one question that a developer would type to find this note. {style} \
Do not copy phrases from the note. Answer with the question only, on one line.\n\nQuestion:";

/// A query style, named as the bundled datasets tag their queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Style {
    /// Paraphrase: other words for what the fact says.
    Synonym,
    /// Names an identifier of the fact (a command, file, flag, version) exactly.
    Exact,
    /// Asks about the current or latest state, as time-sensitive questions do.
    Temporal,
    /// Combines two or more concepts of the fact.
    MultiConcept,
}

impl Style {
    pub const ALL: [Style; 4] = [
        Style::Synonym,
        Style::Exact,
        Style::Temporal,
        Style::MultiConcept,
    ];

    /// The tag the query gets (and the name on the command line).
    pub fn tag(self) -> &'static str {
        match self {
            Style::Synonym => "synonym",
            Style::Exact => "exact",
            Style::Temporal => "temporal",
            Style::MultiConcept => "multi-concept",
        }
    }

    /// A style by name; `paraphrase` is `synonym`.
    pub fn parse(name: &str) -> Option<Style> {
        match name.trim() {
            "synonym" | "paraphrase" => Some(Style::Synonym),
            "exact" => Some(Style::Exact),
            "temporal" => Some(Style::Temporal),
            "multi-concept" => Some(Style::MultiConcept),
            _ => None,
        }
    }

    /// What the prompt asks of a query in this style.
    pub fn instruction(self) -> &'static str {
        match self {
            Style::Synonym => "Use different words from the note: synonyms and paraphrases, none of its distinctive terms.",
            Style::Exact => "Name exactly one identifier from the note (a command, file name, flag, error code or version) and ask about it.",
            Style::Temporal => "Ask about the current or most recent state of what the note describes (what do we use now, what changed last).",
            Style::MultiConcept => "Combine two different concepts from the note in one question, in your own words.",
        }
    }
}

/// What drafting asks for.
#[derive(Debug, Clone)]
pub struct DraftOptions {
    /// Facts to sample (all when there are fewer).
    pub facts: usize,
    pub seed: u64,
    pub styles: Vec<Style>,
    /// Queries asked per fact and style.
    pub per_fact: usize,
    /// The prompt: [`DRAFT_PROMPT`] or a user file with `{fact}` (and `{style}`).
    pub prompt: PromptTemplate,
    pub max_overlap: f64,
}

/// One kept query with its source fact.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DraftedQuery {
    pub id: String,
    pub text: String,
    pub style: Style,
    pub fact: String,
    /// Share of its content words that are words of the fact.
    pub overlap: f64,
}

/// Per style: asked, answered, dropped by each filter, kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StyleCounts {
    pub asked: usize,
    pub empty_or_failed: usize,
    pub copied_wording: usize,
    pub near_duplicates: usize,
    pub kept: usize,
}

/// A drafting's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Draft {
    pub queries: Vec<DraftedQuery>,
    pub sampled_facts: Vec<String>,
    /// In [`Style::ALL`] order, for the styles asked.
    pub counts: Vec<(Style, StyleCounts)>,
}

impl PromptTemplate {
    /// The drafting prompt: hyde-eval's own, or a user file holding `{fact}`.
    pub fn draft(file: Option<&std::path::Path>) -> Result<PromptTemplate, Error> {
        let Some(path) = file else {
            return Ok(PromptTemplate {
                name: "draft-queries".into(),
                text: DRAFT_PROMPT.into(),
            });
        };
        let text = crate::input::read_small_text(path)?;
        if !text.contains("{fact}") {
            return Err(Error::problem(
                Problem::new(path, None, "the drafting prompt has no {fact} placeholder")
                    .with_hint(
                        "write {fact} where the fact goes, and {style} for the style's instruction",
                    ),
            ));
        }
        let name = path
            .file_stem()
            .map(|stem| format!("file:{}", stem.to_string_lossy()))
            .unwrap_or_else(|| "file".into());
        Ok(PromptTemplate { name, text })
    }

    /// The generator prompt for `style`: the style's instruction filled in and the fact
    /// where the generator puts its `{query}`.
    pub fn for_style(&self, style: Style) -> PromptTemplate {
        PromptTemplate {
            name: format!("{}/{}", self.name, style.tag()),
            text: self
                .text
                .replace("{style}", style.instruction())
                .replace("{fact}", "{query}"),
        }
    }
}

/// `count` facts chosen with `seed`, in id order (all facts when there are fewer).
pub fn sample_facts(facts: &[Fact], count: usize, seed: u64) -> Vec<&Fact> {
    let mut sorted: Vec<&Fact> = facts.iter().collect();
    sorted.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    sorted.shuffle(&mut rng);
    sorted.truncate(count);
    sorted.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
    sorted
}

/// The content words of `text`: lower-cased word tokens that are not stop words.
fn content_words(text: &str) -> BTreeSet<String> {
    crate::text::word_tokens(text)
        .into_iter()
        .filter(|word| !crate::text::is_stop_word(word))
        .collect()
}

/// Share of `query`'s content words that are also content words of `fact` (0 for a
/// query without content words).
pub fn lexical_overlap(query: &str, fact: &str) -> f64 {
    let query = content_words(query);
    if query.is_empty() {
        return 0.0;
    }
    let fact = content_words(fact);
    query.intersection(&fact).count() as f64 / query.len() as f64
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        1.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

/// The question in an LLM's answer: its first non-empty line, without list markers,
/// a `Question:` label or wrapping quotes; `None` when nothing usable is left.
pub fn clean_answer(answer: &str) -> Option<String> {
    let line = answer
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())?;
    let line = line
        .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | ')' | '-' | '*'))
        .trim();
    let line = line
        .strip_prefix("Question:")
        .or_else(|| line.strip_prefix("question:"))
        .unwrap_or(line)
        .trim()
        .trim_matches(|c| matches!(c, '"' | '\'' | '`' | '“' | '”'))
        .trim();
    (line.chars().filter(|c| c.is_alphanumeric()).count() >= 3).then(|| line.to_owned())
}

/// Drafts queries: for each sampled fact and style, `per_fact` answers of `generator`
/// (one per sampled fact and style; `generators[i]` serves `options.styles[i]`), cleaned,
/// filtered and numbered `draft-0001`, ... in fact, style, sample order.
pub fn draft(
    facts: &[Fact],
    generators: &[Box<dyn HypothesisGenerator + '_>],
    options: &DraftOptions,
) -> Result<Draft, Error> {
    let sampled = sample_facts(facts, options.facts, options.seed);
    let fact_queries: Vec<Query> = sampled
        .iter()
        .map(|fact| Query {
            id: QueryId(fact.id.as_str().to_owned()),
            text: fact.content.clone(),
            tags: Vec::new(),
            scenario: None,
            expectations: Vec::new(),
        })
        .collect();
    let mut answers = Vec::with_capacity(options.styles.len());
    for generator in generators {
        answers.push(generator.generate_all(&fact_queries, options.per_fact)?);
    }
    let mut counts: Vec<(Style, StyleCounts)> = options
        .styles
        .iter()
        .map(|&style| (style, StyleCounts::default()))
        .collect();
    let mut kept: Vec<DraftedQuery> = Vec::new();
    let mut kept_words: Vec<BTreeSet<String>> = Vec::new();
    for (fact_index, fact) in sampled.iter().enumerate() {
        for (style_index, &style) in options.styles.iter().enumerate() {
            let style_counts = &mut counts[style_index].1;
            style_counts.asked += options.per_fact;
            let texts = answers[style_index][fact_index]
                .hypotheses
                .clone()
                .unwrap_or_default();
            style_counts.empty_or_failed += options.per_fact.saturating_sub(texts.len());
            for text in texts {
                let Some(text) = clean_answer(&text) else {
                    style_counts.empty_or_failed += 1;
                    continue;
                };
                let overlap = lexical_overlap(&text, &fact.content);
                if style != Style::Exact && overlap > options.max_overlap {
                    style_counts.copied_wording += 1;
                    continue;
                }
                let words = content_words(&text);
                if kept_words
                    .iter()
                    .any(|other| jaccard(&words, other) >= NEAR_DUPLICATE_JACCARD)
                {
                    style_counts.near_duplicates += 1;
                    continue;
                }
                style_counts.kept += 1;
                kept_words.push(words);
                kept.push(DraftedQuery {
                    id: format!("draft-{:04}", kept.len() + 1),
                    text,
                    style,
                    fact: fact.id.as_str().to_owned(),
                    overlap,
                });
            }
        }
    }
    Ok(Draft {
        queries: kept,
        sampled_facts: sampled
            .iter()
            .map(|fact| fact.id.as_str().to_owned())
            .collect(),
        counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_counts_content_words_of_the_query_found_in_the_fact() {
        // Content words of the query ("which", "do", "we", "in" are stop words):
        // {go, version, pin, ci}. The fact's: {ci, pins, go, 1, 23, toolchain, file};
        // "pins" is not "pin", so go and ci are shared: 2 of 4.
        let fact = "CI pins Go 1.23 through the toolchain file";
        assert_eq!(
            lexical_overlap("Which Go version do we pin in CI?", fact),
            0.5
        );
        assert_eq!(lexical_overlap("the and of", fact), 0.0);
        assert_eq!(lexical_overlap("CI pins Go", fact), 1.0);
    }

    #[test]
    fn answers_are_cleaned_to_one_question() {
        assert_eq!(
            clean_answer("\n1. Question: \"How do we roll back a deploy?\"\nMore text").as_deref(),
            Some("How do we roll back a deploy?")
        );
        assert_eq!(clean_answer("  \n \"\" "), None);
    }

    #[test]
    fn a_user_prompt_needs_a_fact_and_styles_fill_in() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("mine.txt");
        std::fs::write(&path, "Ask about {query}").unwrap();
        let error = PromptTemplate::draft(Some(&path)).unwrap_err().to_string();
        assert!(
            error.contains("mine.txt") && error.contains("{fact}"),
            "{error}"
        );
        std::fs::write(&path, "{style} Note: {fact}").unwrap();
        let template = PromptTemplate::draft(Some(&path))
            .unwrap()
            .for_style(Style::Temporal);
        assert_eq!(template.name, "file:mine/temporal");
        assert_eq!(
            template.render("the note", 1, 0),
            format!("{} Note: the note", Style::Temporal.instruction())
        );
    }

    #[test]
    fn styles_parse_by_their_tags_and_paraphrase() {
        for style in Style::ALL {
            assert_eq!(Style::parse(style.tag()), Some(style));
        }
        assert_eq!(Style::parse("paraphrase"), Some(Style::Synonym));
        assert_eq!(Style::parse("fuzzy"), None);
    }
}
