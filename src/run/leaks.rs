//! Finding processes that outlive their check, wherever they went.
//!
//! A process-group check misses children that called `setsid`; a pipe-EOF check misses
//! children that redirected their output. On Linux the tool makes itself a child
//! subreaper, so every orphan of a check is re-parented to it and can be found among
//! its own children; each check's processes carry a token in their environment
//! (`VERIFY_MATRIX_TOKEN`), which says which check an adopted process came from when
//! several run at once.
//!
//! Adopted processes become zombies of this process when they die. They are reaped by
//! pid, never with `waitpid(-1)`, which would steal exit statuses from tokio's own
//! children (the checks' main processes, listed in [`Running`]).

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::platform::{self, Signal};
use crate::results::Leaked;

/// The variable that marks a check's processes.
pub const TOKEN_VAR: &str = "VERIFY_MATRIX_TOKEN";

/// A fresh token for one execution: this process's id and start time (so that a later
/// process with the same id never makes the same tokens) and a counter.
pub fn new_token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    static STARTED: std::sync::LazyLock<u128> = std::sync::LazyLock::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    });
    format!(
        "{}-{}-{}",
        std::process::id(),
        *STARTED,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Kills every live process that carries one of `tokens` (they belong to a run that no
/// longer exists) and returns them. Only where other processes' environments can be
/// read (Linux; this user's processes on macOS) is anything found.
pub fn kill_tokens(tokens: &[String]) -> Vec<Leaked> {
    if tokens.is_empty() {
        return Vec::new();
    }
    let own = std::process::id();
    let found: Vec<Leaked> = platform::all_pids()
        .filter(|pid| *pid != own && platform::is_alive(*pid))
        .filter(|pid| environ_token(*pid).is_some_and(|t| tokens.contains(&t)))
        .map(|pid| Leaked {
            pid,
            command: platform::command_line(pid),
        })
        .collect();
    for leaked in &found {
        platform::signal_process(leaked.pid, Signal::Kill);
    }
    found
}

/// The main processes of the checks running now: tokio waits for these, so they are
/// never reaped here.
pub struct Running;

static RUNNING: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

impl Running {
    /// Records a check's main process.
    pub fn add(pid: u32) {
        RUNNING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pid);
    }

    /// Forgets a check's main process once tokio has reaped it.
    pub fn remove(pid: u32) {
        RUNNING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&pid);
    }

    fn contains(pid: u32) -> bool {
        RUNNING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&pid)
    }

    fn count() -> usize {
        RUNNING.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// Makes this process a child subreaper where the system has such a thing (Linux), so
/// orphans of checks are adopted by it rather than by init.
pub fn become_subreaper() {
    platform::become_subreaper();
}

/// Live processes that escaped the check identified by `token`: adopted by this process
/// (or found anywhere, on systems without a subreaper) and carrying the token. An
/// adopted process without any token is counted too when no other check is running.
pub fn escaped(token: &str) -> Vec<Leaked> {
    platform::with_command_lines(
        adopted_children()
            .into_iter()
            .filter(|pid| !Running::contains(*pid) && platform::is_alive(*pid))
            .filter(|pid| match environ_token(*pid) {
                Some(t) => t == token,
                // An adopted orphan is a check's when only one could have left it; where
                // orphans are not adopted, the token alone says whose a process is.
                None => platform::ADOPTS_ORPHANS && Running::count() == 0,
            }),
    )
}

/// Terminates `leaked` processes (and the groups they lead): asked, up to `grace`, then
/// made to; then reaps those that were adopted.
pub async fn kill(leaked: &[Leaked], grace: Duration) {
    if leaked.is_empty() {
        return;
    }
    for l in leaked {
        platform::signal_process(l.pid, Signal::Term);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && leaked.iter().any(|l| platform::is_alive(l.pid)) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for l in leaked.iter().filter(|l| platform::is_alive(l.pid)) {
        platform::signal_process(l.pid, Signal::Kill);
    }
    for _ in 0..100 {
        if !leaked.iter().any(|l| platform::is_alive(l.pid)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    reap_adopted();
}

/// Reaps adopted processes that have died (zombies whose parent is this process),
/// except the checks' own main processes, which tokio waits for.
pub fn reap_adopted() {
    if !platform::ADOPTS_ORPHANS {
        return;
    }
    for pid in adopted_children() {
        if !Running::contains(pid) {
            platform::reap_if_dead(pid);
        }
    }
}

/// The children of this process (adopted orphans included), less the watchdog: it is
/// the tool's own child, not something a check left behind.
fn adopted_children() -> Vec<u32> {
    let mut pids = platform::children();
    if let Some(watchdog) = super::watchdog::Watchdog::pid() {
        pids.retain(|p| *p != watchdog);
    }
    pids
}

/// The check token in `pid`'s environment, if any.
fn environ_token(pid: u32) -> Option<String> {
    platform::environ_var(pid, TOKEN_VAR)
}
