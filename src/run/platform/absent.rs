//! What a system without Linux's means has nothing for: no pipe to widen, no
//! parent-death signal or watchdog (Windows' jobs die with the tool instead; on macOS a
//! check runs until its timeout), no subreaper, no list of adopted orphans. Each answers
//! "nothing", never a guess.

/// A pipe's size is the system's own.
pub fn widen(_pipe: &std::io::PipeReader) {}

/// No parent-death signal.
pub fn die_with_this_process(_command: &mut tokio::process::Command) {}

/// No `/proc` through which a process of the same user reaches another's files: nothing
/// to close.
pub fn guard_this_process() {}

/// No watchdog.
pub fn start_watchdog() -> Option<(u32, std::fs::File)> {
    None
}

/// No subreaper: orphans are not adopted by the tool.
pub fn become_subreaper() {}

/// Nothing is adopted, so nothing is reaped.
pub fn reap_if_dead(_pid: u32) {}

/// Nothing is adopted.
#[cfg_attr(target_os = "macos", allow(dead_code))]
pub fn children() -> Vec<u32> {
    Vec::new()
}

/// Other processes are not listed.
#[cfg_attr(target_os = "macos", allow(dead_code))]
pub fn all_pids() -> std::iter::Empty<u32> {
    std::iter::empty()
}

/// Only processes found through a listing are asked about, and none are listed.
#[cfg_attr(target_os = "macos", allow(dead_code))]
pub fn is_alive(_pid: u32) -> bool {
    false
}

/// Other processes' environments are not read.
#[cfg_attr(target_os = "macos", allow(dead_code))]
pub fn environ_var(_pid: u32, _name: &str) -> Option<String> {
    None
}
