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

/// Kills every live process that carries one of `tokens` (SIGKILL: they belong to a run
/// that no longer exists) and returns them. Only Linux can read other processes'
/// environments; elsewhere nothing is found.
#[cfg(target_os = "linux")]
pub fn kill_tokens(tokens: &[String]) -> Vec<Leaked> {
    if tokens.is_empty() {
        return Vec::new();
    }
    let own = std::process::id();
    let found: Vec<Leaked> = all_pids()
        .filter(|pid| *pid != own && is_alive(*pid))
        .filter(|pid| environ_token(*pid).is_some_and(|t| tokens.contains(&t)))
        .map(|pid| Leaked {
            pid,
            command: command_line(pid),
        })
        .collect();
    for leaked in &found {
        signal(leaked.pid, Sig::Kill);
    }
    found
}

#[cfg(not(target_os = "linux"))]
pub fn kill_tokens(_tokens: &[String]) -> Vec<Leaked> {
    Vec::new()
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

/// Makes this process a child subreaper (Linux), so orphans of checks are adopted by it
/// rather than by init. Elsewhere there is no such thing, and nothing happens.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        // Without it, escaped processes are found through their token alone.
        let _ = nix::sys::prctl::set_child_subreaper(true);
    }
}

/// Live processes that escaped the check identified by `token`: adopted by this process
/// (or found anywhere, on systems without a subreaper) and carrying the token. An
/// adopted process without any token is counted too when no other check is running.
pub fn escaped(token: &str) -> Vec<Leaked> {
    let mut found: Vec<Leaked> = adopted_children()
        .into_iter()
        .filter(|pid| !Running::contains(*pid) && is_alive(*pid))
        .filter(|pid| match environ_token(*pid) {
            Some(t) => t == token,
            None => Running::count() == 0,
        })
        .map(|pid| Leaked {
            pid,
            command: command_line(pid),
        })
        .collect();
    found.sort_by_key(|l| l.pid);
    found
}

/// Terminates `leaked` processes (and the groups they lead): SIGTERM, up to `grace`,
/// SIGKILL; then reaps those that were adopted.
pub async fn kill(leaked: &[Leaked], grace: Duration) {
    if leaked.is_empty() {
        return;
    }
    for l in leaked {
        signal(l.pid, Sig::Term);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && leaked.iter().any(|l| is_alive(l.pid)) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for l in leaked.iter().filter(|l| is_alive(l.pid)) {
        signal(l.pid, Sig::Kill);
    }
    for _ in 0..100 {
        if !leaked.iter().any(|l| is_alive(l.pid)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    reap_adopted();
}

/// Reaps adopted processes that have died (zombies whose parent is this process),
/// except the checks' own main processes, which tokio waits for.
pub fn reap_adopted() {
    #[cfg(target_os = "linux")]
    for pid in adopted_children() {
        if !Running::contains(pid) && state(pid) == Some('Z') {
            use nix::sys::wait::{WaitPidFlag, waitpid};
            use nix::unistd::Pid;
            if let Ok(raw) = i32::try_from(pid) {
                let _ = waitpid(Pid::from_raw(raw), Some(WaitPidFlag::WNOHANG));
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Sig {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal(pid: u32, sig: Sig) {
    use nix::sys::signal::{Signal, kill, killpg};
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else { return };
    let sig = match sig {
        Sig::Term => Signal::SIGTERM,
        Sig::Kill => Signal::SIGKILL,
    };
    let _ = kill(Pid::from_raw(raw), sig);
    // A `setsid` escaper leads its own group; its children go with it.
    if process_group(pid) == Some(pid) {
        let _ = killpg(Pid::from_raw(raw), sig);
    }
}

#[cfg(not(unix))]
fn signal(_pid: u32, _sig: Sig) {}

/// The children of this process (adopted orphans included), from
/// `/proc/self/task/*/children`, else by scanning `/proc` for our parent id.
#[cfg(target_os = "linux")]
fn adopted_children() -> Vec<u32> {
    let mut pids = BTreeSet::new();
    let mut listed = false;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.filter_map(Result::ok) {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                listed = true;
                pids.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<u32>().ok()),
                );
            }
        }
    }
    if !listed {
        let me = std::process::id();
        pids.extend(all_pids().filter(|pid| parent(*pid) == Some(me)));
    }
    // The watchdog is the tool's own child, not something a check left behind.
    if let Some(watchdog) = super::watchdog::Watchdog::pid() {
        pids.remove(&watchdog);
    }
    pids.into_iter().collect()
}

#[cfg(not(target_os = "linux"))]
fn adopted_children() -> Vec<u32> {
    Vec::new()
}

/// Every process id on the system.
#[cfg(target_os = "linux")]
pub fn all_pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
}

/// Fields of `/proc/<pid>/stat` after the command name (which may hold spaces).
#[cfg(target_os = "linux")]
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// The process state letter (`R`, `S`, `Z`, …).
#[cfg(target_os = "linux")]
pub fn state(pid: u32) -> Option<char> {
    stat_fields(pid)?.first()?.chars().next()
}

#[cfg(target_os = "linux")]
fn parent(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn process_group(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(2)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
fn process_group(_pid: u32) -> Option<u32> {
    None
}

/// Whether `pid` exists and is not a zombie.
#[cfg(target_os = "linux")]
pub fn is_alive(pid: u32) -> bool {
    state(pid).is_some_and(live_state)
}

/// A state letter of a process that still runs (not a zombie, not dead).
#[cfg(target_os = "linux")]
fn live_state(state: char) -> bool {
    state != 'Z' && state != 'X'
}

/// The live members of process group `pgid`, sorted by pid: one read of each
/// process's `stat` gives both its group and its state.
#[cfg(target_os = "linux")]
pub fn live_members_of_group(pgid: u32) -> Vec<Leaked> {
    let mut members: Vec<Leaked> = all_pids()
        .filter(|pid| {
            stat_fields(*pid).is_some_and(|fields| {
                let live = fields
                    .first()
                    .and_then(|s| s.chars().next())
                    .is_some_and(live_state);
                live && fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
            })
        })
        .map(|pid| Leaked {
            pid,
            command: command_line(pid),
        })
        .collect();
    members.sort_by_key(|m| m.pid);
    members
}

#[cfg(not(target_os = "linux"))]
pub fn is_alive(_pid: u32) -> bool {
    false
}

/// The check token in `pid`'s environment, if any.
#[cfg(target_os = "linux")]
fn environ_token(pid: u32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{TOKEN_VAR}=");
    environ
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

#[cfg(not(target_os = "linux"))]
fn environ_token(_pid: u32) -> Option<String> {
    None
}

/// The command line of `pid`, arguments joined by spaces. A process that is exiting
/// has an empty command line; then its name is given in brackets, as `ps` does.
#[cfg(target_os = "linux")]
pub fn command_line(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let line = raw
        .split(|b| *b == 0)
        .filter(|part| !part.is_empty())
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    if !line.is_empty() {
        return line;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(name) if !name.trim().is_empty() => format!("[{}]", name.trim()),
        _ => "(exited)".to_owned(),
    }
}

#[cfg(not(target_os = "linux"))]
pub fn command_line(_pid: u32) -> String {
    String::new()
}
