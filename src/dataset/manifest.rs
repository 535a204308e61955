//! `dataset.toml`: a dataset's name, description, the fixed "now" used for temporal
//! scores, default cut-offs, optional defaults for the embedder, and whether its
//! judgments are complete (every fact not judged for a query is known not relevant to
//! it, so a low `judged@k` is no reason to warn).

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::error::{Error, Problem};

/// The manifest file name inside a dataset directory.
pub const MANIFEST_FILE: &str = "dataset.toml";

/// The largest cut-off (and number of ranked results per query) hyde-eval accepts.
pub const MAX_CUTOFF: usize = 1_000_000;

/// Cut-offs used when neither the manifest nor the command line names any.
pub const DEFAULT_CUTOFFS: [usize; 4] = [1, 3, 5, 10];

/// A dataset's manifest, after defaults are applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub name: String,
    pub description: String,
    /// The fixed "now" against which fact ages are measured.
    pub now: DateTime<Utc>,
    /// Whether `now` came from the manifest (else it was derived from the facts).
    pub now_is_explicit: bool,
    pub cutoffs: Vec<usize>,
    /// Embedding provider to use when the command line names none.
    pub embedder: Option<String>,
    /// Concept lexicon for the `concept` provider, relative to the dataset directory.
    pub concept_lexicon: Option<String>,
    /// Every fact not judged for a query is known not relevant to it (`judgments_complete
    /// = true`): the judgments cover the whole collection, so unjudged facts in a
    /// ranking are no reason to read the scores as lower bounds.
    pub judgments_complete: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    name: Option<String>,
    #[serde(default)]
    description: String,
    now: Option<String>,
    k: Option<Vec<usize>>,
    embedder: Option<String>,
    concept_lexicon: Option<String>,
    #[serde(default)]
    judgments_complete: bool,
}

/// Parses `dataset.toml` text; keys it does not set keep their defaults.
pub(super) fn parse(path: &Path, text: &str, directory_name: &str) -> Result<Manifest, Error> {
    let file: ManifestFile = toml::from_str(text).map_err(|error| {
        let line = error
            .span()
            .map(|span| super::lines::line_of_offset(text, span.start));
        let hint = crate::hints::unknown_field_hint(error.message()).unwrap_or_else(|| {
            "allowed keys: name, description, now, k, embedder, concept_lexicon, judgments_complete".into()
        });
        Error::problem(Problem::new(path, line, error.message().to_owned()).with_hint(hint))
    })?;
    let mut manifest = Manifest::defaults(directory_name);
    if let Some(name) = file.name {
        manifest.name = name;
    }
    manifest.description = file.description;
    if let Some(now) = file.now {
        manifest.now = super::parse_timestamp(&now)
            .map_err(|message| Error::problem(Problem::new(path, None, format!("now: {message}"))))?
            .ok_or_else(|| Error::problem(Problem::new(path, None, "now: must be a real date")))?;
        manifest.now_is_explicit = true;
    }
    if let Some(cutoffs) = file.k {
        if let Some(&too_large) = cutoffs.iter().find(|&&k| k > MAX_CUTOFF) {
            return Err(Error::problem(Problem::new(
                path,
                None,
                format!(
                    "k: cut-off {too_large} is more than {}, the most results hyde-eval ranks per query",
                    MAX_CUTOFF
                ),
            )));
        }
        if cutoffs.is_empty() || cutoffs.contains(&0) {
            return Err(Error::problem(
                Problem::new(
                    path,
                    None,
                    "k: cut-offs must be a non-empty list of positive integers",
                )
                .with_hint("e.g. k = [1, 5, 10]"),
            ));
        }
        manifest.cutoffs = normalize_cutoffs(cutoffs);
    }
    manifest.embedder = file.embedder;
    manifest.concept_lexicon = file.concept_lexicon;
    manifest.judgments_complete = file.judgments_complete;
    Ok(manifest)
}

/// Sorts and de-duplicates cut-offs.
pub fn normalize_cutoffs(mut cutoffs: Vec<usize>) -> Vec<usize> {
    cutoffs.sort_unstable();
    cutoffs.dedup();
    cutoffs
}

impl Manifest {
    /// The manifest of a directory that has no `dataset.toml`.
    pub fn defaults(directory_name: &str) -> Manifest {
        Manifest {
            name: directory_name.to_owned(),
            description: String::new(),
            now: DateTime::<Utc>::UNIX_EPOCH,
            now_is_explicit: false,
            cutoffs: DEFAULT_CUTOFFS.to_vec(),
            embedder: None,
            concept_lexicon: None,
            judgments_complete: false,
        }
    }
}
