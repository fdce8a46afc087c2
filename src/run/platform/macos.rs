//! macOS.

use std::path::Path;

use super::output_of;
use crate::run::facts::OsFacts;

/// `sw_vers`: the product's name and version; the Darwin kernel's release.
pub fn os_facts(_root: &Path) -> OsFacts {
    OsFacts {
        name: output_of("sw_vers", &["-productName"]),
        version: output_of("sw_vers", &["-productVersion"]),
        kernel: nix::sys::utsname::uname()
            .ok()
            .and_then(|u| u.release().to_str().map(str::to_owned)),
        libc: None,
    }
}

/// macOS runs no containers of its own: the run is on the machine.
pub fn container(_root: &Path) -> Option<Option<String>> {
    None
}

/// The platform's UUID (`ioreg -rd1 -c IOPlatformExpertDevice`).
pub fn machine_id(_root: &Path) -> Option<String> {
    let text = output_of("ioreg", &["-rd1", "-c", "IOPlatformExpertDevice"])?;
    text.lines()
        .find(|l| l.contains("IOPlatformUUID"))
        .and_then(|l| l.rsplit('"').nth(1))
        .map(str::to_owned)
}

/// The host's name.
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default()
}

pub use super::unix::{
    Signals, adopt, executable_in, exit_code_of, isolate, release, set_args, shell_fallback,
    signal_group, signal_process, state_home,
};

use crate::results::Leaked;

/// A pipe's size is the system's own.
pub fn widen(_pipe: &std::io::PipeReader) {}

/// No parent-death signal: a check outlives a tool killed by SIGKILL until its timeout
/// would have ended it (see the table in `run::platform`).
pub fn die_with_this_process(_command: &mut tokio::process::Command) {}

/// No watchdog: see [`die_with_this_process`].
pub fn start_watchdog() -> Option<(u32, std::fs::File)> {
    None
}

/// Whether the group still exists, without a process list: one entry for the group.
pub fn group_members(pgid: Option<u32>) -> Vec<Leaked> {
    match pgid {
        Some(p) if super::unix::group_exists(p) => vec![Leaked {
            pid: p,
            command: "(a process of the check's group)".to_owned(),
        }],
        _ => Vec::new(),
    }
}

/// No subreaper on macOS.
pub fn become_subreaper() {}

/// Adopted orphans cannot be told from the tool's own children here: none are listed.
pub fn children() -> Vec<u32> {
    Vec::new()
}

/// Nothing is adopted (see [`children`]), so nothing is reaped.
pub fn reap_if_dead(_pid: u32) {}

/// Other processes are not listed here.
pub fn all_pids() -> std::iter::Empty<u32> {
    std::iter::empty()
}

/// Only processes found through a listing are asked about, and none are listed.
pub fn is_alive(_pid: u32) -> bool {
    false
}

/// Other processes' environments are not read here.
pub fn environ_var(_pid: u32, _name: &str) -> Option<String> {
    None
}

/// Other processes' command lines are not read here.
pub fn command_line(_pid: u32) -> String {
    String::new()
}
