//! Compact per-query records of the results document. A run keeps one record per
//! configuration and evaluated query, so their size decides a large run's memory: each
//! record's metric values, top facts and relevant ranks are stretches of one buffer per
//! configuration ([`SharedSlice`]), and the metric names are shared by all. They
//! serialize as the JSON `results.json` has always held (`{"ndcg@10": 0.5, ...}`,
//! `["f3", "f1"]`, `{"f1": 3, "f2": null}`).

use std::fmt;
use std::sync::Arc;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::dataset::FactId;

/// A stretch of a vector that many records share: a run's per-query records point into
/// one buffer per configuration instead of each owning a small allocation.
#[derive(Clone)]
pub struct SharedSlice<T> {
    all: Arc<Vec<T>>,
    start: usize,
    end: usize,
}

impl<T> SharedSlice<T> {
    /// `all[range]`.
    pub fn new(all: Arc<Vec<T>>, range: std::ops::Range<usize>) -> SharedSlice<T> {
        assert!(range.start <= range.end && range.end <= all.len());
        SharedSlice {
            all,
            start: range.start,
            end: range.end,
        }
    }

    /// A slice that owns `items`.
    pub fn owned(items: Vec<T>) -> SharedSlice<T> {
        let end = items.len();
        SharedSlice::new(Arc::new(items), 0..end)
    }
}

impl<T> Default for SharedSlice<T> {
    fn default() -> Self {
        SharedSlice::owned(Vec::new())
    }
}

impl<T> std::ops::Deref for SharedSlice<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.all[self.start..self.end]
    }
}

impl<T: fmt::Debug> fmt::Debug for SharedSlice<T> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for SharedSlice<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Serialize> Serialize for SharedSlice<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SharedSlice<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::deserialize(deserializer).map(SharedSlice::owned)
    }
}

/// One query's metric values, in the order of the run's metric names.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricValues {
    names: Arc<[String]>,
    values: SharedSlice<f64>,
}

impl MetricValues {
    /// `values[i]` is the value of `names[i]`; `names` is shared by every query.
    pub fn new(names: Arc<[String]>, values: SharedSlice<f64>) -> MetricValues {
        debug_assert_eq!(names.len(), values.len());
        MetricValues { names, values }
    }

    /// The value of `metric`, if it was computed (a NaN reads back as absent).
    pub fn get(&self, metric: &str) -> Option<f64> {
        self.names
            .iter()
            .position(|name| name == metric)
            .map(|index| self.values[index])
            .filter(|value| !value.is_nan())
    }

    /// The metric names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The values in metric order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Each metric's name and value (NaN where absent), in metric order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, f64)> {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.values.iter().copied())
    }
}

impl Serialize for MetricValues {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.values.len()))?;
        for (name, value) in self.names.iter().zip(self.values.iter()) {
            // serde_json writes a non-finite number as null, as the document always has.
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for MetricValues {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<MetricValues, D::Error> {
        struct ValuesVisitor;
        impl<'de> Visitor<'de> for ValuesVisitor {
            type Value = MetricValues;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("an object of metric names and numbers (or null)")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetricValues, A::Error> {
                let mut names = Vec::new();
                let mut values = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, Option<f64>>()? {
                    names.push(name);
                    values.push(value.unwrap_or(f64::NAN));
                }
                Ok(MetricValues::new(names.into(), SharedSlice::owned(values)))
            }
        }
        deserializer.deserialize_map(ValuesVisitor)
    }
}

/// The 1-based rank of each relevant fact of a query (`None`: not returned), sorted by
/// fact id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RelevantRankMap(SharedSlice<(FactId, Option<usize>)>);

impl RelevantRankMap {
    /// The ranks in `all[range]`, which must be sorted by fact id.
    pub fn new(
        all: Arc<Vec<(FactId, Option<usize>)>>,
        range: std::ops::Range<usize>,
    ) -> RelevantRankMap {
        let ranks = SharedSlice::new(all, range);
        debug_assert!(ranks.windows(2).all(|pair| pair[0].0 < pair[1].0));
        RelevantRankMap(ranks)
    }

    /// The rank of `fact`: `None` when it is not relevant, `Some(None)` when it is
    /// relevant and was not returned.
    pub fn get(&self, fact: &FactId) -> Option<Option<usize>> {
        self.0
            .binary_search_by(|(known, _)| known.cmp(fact))
            .ok()
            .map(|index| self.0[index].1)
    }

    /// The relevant facts with their ranks, by fact id.
    pub fn iter(&self) -> impl Iterator<Item = (&FactId, Option<usize>)> {
        self.0.iter().map(|(fact, rank)| (fact, *rank))
    }

    /// The relevant facts, by fact id.
    pub fn facts(&self) -> impl Iterator<Item = &FactId> {
        self.0.iter().map(|(fact, _)| fact)
    }
}

impl Serialize for RelevantRankMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (fact, rank) in self.0.iter() {
            map.serialize_entry(fact, rank)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for RelevantRankMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RelevantRankMap, D::Error> {
        let entries: std::collections::BTreeMap<FactId, Option<usize>> =
            Deserialize::deserialize(deserializer)?;
        Ok(RelevantRankMap(SharedSlice::owned(
            entries.into_iter().collect(),
        )))
    }
}

/// Serializes `records` as a list whose elements are each written on one line, also
/// inside pretty-printed JSON: a large run's per-query records then take a line each
/// rather than thirty, which keeps `results.json` about half the size and its diffs
/// one line per changed record.
pub fn one_line_each<T: Serialize, S: Serializer>(
    records: &[T],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::{Error, SerializeSeq};
    let mut sequence = serializer.serialize_seq(Some(records.len()))?;
    for record in records {
        let line = serde_json::to_string(record).map_err(S::Error::custom)?;
        let raw = serde_json::value::RawValue::from_string(line).map_err(S::Error::custom)?;
        sequence.serialize_element(&raw)?;
    }
    sequence.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_serialize_as_the_objects_results_json_holds() {
        let names: Arc<[String]> = vec!["p@1".to_owned(), "mrr".to_owned()].into();
        let values = MetricValues::new(names, SharedSlice::owned(vec![1.0, f64::NAN]));
        let json = serde_json::to_string(&values).unwrap();
        assert_eq!(json, r#"{"p@1":1.0,"mrr":null}"#);
        let back: MetricValues = serde_json::from_str(&json).unwrap();
        assert_eq!(back.get("p@1"), Some(1.0));
        assert_eq!(back.get("mrr"), None);
        assert_eq!(back.get("map"), None);

        let all = vec![
            ("f0".into(), Some(1)),
            ("f10".into(), Some(3)),
            ("f2".into(), None),
        ];
        let ranks = RelevantRankMap::new(Arc::new(all), 1..3);
        let json = serde_json::to_string(&ranks).unwrap();
        assert_eq!(json, r#"{"f10":3,"f2":null}"#);
        let back: RelevantRankMap = serde_json::from_str(&json).unwrap();
        assert_eq!(back, ranks);
        assert_eq!(back.get(&"f10".into()), Some(Some(3)));
        assert_eq!(back.get(&"f2".into()), Some(None));
        assert_eq!(back.get(&"f3".into()), None);
    }

    #[test]
    fn records_take_one_line_each_in_pretty_json() {
        #[derive(Serialize)]
        struct Document {
            #[serde(serialize_with = "one_line_each")]
            records: Vec<std::collections::BTreeMap<&'static str, u32>>,
        }
        let document = Document {
            records: vec![[("a", 1), ("b", 2)].into(), [("a", 3)].into()],
        };
        let text = serde_json::to_string_pretty(&document).unwrap();
        assert_eq!(
            text,
            "{\n  \"records\": [\n    {\"a\":1,\"b\":2},\n    {\"a\":3}\n  ]\n}"
        );
    }
}
