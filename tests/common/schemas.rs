//! The JSON schemas under `schemas/` as validators, with the schemas they refer to
//! (results.schema.json's `gate` is gate.schema.json, known by its `$id`) registered.

use serde_json::Value;

use super::repo_path;

fn read_json(relative: &str) -> Value {
    let path = repo_path(relative);
    let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The validator of the schema file at `relative` (checked against the draft 2020-12
/// meta-schema), with gate.schema.json registered under its `$id`.
pub fn validator(relative: &str) -> jsonschema::Validator {
    let schema = read_json(relative);
    let gate = read_json("schemas/gate.schema.json");
    let registry = jsonschema::Registry::new()
        .add("urn:hyde-eval:gate:1", gate)
        .and_then(|registry| registry.prepare())
        .unwrap_or_else(|error| panic!("{error}"));
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_registry(&registry)
        .build(&schema)
        .unwrap_or_else(|error| panic!("{error}"))
}
