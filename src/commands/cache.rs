//! `hyde-eval cache stats` and `hyde-eval cache clear`.

use crate::cache;
use crate::cli::{CacheArgs, CacheClearArgs};
use crate::error::{exit_code, Error};

use super::*;

/// `hyde-eval cache stats`.
pub fn cache_stats(args: &CacheArgs) -> Result<u8, Error> {
    let root = cache::cache_root(args.cache_dir.as_deref())?;
    let namespaces = cache::stats(&root)?;
    if namespaces.is_empty() {
        print_line(&format!("the cache in {} is empty", root.display()))?;
        return Ok(exit_code::OK);
    }
    let mut table = crate::report::fit::new_table();
    table.set_header(vec![
        "family",
        "kind",
        "model",
        "endpoint",
        "dims",
        "entries",
        "segments",
        "size",
        "damaged",
        "unfinished",
        "directory",
    ]);
    for namespace in &namespaces {
        let description = namespace
            .description
            .clone()
            .unwrap_or(cache::NamespaceDescription {
                family: "?".into(),
                kind: "?".into(),
                endpoint: "?".into(),
                model: "?".into(),
                dimension: None,
            });
        table.add_row(vec![
            description.family,
            description.kind,
            description.model,
            description.endpoint,
            description
                .dimension
                .map_or("native".into(), |dimension| dimension.to_string()),
            namespace.entries.to_string(),
            namespace.segments.to_string(),
            format!("{:.1} MB", namespace.bytes as f64 / 1e6),
            namespace.corrupt.to_string(),
            namespace.unfinished_writes.to_string(),
            namespace
                .directory
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ]);
    }
    print_line(&format!(
        "cache: {}\n{}",
        root.display(),
        crate::report::fit::fit(&table)
    ))?;
    Ok(exit_code::OK)
}

/// `hyde-eval cache clear`.
pub fn cache_clear(args: &CacheClearArgs) -> Result<u8, Error> {
    let root = cache::cache_root(args.cache.cache_dir.as_deref())?;
    let cache::Cleared { removed, not_owned } = cache::clear(&root, args.provider.as_deref())?;
    for directory in &not_owned {
        eprintln!(
            "note: left {} alone: it has no {} and is not a cache namespace",
            directory.display(),
            cache::NAMESPACE_FILE
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
