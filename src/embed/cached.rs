//! The embedding cache in front of a slow or paid provider: every text's vector is
//! looked up under a key of provider kind, endpoint, model, requested dimension, input
//! type (and prefix) and the text itself; only the misses reach the provider, and only
//! its validated answers are stored.
//!
//! Under `--offline` a miss is an error naming what is missing. A provider whose vectors
//! depend on the other texts of a call (the in-process model batches texts, and float
//! sums can differ in the last bit between batchings) is asked for the whole call when
//! anything is missing, so a cached run gives byte-identical results to a fresh one.
//!
//! A corpus of [`SEGMENT_MIN_TEXTS`] facts or more is also kept whole, as the index
//! matrix, in a segment ([`super::segment`]) that later runs memory-map instead of
//! reading an entry per fact and building the matrix again.

use std::sync::atomic::{AtomicU64, Ordering};

use super::segment::{SegmentLookup, SegmentStore};
use super::{CorpusTexts, EmbeddingProvider, EmbeddingUsage, ProviderIdentity, TextKind};
use crate::cache::{entry_key, EntryKey, Lookup, Namespace, NamespaceDescription};
use crate::error::Error;
use crate::index::FlatIndex;

/// What identifies a provider's embedding space for the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheScope {
    pub kind: String,
    /// Base URL, or the model file's digest for in-process models.
    pub endpoint: String,
    pub model: String,
    /// The requested dimension (`None`: the model's own).
    pub dimension: Option<usize>,
    /// Whether a text's vector depends on the other texts of the call.
    pub batch_dependent: bool,
}

/// Corpora at least this large are also stored whole as a segment and memory-mapped
/// on later runs (see [`super::segment`]); smaller ones are quick to read entry by entry.
pub const SEGMENT_MIN_TEXTS: usize = 4096;

/// Texts read at a time while a corpus' key is computed.
const CORPUS_KEY_CHUNK: usize = 4096;

/// A provider behind the on-disk cache.
pub struct CachedProvider {
    inner: Box<dyn EmbeddingProvider>,
    scope: CacheScope,
    namespace: Namespace,
    segments: SegmentStore,
    offline: bool,
    from_cache: AtomicU64,
    computed: AtomicU64,
    corrupt: AtomicU64,
}

impl CachedProvider {
    /// Wraps `inner` (which must have a [`EmbeddingProvider::cache_scope`]) with the cache
    /// under `root`.
    pub fn new(
        inner: Box<dyn EmbeddingProvider>,
        root: &std::path::Path,
        offline: bool,
    ) -> Result<CachedProvider, Error> {
        let scope = inner
            .cache_scope()
            .expect("only providers with a cache scope are cached");
        let namespace = Namespace::open(
            root,
            &NamespaceDescription {
                family: "embeddings".into(),
                kind: scope.kind.clone(),
                endpoint: scope.endpoint.clone(),
                model: scope.model.clone(),
                dimension: scope.dimension,
            },
        )?;
        Ok(CachedProvider {
            inner,
            scope,
            segments: SegmentStore::new(namespace.directory()),
            namespace,
            offline,
            from_cache: AtomicU64::new(0),
            computed: AtomicU64::new(0),
            corrupt: AtomicU64::new(0),
        })
    }

    /// The key parts that name the space and how texts of `kind` are presented, after
    /// `label` (what the key is for).
    fn key_prefix(&self, label: &str, kind: TextKind) -> Vec<Vec<u8>> {
        let dimension = self
            .scope
            .dimension
            .map(|dimension| dimension.to_string())
            .unwrap_or_else(|| "native".into());
        [
            label,
            &self.scope.kind,
            &self.scope.endpoint,
            &self.scope.model,
            &dimension,
            &self.inner.input_key(kind),
        ]
        .iter()
        .map(|part| part.as_bytes().to_vec())
        .collect()
    }

    /// The cache key of each of `texts`.
    fn keys(&self, kind: TextKind, texts: &[&str]) -> Vec<[u8; 32]> {
        let prefix = self.key_prefix("embedding", kind);
        texts
            .iter()
            .map(|text| {
                let mut parts: Vec<&[u8]> = prefix.iter().map(Vec::as_slice).collect();
                parts.push(text.as_bytes());
                entry_key(&parts)
            })
            .collect()
    }

    /// The key of a corpus' segment: the space, the documents' input type, every text.
    fn corpus_key(&self, texts: &dyn CorpusTexts) -> Result<[u8; 32], Error> {
        let mut key = EntryKey::default();
        for part in self.key_prefix(super::segment::FORMAT, TextKind::Document) {
            key.part(&part);
        }
        texts.for_each_chunk(CORPUS_KEY_CHUNK, &mut |chunk| {
            for text in chunk {
                key.part(text.as_bytes());
            }
            Ok(())
        })?;
        Ok(key.finish())
    }

    /// The cached vector under `key`, if whole and of the space's `dimension` (0: not
    /// known yet).
    fn lookup(&self, key: &[u8; 32], dimension: usize) -> Option<Vec<f32>> {
        match self.namespace.get(key) {
            Lookup::Hit(bytes) if !bytes.is_empty() && bytes.len() % 4 == 0 => {
                let vector: Vec<f32> = bytes
                    .chunks_exact(4)
                    .map(|chunk| f32::from_le_bytes(chunk.try_into().expect("4 bytes")))
                    .collect();
                if (dimension != 0 && vector.len() != dimension)
                    || vector.iter().any(|value| !value.is_finite())
                {
                    self.corrupt.fetch_add(1, Ordering::Relaxed);
                    return None;
                }
                self.inner.adopt_dimension(vector.len());
                Some(vector)
            }
            Lookup::Miss => None,
            Lookup::Hit(_) | Lookup::Corrupt(_) => {
                self.corrupt.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }
}

impl EmbeddingProvider for CachedProvider {
    fn identity(&self) -> ProviderIdentity {
        self.inner.identity()
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, Error> {
        let keys = self.keys(kind, texts);
        let mut dimension = self.inner.identity().dimension;
        let mut vectors: Vec<Option<Vec<f32>>> = keys
            .iter()
            .map(|key| {
                let vector = self.lookup(key, dimension);
                if let Some(vector) = &vector {
                    dimension = vector.len();
                }
                vector
            })
            .collect();
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| vectors[i].is_none()).collect();
        self.from_cache
            .fetch_add((texts.len() - missing.len()) as u64, Ordering::Relaxed);
        if missing.is_empty() {
            return Ok(vectors.into_iter().flatten().collect());
        }
        if self.offline {
            let identity = self.inner.identity();
            return Err(Error::BackendFatal(format!(
                "--offline: {} of {} texts have no cached embedding from {} ({} at {}); the first is {:?}\n    hint: run once without --offline to fill the cache in {}",
                missing.len(),
                texts.len(),
                identity.kind,
                identity.model,
                self.scope.endpoint,
                texts[missing[0]].chars().take(80).collect::<String>(),
                self.namespace.directory().display()
            )));
        }
        let requested: Vec<usize> = if self.scope.batch_dependent {
            (0..texts.len()).collect()
        } else {
            missing.clone()
        };
        let request_texts: Vec<&str> = requested.iter().map(|&i| texts[i]).collect();
        let fresh = super::embed_checked(self.inner.as_ref(), &request_texts, kind)?;
        self.computed
            .fetch_add(request_texts.len() as u64, Ordering::Relaxed);
        for (&position, vector) in requested.iter().zip(fresh) {
            let bytes: Vec<u8> = vector
                .iter()
                .flat_map(|value| value.to_le_bytes())
                .collect();
            self.namespace.put(&keys[position], &bytes)?;
            vectors[position] = Some(vector);
        }
        Ok(vectors.into_iter().flatten().collect())
    }

    fn corpus_index(
        &self,
        texts: &dyn CorpusTexts,
        build: &mut dyn FnMut() -> Result<FlatIndex, Error>,
    ) -> Result<FlatIndex, Error> {
        if texts.len() < SEGMENT_MIN_TEXTS {
            return build();
        }
        let key = self.corpus_key(texts)?;
        let dimension = self.inner.identity().dimension;
        match self.segments.load(&key, texts.len(), dimension) {
            SegmentLookup::Hit(index) => {
                self.inner.adopt_dimension(index.dimension());
                self.from_cache
                    .fetch_add(texts.len() as u64, Ordering::Relaxed);
                return Ok(index);
            }
            SegmentLookup::Miss => {}
            SegmentLookup::Damaged(_) => {
                self.corrupt.fetch_add(1, Ordering::Relaxed);
            }
        }
        let index = build()?;
        self.segments.store(&key, &index)?;
        Ok(index)
    }

    fn usage(&self) -> Option<EmbeddingUsage> {
        let inner = self.inner.usage().unwrap_or_default();
        Some(EmbeddingUsage {
            texts_embedded: self.computed.load(Ordering::Relaxed),
            texts_from_cache: self.from_cache.load(Ordering::Relaxed),
            corrupt_entries_ignored: self.corrupt.load(Ordering::Relaxed),
            ..inner
        })
    }
}
