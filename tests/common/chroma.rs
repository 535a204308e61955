//! A throwaway Chroma server for the engine tests: `chroma run` from the venv that
//! `scripts/install_chroma.sh` makes (`${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}/chroma-venv`),
//! its data in a temporary directory, on 127.0.0.1 at a free port; killed on drop.
//! Without the venv [`Chroma::start`] fails the test, so the tests that need it are
//! `#[ignore]`d and `.ci/run` runs them by name.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `chroma run`, killed on drop.
pub struct Chroma {
    child: Child,
    pub url: String,
    log: PathBuf,
    _directory: tempfile::TempDir,
}

impl Chroma {
    /// Starts a server; panics when Chroma is not installed.
    pub fn start() -> Chroma {
        let cache = std::env::var_os("HYDE_EVAL_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/hyde-eval")
            });
        let binary = cache.join("chroma-venv/bin/chroma");
        assert!(
            binary.is_file(),
            "Chroma is not installed at {}: run scripts/install_chroma.sh",
            binary.display()
        );
        let directory = tempfile::tempdir().unwrap();
        let port = free_port();
        let log = directory.path().join("chroma.log");
        let child = Command::new(&binary)
            .arg("run")
            .arg("--path")
            .arg(directory.path().join("data"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .env("ANONYMIZED_TELEMETRY", "False")
            .current_dir(directory.path())
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(directory.path().join("chroma.err")).unwrap())
            .spawn()
            .unwrap();
        let mut chroma = Chroma {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
            _directory: directory,
        };
        chroma.wait_until_ready();
        chroma
    }

    fn wait_until_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let heartbeat = format!("{}/api/v2/heartbeat", self.url);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "chroma exited with {status} before answering; its log:\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            if ureq::get(&heartbeat).call().is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("chroma did not answer {heartbeat} within 60 s");
    }
}

impl Drop for Chroma {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nothing listens on (the OS's pick, released at once).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
