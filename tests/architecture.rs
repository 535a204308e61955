//! The import structure that `docs/architecture.md` states, checked against the code:
//! every module of `src/` sits on a layer of the table there, no import runs from a
//! lower layer to a higher one, and no files import each other in a loop.
//!
//! Imports are read from the source text: every `crate::` and `super::` path (with its
//! `{...}` groups) outside comments and the unit tests at the end of a file, resolved to
//! the file that defines the module it names. Re-exports count as imports.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/`, relative to it.
fn source_files() -> Vec<PathBuf> {
    let root = common::repo_path("src");
    let mut pending = vec![root.clone()];
    let mut files = Vec::new();
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    files.sort();
    files
}

/// The module path of a file: `pipeline/run.rs` -> `[pipeline, run]`,
/// `report/mod.rs` -> `[report]`, `lib.rs` -> `[]`.
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .with_extension("")
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The source without comments and without the unit tests at its end.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(start) => &text[..start],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(start) if !line[..start].contains('"') => &line[..start],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The identifiers of a path at `text[at..]` (`a::b::c`), and where it ends.
fn path_at(text: &[u8], mut at: usize) -> (Vec<String>, usize) {
    let mut segments = Vec::new();
    loop {
        let start = at;
        while at < text.len() && is_ident(text[at]) {
            at += 1;
        }
        if at == start {
            break;
        }
        segments.push(String::from_utf8_lossy(&text[start..at]).into_owned());
        if text[at..].starts_with(b"::") && at + 2 < text.len() && is_ident(text[at + 2]) {
            at += 2;
        } else {
            break;
        }
    }
    (segments, at)
}

/// Every module path the code of `file` names through `crate::` or `super::`,
/// absolute, with each item of a `{...}` group as its own path.
fn named_paths(file: &Path, code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let own = module_of(file);
    let mut paths = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let keyword = if bytes[at..].starts_with(b"crate::") {
            "crate"
        } else if bytes[at..].starts_with(b"super::") {
            "super"
        } else {
            at += 1;
            continue;
        };
        if at > 0 && is_ident(bytes[at - 1]) {
            at += 1;
            continue;
        }
        let mut base: Vec<String> = if keyword == "crate" {
            Vec::new()
        } else {
            // A file's `super` is the module above it (for mod.rs, the folder's parent).
            let mut parent = own.clone();
            parent.pop();
            parent
        };
        at += keyword.len() + 2;
        let (mut segments, end) = path_at(bytes, at);
        at = end;
        while segments.first().is_some_and(|segment| segment == "super") {
            segments.remove(0);
            base.pop();
        }
        base.extend(segments);
        if bytes[at..].starts_with(b"::{") {
            // A group: each item, up to its first `::`, is a path of its own.
            let mut depth = 0;
            let group_start = at + 3;
            let mut end = group_start;
            while end < bytes.len() {
                match bytes[end] {
                    b'{' => depth += 1,
                    b'}' if depth == 0 => break,
                    b'}' => depth -= 1,
                    _ => {}
                }
                end += 1;
            }
            let group = &code[group_start..end];
            let mut item_depth = 0;
            let mut item_start = 0;
            for (offset, character) in group.char_indices().chain([(group.len(), ',')]) {
                match character {
                    '{' => item_depth += 1,
                    '}' => item_depth -= 1,
                    ',' if item_depth == 0 => {
                        let item = group[item_start..offset].trim();
                        let (head, _) = path_at(item.as_bytes(), 0);
                        if let Some(first) = head.first().filter(|first| *first != "self") {
                            let mut path = base.clone();
                            path.push(first.clone());
                            paths.push(path);
                        }
                        item_start = offset + 1;
                    }
                    _ => {}
                }
            }
            at = end;
        }
        paths.push(base);
    }
    paths
}

/// The layer of each top-level module, from the table in docs/architecture.md (rows
/// `| N | name | module, module, ... | ...`).
fn declared_layers() -> BTreeMap<String, u32> {
    let text = std::fs::read_to_string(common::repo_path("docs/architecture.md")).unwrap();
    let mut layers = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(layer) = cells.get(1).and_then(|cell| cell.parse::<u32>().ok()) else {
            continue;
        };
        for module in cells[3].split(',') {
            let module = module.trim().trim_matches('`');
            if !module.is_empty() {
                layers.insert(module.to_owned(), layer);
            }
        }
    }
    layers
}

/// The file-level import graph of `src/`.
fn import_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let files = source_files();
    let by_module: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|file| (module_of(file), file.clone()))
        .collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(common::repo_path("src").join(file)).unwrap();
        let mut targets = BTreeSet::new();
        for path in named_paths(file, &code_of(&text)) {
            // The longest prefix that is a module is the file the path leads into.
            let target = (1..=path.len())
                .rev()
                .find_map(|length| by_module.get(&path[..length]));
            if let Some(target) = target.filter(|target| *target != file) {
                targets.insert(target.clone());
            }
        }
        graph.insert(file.clone(), targets);
    }
    graph
}

fn top_module(file: &Path) -> String {
    module_of(file)
        .first()
        .cloned()
        .unwrap_or_else(|| file.with_extension("").display().to_string())
}

#[test]
fn every_module_has_a_layer_and_no_import_runs_up() {
    let layers = declared_layers();
    assert!(
        layers.len() >= 20,
        "the layer table lists the modules: {layers:?}"
    );
    let graph = import_graph();
    let mut unplaced = BTreeSet::new();
    let mut upward = Vec::new();
    for (file, targets) in &graph {
        let Some(&from) = layers.get(&top_module(file)) else {
            unplaced.insert(top_module(file));
            continue;
        };
        for target in targets {
            let Some(&to) = layers.get(&top_module(target)) else {
                unplaced.insert(top_module(target));
                continue;
            };
            if to > from {
                upward.push(format!(
                    "{} (layer {from}) imports {} (layer {to})",
                    file.display(),
                    target.display()
                ));
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "modules missing from the layer table of docs/architecture.md: {unplaced:?}"
    );
    assert!(
        upward.is_empty(),
        "imports that run up:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_files_import_each_other_in_a_loop() {
    let graph = import_graph();
    // Tarjan's strongly connected components; any of more than one file is a loop.
    struct Search<'g> {
        graph: &'g BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        loops: Vec<Vec<String>>,
    }
    impl<'g> Search<'g> {
        fn visit(&mut self, file: &'g PathBuf) {
            let number = self.index.len();
            self.index.insert(file, number);
            self.low.insert(file, number);
            self.stack.push(file);
            for target in &self.graph[file] {
                if !self.index.contains_key(target) {
                    self.visit(target);
                    let low = self.low[file].min(self.low[target]);
                    self.low.insert(file, low);
                } else if self.stack.contains(&target) {
                    let low = self.low[file].min(self.index[target]);
                    self.low.insert(file, low);
                }
            }
            if self.low[file] == self.index[file] {
                let mut component = Vec::new();
                while let Some(member) = self.stack.pop() {
                    component.push(member.display().to_string());
                    if member == file {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.loops.push(component);
                }
            }
        }
    }
    let mut search = Search {
        graph: &graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        loops: Vec::new(),
    };
    for file in graph.keys() {
        if !search.index.contains_key(file) {
            search.visit(file);
        }
    }
    assert!(search.loops.is_empty(), "import loops: {:?}", search.loops);
}

#[test]
fn the_reader_finds_the_imports_it_is_meant_to() {
    let code =
        "use crate::a::{b::C, d, self};\nuse super::e;\nlet x = crate::f::g(); // crate::h\n";
    let paths = named_paths(Path::new("x/y.rs"), &code_of(code));
    let expected: Vec<Vec<String>> = [
        vec!["a", "b"],
        vec!["a", "d"],
        vec!["a"],
        vec!["x", "e"],
        vec!["f", "g"],
    ]
    .iter()
    .map(|path| path.iter().map(|part| part.to_string()).collect())
    .collect();
    assert_eq!(paths, expected);
}

#[test]
fn clap_stays_in_the_argument_layer() {
    let outside: Vec<String> = source_files()
        .into_iter()
        .filter(|file| !file.starts_with("cli") && file != Path::new("main.rs"))
        .filter(|file| {
            let text = std::fs::read_to_string(common::repo_path("src").join(file)).unwrap();
            code_of(&text).contains("clap::")
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        outside.is_empty(),
        "clap used outside cli/ and main.rs: {outside:?}"
    );
}
