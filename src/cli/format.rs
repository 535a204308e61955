//! `--format`: what a command that prints data writes on stdout, shared by every such
//! command (`eval` alone keeps its own, whose default is trec_eval's layout; `compare`
//! adds LaTeX).

/// What a command prints on stdout (`--format`): every command that prints data takes
/// these four.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Terminal tables.
    #[default]
    Table,
    /// JSON with `schema_version`, for tools.
    Json,
    /// CSV with a header row.
    Csv,
    /// Markdown, for a pull-request comment.
    Markdown,
}

/// What `compare` prints on stdout (`--format`): the four formats, and LaTeX.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// Terminal tables.
    #[default]
    Table,
    /// JSON with `schema_version`, for tools.
    Json,
    /// CSV with a header row.
    Csv,
    /// Markdown, for a pull-request comment.
    Markdown,
    /// A booktabs table for a paper.
    Latex,
}

impl CompareFormat {
    /// The renderer's format.
    pub fn format(self) -> crate::report::Format {
        match self {
            CompareFormat::Table => crate::report::Format::Table,
            CompareFormat::Json => crate::report::Format::Json,
            CompareFormat::Csv => crate::report::Format::Csv,
            CompareFormat::Markdown => crate::report::Format::Markdown,
            CompareFormat::Latex => crate::report::Format::Latex,
        }
    }
}

impl OutputFormat {
    /// The renderer's format.
    pub fn format(self) -> crate::report::Format {
        match self {
            OutputFormat::Table => crate::report::Format::Table,
            OutputFormat::Json => crate::report::Format::Json,
            OutputFormat::Csv => crate::report::Format::Csv,
            OutputFormat::Markdown => crate::report::Format::Markdown,
        }
    }
}
