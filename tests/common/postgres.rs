//! A throwaway PostgreSQL + pgvector server for the engine tests: `initdb` into a
//! temporary directory, `postgres` on 127.0.0.1 at a free port (its unix socket in the
//! same directory), stopped and deleted on drop.
//!
//! The binaries come from `scripts/install_pgvector.sh` (PyPI's pgserver wheel, in
//! `${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}/pgvector/pginstall`); without them
//! [`Postgres::start`] fails the test, so the tests that need a server are `#[ignore]`d
//! and `.ci/run` runs them by name. PostgreSQL refuses to
//! run as root, so as root the server runs in a user namespace as `nobody` (`unshare
//! --user --map-user=65534`): the temporary directory, owned by root outside, is owned by
//! the server inside, and the server has no privileges outside.
//!
//! Roles: `hyde`, the superuser, logs in without a password (trust); `hyde_pw` must give
//! [`PASSWORD_ROLE_PASSWORD`] (SCRAM), for the credentials tests.
#![allow(dead_code)] // each test binary uses its own subset

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The password of the role `hyde_pw`.
pub const PASSWORD_ROLE_PASSWORD: &str = "correct horse battery staple";

/// At most this many servers run at once in one test binary (each holds about 25 MB of
/// data and a few processes, on 2 cores).
const SERVERS_AT_ONCE: usize = 3;

/// How many servers run now, and the signal that one stopped.
static RUNNING: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// One of the [`SERVERS_AT_ONCE`] places; freed on drop.
struct Slot;

impl Slot {
    fn take() -> Slot {
        let (running, freed) = &RUNNING;
        let mut running = running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        while *running >= SERVERS_AT_ONCE {
            running = freed
                .wait(running)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *running += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (running, freed) = &RUNNING;
        *running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) -= 1;
        freed.notify_one();
    }
}

/// A running server; stopped (fast shutdown) and deleted when dropped.
pub struct Postgres {
    child: Child,
    pub port: u16,
    /// Holds the data directory and the socket; deleted on drop, after the server stops.
    _directory: tempfile::TempDir,
    /// Freed last, once the server has stopped and its files are gone.
    _slot: Slot,
}

/// Where `scripts/install_pgvector.sh` puts the server, if it has.
fn install() -> Option<PathBuf> {
    let cache = std::env::var_os("HYDE_EVAL_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache/hyde-eval"))
        })?;
    let bin = cache.join("pgvector/pginstall/bin");
    (bin.join("postgres").is_file() && bin.join("initdb").is_file()).then_some(bin)
}

/// `program` from the install, run unprivileged when we are root.
fn command(bin: &Path, program: &str) -> Command {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        let mut command = Command::new("unshare");
        command
            .args(["--user", "--map-user=65534", "--map-group=65534", "--"])
            .arg(bin.join(program));
        command
    } else {
        Command::new(bin.join(program))
    }
}

/// Waits until the server `child` accepts connections on `port`; false when it exited
/// instead.
fn wait_ready(child: &mut Child, port: u16, directory: &tempfile::TempDir) -> bool {
    let url = format!("postgresql://hyde@127.0.0.1:{port}/postgres");
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if postgres::Client::connect(&url, postgres::NoTls).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!(
        "postgres not ready within 60 s:\n{}",
        std::fs::read_to_string(directory.path().join("postgres.log")).unwrap_or_default()
    );
}

/// A port on 127.0.0.1 that nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("cannot bind a port on 127.0.0.1")
}

impl Postgres {
    /// A fresh server; panics when the install is missing.
    pub fn start() -> Postgres {
        let bin = install().unwrap_or_else(|| {
            panic!(
                "PostgreSQL + pgvector is not installed: run scripts/install_pgvector.sh \
                 (HYDE_EVAL_CACHE={:?})",
                std::env::var("HYDE_EVAL_CACHE").unwrap_or_default()
            )
        });
        let slot = Slot::take();
        let directory = tempfile::Builder::new()
            .prefix("hyde-eval-pg-")
            .tempdir()
            .expect("cannot create a temporary directory");
        let data = directory.path().join("data");
        let initdb = command(&bin, "initdb")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "hyde",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "-N",
                "--wal-segsize=1",
            ])
            .output()
            .expect("cannot run initdb");
        assert!(
            initdb.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&initdb.stderr)
        );
        std::fs::write(
            data.join("pg_hba.conf"),
            "local all all trust\n\
             host all hyde_pw 127.0.0.1/32 scram-sha-256\n\
             host all all 127.0.0.1/32 trust\n",
        )
        .expect("cannot write pg_hba.conf");
        // Another process may take the free port between the check and the bind: retry.
        for _ in 0..5 {
            let port = free_port();
            let log = std::fs::File::create(directory.path().join("postgres.log"))
                .expect("cannot create the server log");
            let mut child = command(&bin, "postgres")
                .arg("-D")
                .arg(&data)
                .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
                .arg(directory.path())
                .args(["-c", "fsync=off", "-c", "full_page_writes=off"])
                .args(["-c", "synchronous_commit=off"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("cannot start postgres");
            if !wait_ready(&mut child, port, &directory) {
                continue; // it exited: most likely the port was taken
            }
            let server = Postgres {
                child,
                port,
                _directory: directory,
                _slot: slot,
            };
            server
                .client()
                .batch_execute(&format!(
                    "CREATE ROLE hyde_pw LOGIN PASSWORD '{PASSWORD_ROLE_PASSWORD}'; \
                     GRANT ALL ON SCHEMA public TO hyde_pw;"
                ))
                .expect("cannot create the password role");
            return server;
        }
        panic!("postgres did not start on any of 5 ports");
    }

    /// `postgresql://ROLE@127.0.0.1:PORT/postgres`.
    pub fn url(&self, role: &str) -> String {
        format!("postgresql://{role}@127.0.0.1:{}/postgres", self.port)
    }

    /// A superuser connection, for the tests' own checks and fault set-ups.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url("hyde"), postgres::NoTls)
            .expect("cannot connect as hyde")
    }

    /// Fast shutdown (SIGINT), then a kill after 20 s.
    fn shutdown(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill with a valid signal on the pid of our own child process.
            unsafe {
                libc::kill(pid, libc::SIGINT);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Postgres {
    /// The pid of the backend serving `application_name`, from the server's activity view.
    pub fn backend_pid(&self, application_name: &str) -> i32 {
        self.client()
            .query_one(
                "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
                &[&application_name],
            )
            .expect("no backend with that application_name")
            .get(0)
    }

    /// The postmaster's pid.
    pub fn postmaster_pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.shutdown();
    }
}
