//! The on-disk cache of paid or slow backend answers (embeddings, hypotheses), so a
//! second run, and CI, makes no request and gets the same numbers.
//!
//! Layout: `<root>/<family>/<namespace>/<2 hex>/<64 hex>.entry`, where the root is
//! `--cache-dir`, else `$HYDE_EVAL_CACHE/cache`, else `~/.cache/hyde-eval/cache`; the
//! family is `embeddings` or `hypotheses`; a namespace is one backend space (kind,
//! endpoint, model, dimension) described by its `namespace.json`. The entry's name is
//! the sha256 of everything that determines the answer (the key parts each caller
//! lists), so two embedding spaces can never share an entry.
//!
//! An entry is `HEC1`, the payload length (u64 LE), the payload and the payload's
//! xxh3-64 (u64 LE). It is written under a unique temporary name and renamed into
//! place, so a reader sees a whole entry or none; a truncated or altered entry fails its
//! length or checksum, is reported, ignored and replaced on the next fetch. Errors and
//! empty answers are never stored (callers store only validated answers). Keys and
//! payloads never hold an API key.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::interrupt::write_through_temporary;

const MAGIC: &[u8; 4] = b"HEC1";
pub const NAMESPACE_FILE: &str = "namespace.json";
const ENTRY_EXTENSION: &str = "entry";

/// hyde-eval's cache directory: `$HYDE_EVAL_CACHE`, else the user cache directory
/// (`~/.cache` on Linux) + `hyde-eval`.
pub fn cache_dir() -> Result<PathBuf, Error> {
    if let Some(path) = std::env::var_os("HYDE_EVAL_CACHE").filter(|value| !value.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    dirs::cache_dir()
        .map(|path| path.join("hyde-eval"))
        .ok_or_else(|| {
            Error::Usage(
                "cannot find a user cache directory; set HYDE_EVAL_CACHE to a directory".into(),
            )
        })
}

/// The cache root: `explicit`, else `$HYDE_EVAL_CACHE/cache`, else the user cache
/// directory's `hyde-eval/cache`.
pub fn cache_root(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    match explicit {
        Some(path) => Ok(path.to_path_buf()),
        None => Ok(cache_dir()?.join("cache")),
    }
}

/// What a namespace holds, written once as its `namespace.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamespaceDescription {
    /// `embeddings` or `hypotheses`.
    pub family: String,
    /// Provider or generator kind (`openai`, `voyage`, `cohere`, `local`, `openai-chat`).
    pub kind: String,
    /// Base URL, or the model file for in-process models.
    pub endpoint: String,
    pub model: String,
    /// Requested embedding dimension (`null`: the model's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension: Option<usize>,
}

impl NamespaceDescription {
    /// The directory name: kind, model and a digest of the whole description.
    fn directory_name(&self) -> String {
        let digest = Sha256::digest(serde_json::to_vec(self).expect("serializes"));
        let model: String = self
            .model
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .take(60)
            .collect();
        format!("{}-{}-{}", self.kind, model, hex(&digest[..6]))
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// What a lookup found.
#[derive(Debug, PartialEq)]
pub enum Lookup {
    Hit(Vec<u8>),
    Miss,
    /// An entry exists but is truncated or altered; it is not served.
    Corrupt(String),
}

/// One namespace of the cache.
#[derive(Debug, Clone)]
pub struct Namespace {
    directory: PathBuf,
}

/// The sha256 of the key parts, each length-prefixed so no two lists collide.
pub fn entry_key(parts: &[&[u8]]) -> [u8; 32] {
    let mut key = EntryKey::default();
    for part in parts {
        key.part(part);
    }
    key.finish()
}

/// [`entry_key`] a part at a time, for keys over more parts than are in memory at once.
#[derive(Default)]
pub struct EntryKey(Sha256);

impl EntryKey {
    pub fn part(&mut self, part: &[u8]) {
        self.0.update((part.len() as u64).to_le_bytes());
        self.0.update(part);
    }

    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

fn cache_error(path: &Path, source: std::io::Error) -> Error {
    Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

impl Namespace {
    /// Opens (creating when missing) the namespace for `description` under `root`.
    pub fn open(root: &Path, description: &NamespaceDescription) -> Result<Namespace, Error> {
        let directory = root
            .join(&description.family)
            .join(description.directory_name());
        let described = directory.join(NAMESPACE_FILE);
        if !described.exists() {
            std::fs::create_dir_all(&directory)
                .map_err(|source| cache_error(&directory, source))?;
            let mut bytes = serde_json::to_vec_pretty(description).expect("serializes");
            bytes.push(b'\n');
            write_through_temporary(&described, &bytes, false)?;
        }
        Ok(Namespace { directory })
    }

    pub fn directory(&self) -> &Path {
        &self.directory
    }

    fn entry_path(&self, key: &[u8; 32]) -> PathBuf {
        let name = hex(key);
        self.directory
            .join(&name[..2])
            .join(format!("{name}.{ENTRY_EXTENSION}"))
    }

    /// The payload stored under `key`, if whole.
    pub fn get(&self, key: &[u8; 32]) -> Lookup {
        let path = self.entry_path(key);
        match std::fs::read(&path) {
            Ok(bytes) => match decode(&bytes) {
                Ok(payload) => Lookup::Hit(payload.to_vec()),
                Err(reason) => Lookup::Corrupt(format!("{}: {reason}", path.display())),
            },
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Lookup::Miss,
            Err(error) => Lookup::Corrupt(format!("{}: {error}", path.display())),
        }
    }

    /// Stores `payload` under `key` atomically (replacing a corrupt entry).
    pub fn put(&self, key: &[u8; 32], payload: &[u8]) -> Result<(), Error> {
        let path = self.entry_path(key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| cache_error(parent, source))?;
        }
        write_through_temporary(&path, &encode(payload), false)
    }
}

fn encode(payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(payload.len() + 20);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(payload).to_le_bytes());
    bytes
}

fn decode(bytes: &[u8]) -> Result<&[u8], String> {
    if bytes.len() < 20 || &bytes[..4] != MAGIC {
        return Err("not a hyde-eval cache entry (bad header)".into());
    }
    let length = u64::from_le_bytes(bytes[4..12].try_into().expect("8 bytes")) as usize;
    if bytes.len() != length.saturating_add(20) {
        return Err(format!(
            "truncated or padded: {} bytes for a {length}-byte payload",
            bytes.len()
        ));
    }
    let payload = &bytes[12..12 + length];
    let stored = u64::from_le_bytes(bytes[12 + length..].try_into().expect("8 bytes"));
    if stored != xxhash_rust::xxh3::xxh3_64(payload) {
        return Err("checksum mismatch".into());
    }
    Ok(payload)
}

/// One namespace's contents, for `hyde-eval cache stats`.
#[derive(Debug, Clone, Serialize)]
pub struct NamespaceStats {
    pub directory: PathBuf,
    pub description: Option<NamespaceDescription>,
    pub entries: usize,
    /// Whole-corpus index segments (see [`crate::embed::segment`]); their bytes count in
    /// `bytes`.
    pub segments: usize,
    pub bytes: u64,
    /// Entries that fail their length or checksum.
    pub corrupt: usize,
    /// Temporaries of writes that never finished (a killed process).
    pub unfinished_writes: usize,
}

/// Every namespace under `root`, sorted by directory, each entry verified.
pub fn stats(root: &Path) -> Result<Vec<NamespaceStats>, Error> {
    let mut all = Vec::new();
    for family in ["embeddings", "hypotheses"] {
        for directory in sorted_directories(&root.join(family))? {
            let description = std::fs::read(directory.join(NAMESPACE_FILE))
                .ok()
                .and_then(|bytes| serde_json::from_slice(&bytes).ok());
            let mut namespace = NamespaceStats {
                directory: directory.clone(),
                description,
                entries: 0,
                segments: 0,
                bytes: 0,
                corrupt: 0,
                unfinished_writes: 0,
            };
            for shard in sorted_directories(&directory)? {
                let entries = std::fs::read_dir(&shard).map_err(|source| Error::Read {
                    path: shard.clone(),
                    source,
                })?;
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name.contains(".partial-") {
                        namespace.unfinished_writes += 1;
                    } else if name.ends_with(".segment") {
                        namespace.segments += 1;
                        namespace.bytes += entry.metadata().map_or(0, |meta| meta.len());
                    } else if name.ends_with(ENTRY_EXTENSION) {
                        let bytes = std::fs::read(entry.path()).unwrap_or_default();
                        namespace.entries += 1;
                        namespace.bytes += bytes.len() as u64;
                        if decode(&bytes).is_err() {
                            namespace.corrupt += 1;
                        }
                    }
                }
            }
            all.push(namespace);
        }
    }
    Ok(all)
}

fn sorted_directories(parent: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = match std::fs::read_dir(parent) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::Read {
                path: parent.to_path_buf(),
                source,
            })
        }
    };
    let mut directories: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    directories.sort();
    Ok(directories)
}

/// What `cache clear` did.
#[derive(Debug, Default)]
pub struct Cleared {
    pub removed: Vec<NamespaceStats>,
    /// Directories where a namespace would be that lack a readable `namespace.json`:
    /// not the cache's own, so left alone.
    pub not_owned: Vec<PathBuf>,
}

/// Removes every namespace under `root`, or those whose kind or directory name equals
/// `only`. Only directories that carry the cache's own `namespace.json` are removed;
/// anything else under `root` is reported and left alone.
pub fn clear(root: &Path, only: Option<&str>) -> Result<Cleared, Error> {
    let mut cleared = Cleared::default();
    for namespace in stats(root)? {
        if namespace.description.is_none() {
            cleared.not_owned.push(namespace.directory);
            continue;
        }
        let directory_name = namespace
            .directory
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let matches = match only {
            None => true,
            Some(only) => {
                directory_name == only
                    || namespace
                        .description
                        .as_ref()
                        .is_some_and(|description| description.kind == only)
            }
        };
        if matches {
            std::fs::remove_dir_all(&namespace.directory)
                .map_err(|source| cache_error(&namespace.directory, source))?;
            cleared.removed.push(namespace);
        }
    }
    Ok(cleared)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn description(dimension: Option<usize>) -> NamespaceDescription {
        NamespaceDescription {
            family: "embeddings".into(),
            kind: "openai".into(),
            endpoint: "http://127.0.0.1:1/v1".into(),
            model: "m/x".into(),
            dimension,
        }
    }

    #[test]
    fn entries_round_trip_and_a_damaged_entry_is_never_served() {
        let root = tempfile::tempdir().unwrap();
        let namespace = Namespace::open(root.path(), &description(None)).unwrap();
        let key = entry_key(&[b"query", b"hello"]);
        assert_eq!(namespace.get(&key), Lookup::Miss);
        namespace.put(&key, b"payload").unwrap();
        assert_eq!(namespace.get(&key), Lookup::Hit(b"payload".to_vec()));

        let path = namespace.entry_path(&key);
        let whole = std::fs::read(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() - 3]).unwrap();
        assert!(
            matches!(namespace.get(&key), Lookup::Corrupt(reason) if reason.contains("truncated"))
        );
        let mut altered = whole.clone();
        altered[13] ^= 1;
        std::fs::write(&path, &altered).unwrap();
        assert!(
            matches!(namespace.get(&key), Lookup::Corrupt(reason) if reason.contains("checksum"))
        );
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(namespace.get(&key), Lookup::Corrupt(_)));
        let stats = stats(root.path()).unwrap();
        assert_eq!((stats[0].entries, stats[0].corrupt), (1, 1));

        namespace.put(&key, b"again").unwrap();
        assert_eq!(namespace.get(&key), Lookup::Hit(b"again".to_vec()));
    }

    #[test]
    fn spaces_that_differ_in_dimension_never_share_a_namespace() {
        let root = tempfile::tempdir().unwrap();
        let native = Namespace::open(root.path(), &description(None)).unwrap();
        let reduced = Namespace::open(root.path(), &description(Some(256))).unwrap();
        assert_ne!(native.directory(), reduced.directory());
        let key = entry_key(&[b"x"]);
        native.put(&key, b"1").unwrap();
        assert_eq!(reduced.get(&key), Lookup::Miss);
        assert_eq!(clear(root.path(), Some("voyage")).unwrap().removed.len(), 0);
        assert_eq!(clear(root.path(), Some("openai")).unwrap().removed.len(), 2);
        assert!(stats(root.path()).unwrap().is_empty());
    }

    #[test]
    fn clear_removes_only_directories_that_carry_the_namespace_file() {
        let root = tempfile::tempdir().unwrap();
        let owned = Namespace::open(root.path(), &description(None)).unwrap();
        owned.put(&entry_key(&[b"x"]), b"1").unwrap();
        let foreign = root.path().join("embeddings").join("photos");
        std::fs::create_dir_all(foreign.join("2024")).unwrap();
        std::fs::write(foreign.join("2024").join("keep.jpg"), b"user data").unwrap();
        let cleared = clear(root.path(), None).unwrap();
        assert_eq!(cleared.removed.len(), 1);
        assert_eq!(cleared.not_owned, vec![foreign.clone()]);
        assert!(!owned.directory().exists());
        assert_eq!(
            std::fs::read(foreign.join("2024").join("keep.jpg")).unwrap(),
            b"user data"
        );
    }

    #[test]
    fn key_parts_are_length_prefixed() {
        assert_ne!(entry_key(&[b"ab", b"c"]), entry_key(&[b"a", b"bc"]));
    }
}
