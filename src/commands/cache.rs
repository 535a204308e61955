//! `hyde-eval cache stats` and `hyde-eval cache clear`.

use crate::cache;
use crate::cli::{CacheClearArgs, CacheStatsArgs};
use crate::error::{exit_code, Error};
use crate::report::{render, Document};

use super::*;

/// `hyde-eval cache stats`.
pub fn cache_stats(args: &CacheStatsArgs) -> Result<u8, Error> {
    let root = cache::cache_root(args.cache.cache_dir.as_deref())?;
    let namespaces = cache::stats(&root)?;
    let document = Document::CacheStats {
        root: &root,
        namespaces: &namespaces,
    };
    print_line(render(args.format.format(), &document)?.trim_end_matches('\n'))?;
    Ok(exit_code::OK)
}

/// `hyde-eval cache clear`.
pub fn cache_clear(args: &CacheClearArgs) -> Result<u8, Error> {
    let root = cache::cache_root(args.cache.cache_dir.as_deref())?;
    let cache::Cleared { removed, not_owned } = cache::clear(&root, args.provider.as_deref())?;
    for directory in &not_owned {
        note(
            args.cache.quiet,
            &format!(
                "note: left {} alone: it has no {} and is not a cache namespace",
                directory.display(),
                cache::NAMESPACE_FILE
            ),
        );
    }
    if removed.is_empty() {
        if let Some(provider) = &args.provider {
            return Err(Error::Usage(format!(
                "nothing in {} matches {provider:?}; `hyde-eval cache stats` lists the kinds and directories",
                root.display()
            )));
        }
    }
    let entries: usize = removed.iter().map(|namespace| namespace.entries).sum();
    print_line(&format!(
        "removed {entries} entries in {} namespaces from {}",
        removed.len(),
        root.display()
    ))?;
    Ok(exit_code::OK)
}
