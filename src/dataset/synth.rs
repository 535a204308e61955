//! `hyde-eval dataset synth`: a seeded synthetic dataset in the native layout, for scale
//! tests and for users who want to stress their setup.
//!
//! - **Vocabulary.** Background words are pronounceable syllable strings drawn by Zipf's
//!   law (P(rank r) ∝ 1 / r^1.07, as word frequencies in text), from `vocabulary` words.
//! - **Topical clusters.** Each fact belongs to one of `topics` topics. A topic owns
//!   [`TOPIC_WORDS`] words of its own, and each of those has a synonym that no fact uses.
//! - **Facts.** [`FACT_WORDS`] words: [`FACT_TOPIC_WORDS`] from the fact's topic, the rest
//!   background, shuffled.
//! - **Queries** paraphrase one target fact: [`QUERY_TOPIC_WORDS`] of the target's topic
//!   words, about half replaced by their synonyms (so lexical matching alone misses them),
//!   plus one background word.
//! - **Planted graded qrels.** The target is grade 2; every other fact of its topic that
//!   contains at least [`RELATED_OVERLAP`] of the query's (unshifted) topic words is grade
//!   1 (about 2 per query at 500 facts per topic), so the judgments are complete for
//!   that definition.
//! - **Hypotheses.** [`HYPOTHESES`] per query, written in the topic's own words (what an
//!   LLM that knows the domain would write): the query's topic words un-shifted, other
//!   words of the topic, and background words.
//!
//! Every fact, query and hypothesis comes from its own ChaCha8 stream (seed, kind, index),
//! so the files are byte-identical for the same arguments, whatever the machine, and a
//! fact is regenerated on demand instead of held in memory.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::Error;
use crate::write_policy::{self, DirectoryBuild, DirectoryKind, Policy};

/// Words of a topic.
pub const TOPIC_WORDS: usize = 48;
/// Words of a fact, and how many of them come from its topic.
pub const FACT_WORDS: usize = 32;
pub const FACT_TOPIC_WORDS: usize = 8;
/// Topic words in a query.
pub const QUERY_TOPIC_WORDS: usize = 5;
/// Query topic words a fact must contain to be judged related (grade 1).
pub const RELATED_OVERLAP: usize = 4;
/// Hypotheses per query, and the words of each.
pub const HYPOTHESES: usize = 3;
const HYPOTHESIS_WORDS: usize = 16;
/// Zipf exponent of the background vocabulary.
const ZIPF_EXPONENT: f64 = 1.07;

const SYLLABLES: [&str; 40] = [
    "ka", "ro", "mi", "tu", "se", "la", "no", "vi", "pa", "de", "ri", "go", "fe", "mu", "sa", "te",
    "li", "bo", "ne", "ha", "ku", "zo", "pe", "di", "ma", "to", "ve", "lu", "si", "ra", "ko", "ni",
    "be", "fa", "ju", "ti", "wo", "ce", "da", "xi",
];

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    pub facts: usize,
    pub queries: usize,
    pub seed: u64,
    pub topics: usize,
    pub vocabulary: usize,
}

impl SynthOptions {
    /// Defaults for `facts`: one topic per ~500 facts (at least 4), a 20,000-word
    /// background vocabulary.
    pub fn new(facts: usize, queries: usize, seed: u64) -> SynthOptions {
        SynthOptions {
            facts,
            queries,
            seed,
            topics: (facts / 500).max(4),
            vocabulary: 20_000,
        }
    }
}

/// The random stream of one generated item.
#[derive(Clone, Copy)]
enum Stream {
    FactTopic = 1,
    Fact = 2,
    Query = 3,
    Hypotheses = 4,
}

fn stream(seed: u64, kind: Stream, index: usize) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(((kind as u64) << 48) | index as u64);
    rng
}

/// A uniform index below `n` (version-stable: only `next_u64`).
fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn shuffle<T>(rng: &mut ChaCha8Rng, items: &mut [T]) {
    for index in (1..items.len()).rev() {
        items.swap(index, below(rng, index + 1));
    }
}

/// Word number `index` of the whole vocabulary: its base-40 digits as syllables, least
/// significant first (at least two), so every index spells a distinct word and
/// neighbouring indices (a topic's words) do not share a prefix.
fn word(index: usize) -> String {
    let mut digits = Vec::new();
    let mut rest = index + SYLLABLES.len();
    while rest > 0 {
        digits.push(SYLLABLES[rest % SYLLABLES.len()]);
        rest /= SYLLABLES.len();
    }
    digits.concat()
}

struct Generator {
    options: SynthOptions,
    /// Cumulative Zipf probabilities of the background ranks.
    zipf: Vec<f64>,
    /// Topic of each fact.
    fact_topics: Vec<u32>,
    /// Facts of each topic, in id order.
    topic_facts: Vec<Vec<u32>>,
}

impl Generator {
    fn new(options: SynthOptions) -> Generator {
        let mut total = 0.0;
        let mut zipf: Vec<f64> = (1..=options.vocabulary)
            .map(|rank| {
                total += 1.0 / (rank as f64).powf(ZIPF_EXPONENT);
                total
            })
            .collect();
        for value in &mut zipf {
            *value /= total;
        }
        let fact_topics: Vec<u32> = (0..options.facts)
            .map(|fact| {
                below(
                    &mut stream(options.seed, Stream::FactTopic, fact),
                    options.topics,
                ) as u32
            })
            .collect();
        let mut topic_facts = vec![Vec::new(); options.topics];
        for (fact, &topic) in fact_topics.iter().enumerate() {
            topic_facts[topic as usize].push(fact as u32);
        }
        Generator {
            options,
            zipf,
            fact_topics,
            topic_facts,
        }
    }

    fn background(&self, rng: &mut ChaCha8Rng) -> usize {
        let draw = unit(rng);
        self.zipf
            .partition_point(|&cumulative| cumulative < draw)
            .min(self.zipf.len() - 1)
    }

    /// Vocabulary index of word `slot` of `topic`, and of its synonym.
    fn topic_word(&self, topic: usize, slot: usize) -> usize {
        self.options.vocabulary + topic * TOPIC_WORDS + slot
    }

    fn synonym(&self, topic: usize, slot: usize) -> usize {
        self.topic_word(topic, slot) + self.options.topics * TOPIC_WORDS
    }

    /// The topic-word slots of a fact (distinct) and its words in text order.
    fn fact(&self, fact: usize) -> (Vec<usize>, Vec<usize>) {
        let topic = self.fact_topics[fact] as usize;
        let mut rng = stream(self.options.seed, Stream::Fact, fact);
        let mut slots: Vec<usize> = (0..TOPIC_WORDS).collect();
        shuffle(&mut rng, &mut slots);
        slots.truncate(FACT_TOPIC_WORDS);
        let mut words: Vec<usize> = slots
            .iter()
            .map(|&slot| self.topic_word(topic, slot))
            .collect();
        words.extend((FACT_TOPIC_WORDS..FACT_WORDS).map(|_| self.background(&mut rng)));
        shuffle(&mut rng, &mut words);
        slots.sort_unstable();
        (slots, words)
    }

    /// A query: its target fact, its topic-word slots, and its words.
    fn query(&self, query: usize) -> (usize, Vec<usize>, Vec<usize>) {
        let mut rng = stream(self.options.seed, Stream::Query, query);
        let target = below(&mut rng, self.options.facts);
        let topic = self.fact_topics[target] as usize;
        let (mut slots, _) = self.fact(target);
        shuffle(&mut rng, &mut slots);
        slots.truncate(QUERY_TOPIC_WORDS);
        let mut words: Vec<usize> = slots
            .iter()
            .map(|&slot| {
                if rng.next_u64() & 1 == 1 {
                    self.synonym(topic, slot)
                } else {
                    self.topic_word(topic, slot)
                }
            })
            .collect();
        words.push(self.background(&mut rng));
        shuffle(&mut rng, &mut words);
        slots.sort_unstable();
        (target, slots, words)
    }

    fn hypotheses(&self, query: usize, target: usize, slots: &[usize]) -> Vec<Vec<usize>> {
        let topic = self.fact_topics[target] as usize;
        let mut rng = stream(self.options.seed, Stream::Hypotheses, query);
        (0..HYPOTHESES)
            .map(|_| {
                let mut words: Vec<usize> = slots
                    .iter()
                    .map(|&slot| self.topic_word(topic, slot))
                    .collect();
                while words.len() < HYPOTHESIS_WORDS / 2 {
                    words.push(self.topic_word(topic, below(&mut rng, TOPIC_WORDS)));
                }
                while words.len() < HYPOTHESIS_WORDS {
                    words.push(self.background(&mut rng));
                }
                shuffle(&mut rng, &mut words);
                words
            })
            .collect()
    }

    /// Grade-1 facts for a query: same topic, enough of the query's topic words.
    fn related(&self, target: usize, slots: &[usize]) -> Vec<usize> {
        let topic = self.fact_topics[target] as usize;
        self.topic_facts[topic]
            .iter()
            .map(|&fact| fact as usize)
            .filter(|&fact| fact != target)
            .filter(|&fact| {
                let (fact_slots, _) = self.fact(fact);
                slots
                    .iter()
                    .filter(|slot| fact_slots.binary_search(slot).is_ok())
                    .count()
                    >= RELATED_OVERLAP
            })
            .collect()
    }
}

fn text(words: &[usize]) -> String {
    words
        .iter()
        .map(|&index| word(index))
        .collect::<Vec<_>>()
        .join(" ")
}

fn fact_id(fact: usize) -> String {
    format!("f{fact:07}")
}

/// The most of each size: facts and topics are numbered with 32 bits, and every item's
/// random stream within 48.
pub const MAX_SIZE: usize = u32::MAX as usize;

/// The most facts that judging may regenerate (about 3 µs each): judging a query reads
/// every fact of its target's topic, queries x facts / topics in all.
pub const MAX_JUDGING_WORK: u128 = 1_000_000_000;

/// Bytes held while generating, per vocabulary word, fact, topic and query (measured:
/// 540 bytes a query, 10 a fact, 8 a word), with a margin.
const BYTES_PER_WORD: u128 = 8;
const BYTES_PER_FACT: u128 = 12;
const BYTES_PER_TOPIC: u128 = 32;
const BYTES_PER_QUERY: u128 = 600;

/// Refuses, before anything is written, sizes past [`MAX_SIZE`], judging that would
/// take more than [`MAX_JUDGING_WORK`], and sizes whose generation needs more memory
/// than `available` (bytes, when known).
fn check_sizes(options: &SynthOptions, available: Option<u64>) -> Result<(), Error> {
    for (flag, value) in [
        ("--facts", options.facts),
        ("--queries", options.queries),
        ("--topics", options.topics),
        ("--vocabulary", options.vocabulary),
    ] {
        if value > MAX_SIZE {
            return Err(Error::Usage(format!(
                "dataset synth: {flag} {value} is more than {MAX_SIZE}"
            )));
        }
    }
    let (facts, queries, topics, words) = (
        options.facts as u128,
        options.queries as u128,
        options.topics as u128,
        options.vocabulary as u128,
    );
    let judging = queries * facts.div_ceil(topics);
    if judging > MAX_JUDGING_WORK {
        return Err(Error::Usage(format!(
            "dataset synth: judging {queries} queries against about {} facts of their topic each would regenerate {judging} facts (at most {MAX_JUDGING_WORK}, about an hour); give more --topics or fewer --queries",
            facts.div_ceil(topics)
        )));
    }
    let needed = words * BYTES_PER_WORD
        + facts * BYTES_PER_FACT
        + topics * BYTES_PER_TOPIC
        + queries * BYTES_PER_QUERY;
    if let Some(available) = available {
        if needed > u128::from(available) {
            let gib = |bytes: u128| bytes as f64 / f64::from(1u32 << 30);
            return Err(Error::Usage(format!(
                "dataset synth: generating {facts} facts, {queries} queries, {topics} topics and {words} words needs about {:.1} GiB of memory, and {:.1} GiB are available; give smaller sizes (a query takes about {BYTES_PER_QUERY} bytes, a fact {BYTES_PER_FACT})",
                gib(needed),
                gib(u128::from(available))
            )));
        }
    }
    Ok(())
}

/// Writes the dataset as the new directory `destination` under the write policy (built
/// beside it and swapped in, where nothing is or an empty directory is; anything else is
/// refused, or replaced with `--force`) and returns the files written, at their final
/// paths.
pub fn write(
    options: &SynthOptions,
    destination: &Path,
    policy: Policy,
) -> Result<Vec<PathBuf>, Error> {
    if options.facts == 0 || options.queries == 0 || options.topics == 0 || options.vocabulary == 0
    {
        return Err(Error::Usage(
            "dataset synth: --facts, --queries, --topics and --vocabulary must be positive".into(),
        ));
    }
    check_sizes(options, crate::memory::available_bytes())?;
    let (parent, name) = write_policy::split_directory(destination)?;
    let build = DirectoryBuild::start(&parent, &name, policy, DirectoryKind::Dataset)?;
    let root = build.root();
    let generator = Generator::new(options.clone());
    let mut written = Vec::new();
    let mut file = |name: &str, body: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>| {
        let path = root.join(name);
        let result = std::fs::File::create(&path).and_then(|handle| {
            let mut writer = std::io::BufWriter::new(handle);
            body(&mut writer)?;
            writer.flush()
        });
        result.map_err(|source| Error::Write {
            path: path.clone(),
            source,
        })?;
        written.push(destination.join(name));
        Ok::<(), Error>(())
    };
    file("dataset.toml", &mut |out| {
        writeln!(out, "name = \"synth-{}\"", options.facts)?;
        writeln!(
            out,
            "description = \"hyde-eval dataset synth --facts {} --queries {} --seed {} --topics {} --vocabulary {}\"",
            options.facts, options.queries, options.seed, options.topics, options.vocabulary
        )?;
        writeln!(out, "now = \"2026-01-01T00:00:00Z\"")?;
        // Every query's relevant facts are generated with it, so every other fact is
        // known not relevant.
        writeln!(out, "judgments_complete = true")
    })?;
    file("facts.jsonl", &mut |out| {
        for fact in 0..options.facts {
            let (_, words) = generator.fact(fact);
            writeln!(
                out,
                "{{\"id\":\"{}\",\"content\":\"{}\"}}",
                fact_id(fact),
                text(&words)
            )?;
        }
        Ok(())
    })?;
    let queries: Vec<(usize, Vec<usize>, Vec<usize>)> = (0..options.queries)
        .map(|query| generator.query(query))
        .collect();
    file("queries.jsonl", &mut |out| {
        for (query, (_, _, words)) in queries.iter().enumerate() {
            writeln!(
                out,
                "{{\"id\":\"q{query:06}\",\"text\":\"{}\"}}",
                text(words)
            )?;
        }
        Ok(())
    })?;
    file("qrels.tsv", &mut |out| {
        writeln!(out, "query_id\tfact_id\tgrade")?;
        for (query, (target, slots, _)) in queries.iter().enumerate() {
            writeln!(out, "q{query:06}\t{}\t2", fact_id(*target))?;
            for related in generator.related(*target, slots) {
                writeln!(out, "q{query:06}\t{}\t1", fact_id(related))?;
            }
        }
        Ok(())
    })?;
    file("hypotheses.jsonl", &mut |out| {
        for (query, (target, slots, _)) in queries.iter().enumerate() {
            let texts: Vec<String> = generator
                .hypotheses(query, *target, slots)
                .iter()
                .map(|words| format!("\"{}\"", text(words)))
                .collect();
            writeln!(
                out,
                "{{\"query_id\":\"q{query:06}\",\"hypotheses\":[{}],\"source\":{{\"generator\":\"synth\",\"note\":\"seed {}\"}}}}",
                texts.join(","),
                options.seed
            )?;
        }
        Ok(())
    })?;
    build.swap_in(policy, &|| Ok(()))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_past_the_memory_available_are_refused_before_writing() {
        // 2,000,000 queries at 600 bytes and 100,000,000 facts at 12: 2.4 GB and
        // 20,000 words, 200,000 topics: 6.56 MB; 2.4066 GB = 2.24 GiB in all.
        let options = SynthOptions::new(100_000_000, 2_000_000, 1);
        let one_gib = 1 << 30;
        let message = check_sizes(&options, Some(one_gib))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("needs about 2.2 GiB of memory, and 1.0 GiB are available"),
            "{message}"
        );
        assert!(check_sizes(&options, Some(3 * one_gib)).is_ok());
        assert!(
            check_sizes(&options, None).is_ok(),
            "unknown memory refuses nothing"
        );
    }

    #[test]
    fn words_are_distinct_syllable_strings() {
        let words: std::collections::HashSet<String> = (0..5_000).map(word).collect();
        assert_eq!(words.len(), 5_000);
        assert_eq!(word(0), "karo"); // 40 = "ro" "ka" in base 40, least significant first
    }

    #[test]
    fn queries_paraphrase_their_target_and_qrels_are_planted() {
        let generator = Generator::new(SynthOptions::new(2_000, 50, 7));
        for query in 0..50 {
            let (target, slots, words) = generator.query(query);
            let topic = generator.fact_topics[target] as usize;
            assert_eq!(slots.len(), QUERY_TOPIC_WORDS);
            let (fact_slots, _) = generator.fact(target);
            for slot in &slots {
                assert!(fact_slots.contains(slot), "query slot not in the target");
                let original = generator.topic_word(topic, *slot);
                let shifted = generator.synonym(topic, *slot);
                assert!(words.contains(&original) ^ words.contains(&shifted));
            }
            for related in generator.related(target, &slots) {
                assert_eq!(generator.fact_topics[related] as usize, topic);
                let (related_slots, _) = generator.fact(related);
                let shared = slots.iter().filter(|s| related_slots.contains(s)).count();
                assert!(shared >= RELATED_OVERLAP);
            }
        }
    }
}
