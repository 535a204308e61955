//! Prompt templates for hypothesis generation, selectable by name, and user templates
//! read from a file. A template holds `{query}` (the trimmed query) and may hold `{n}`
//! (hypotheses requested) and `{perspective}` (the multi-perspective prompt's angle for
//! each hypothesis: technical, practical, overview, in turn).
//!
//! Each built-in follows its seed: `chatcli-3a` is chatcli's HyDE 3a prompt with its
//! `"\n\nQuestion: ...\n\nHypothetical answer:"` suffix (chatcli's HyDE phase 3a, `hyde.go`);
//! `multi-perspective` asks each hypothesis for one angle; `entity-document` keeps the
//! query's named entities verbatim in a document-style note; `hyde-passage` is the HyDE
//! paper's "write a passage to answer the question" (Gao et al. 2022).

use std::path::Path;

use crate::error::{Error, Problem};

/// The names of the built-in templates.
pub const BUILTIN_PROMPTS: [&str; 4] = [
    "chatcli-3a",
    "multi-perspective",
    "entity-document",
    "hyde-passage",
];

const CHATCLI_3A: &str = "You are helping a retrieval system find notes in a developer's long-term memory. \
Write a plausible answer of 2 to 4 sentences to the question, the way a note that answers it would be written. \
Use the technical nouns, file names and library names such a note would contain. \
Answer in the same language mix as the question. Do not hedge and do not say that you are unsure.\
\n\nQuestion: {query}\n\nHypothetical answer:";

const MULTI_PERSPECTIVE: &str = "Write a short passage of 2 to 4 sentences that answers the question from the {perspective} point of view. \
A technical passage names the mechanism, APIs, configuration keys and files involved; a practical passage gives the commands and steps someone would run; \
an overview passage says what it is, why it matters and how it fits with related tools. Write it as a plain statement, without hedging.\
\n\nQuestion: {query}\n\nPassage:";

const ENTITY_DOCUMENT: &str = "Write a short factual document of 3 to 5 sentences that would answer the question. \
Keep every named entity of the question exactly as written (products, libraries, files, functions, people, version numbers, identifiers) \
and add the related entities such a document would mention. Write it as a note or a documentation paragraph, not as a reply to the question.\
\n\nQuestion: {query}\n\nDocument:";

const HYDE_PASSAGE: &str =
    "Please write a passage to answer the question.\nQuestion: {query}\nPassage:";

/// The angles of the multi-perspective prompt, one per hypothesis in turn.
const PERSPECTIVES: [&str; 3] = ["technical", "practical", "overview"];

/// A prompt template with the name it is recorded under.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptTemplate {
    pub name: String,
    pub text: String,
}

impl PromptTemplate {
    /// A built-in template.
    pub fn builtin(name: &str) -> Option<PromptTemplate> {
        let text = match name {
            "chatcli-3a" => CHATCLI_3A,
            "multi-perspective" => MULTI_PERSPECTIVE,
            "entity-document" => ENTITY_DOCUMENT,
            "hyde-passage" => HYDE_PASSAGE,
            _ => return None,
        };
        Some(PromptTemplate {
            name: name.to_owned(),
            text: text.to_owned(),
        })
    }

    /// A user template from `path`; it must contain `{query}`.
    pub fn from_file(path: &Path) -> Result<PromptTemplate, Error> {
        let text = crate::input::read_small_text(path)?;
        if !text.contains("{query}") {
            return Err(Error::problem(
                Problem::new(path, None, "the prompt template has no {query} placeholder")
                    .with_hint(
                    "write {query} where the question goes (and {n} for the number of hypotheses)",
                ),
            ));
        }
        let name = path
            .file_stem()
            .map(|stem| format!("file:{}", stem.to_string_lossy()))
            .unwrap_or_else(|| "file".into());
        Ok(PromptTemplate { name, text })
    }

    /// The prompt for hypothesis `sample` (0-based) of `n` for `query`.
    pub fn render(&self, query: &str, n: usize, sample: usize) -> String {
        self.text
            .replace("{perspective}", PERSPECTIVES[sample % PERSPECTIVES.len()])
            .replace("{n}", &n.to_string())
            .replace("{query}", query.trim())
    }

    /// Whether hypotheses get different prompts (so the API's `n` cannot serve them).
    pub fn varies_per_sample(&self) -> bool {
        self.text.contains("{perspective}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chatcli_prompt_ends_as_the_seed_does() {
        let prompt = PromptTemplate::builtin("chatcli-3a").unwrap();
        let rendered = prompt.render("  how do we deploy?  ", 1, 0);
        assert!(rendered.ends_with("\n\nQuestion: how do we deploy?\n\nHypothetical answer:"));
        assert!(rendered.contains("2 to 4 sentences"));
    }

    #[test]
    fn perspectives_rotate_and_every_builtin_has_a_query() {
        let prompt = PromptTemplate::builtin("multi-perspective").unwrap();
        assert!(prompt.varies_per_sample());
        assert!(prompt
            .render("q", 3, 0)
            .contains("from the technical point of view"));
        assert!(prompt
            .render("q", 3, 1)
            .contains("from the practical point of view"));
        assert!(prompt
            .render("q", 3, 2)
            .contains("from the overview point of view"));
        assert!(prompt
            .render("q", 4, 3)
            .contains("from the technical point of view"));
        for name in BUILTIN_PROMPTS {
            let template = PromptTemplate::builtin(name).unwrap();
            assert!(
                template.render("QUERY-MARK", 2, 0).contains("QUERY-MARK"),
                "{name}"
            );
        }
        assert_eq!(
            PromptTemplate::builtin("hyde-passage")
                .unwrap()
                .render("why?", 1, 0),
            "Please write a passage to answer the question.\nQuestion: why?\nPassage:"
        );
    }

    #[test]
    fn a_user_template_needs_a_query_placeholder() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("mine.txt");
        std::fs::write(&path, "Answer in {n} ways").unwrap();
        let error = PromptTemplate::from_file(&path).unwrap_err().to_string();
        assert!(
            error.contains("mine.txt") && error.contains("{query}"),
            "{error}"
        );
        std::fs::write(&path, "Give {n} answers to: {query}").unwrap();
        let template = PromptTemplate::from_file(&path).unwrap();
        assert_eq!(template.name, "file:mine");
        assert_eq!(template.render("x ", 2, 0), "Give 2 answers to: x");
    }
}
