//! Other systems: the facts every build knows.

pub use super::absent::{
    all_pids, become_subreaper, children, die_with_this_process, environ_var, guard_this_process,
    is_alive, reap_if_dead, start_watchdog, widen,
};

use std::path::Path;

use crate::run::facts::OsFacts;

pub fn os_facts(_root: &Path) -> OsFacts {
    OsFacts::default()
}

pub fn container(_root: &Path) -> Option<Option<String>> {
    None
}

pub fn machine_id(_root: &Path) -> Option<String> {
    None
}

pub fn hostname() -> String {
    String::new()
}

use crate::results::Leaked;

/// A process is not asked to stop (`signal_process` does nothing): stop it by its handle.
pub const SIGNALS_PROCESSES: bool = false;

pub fn isolate(_command: &mut tokio::process::Command, _arg0: Option<&std::ffi::OsStr>) {}
pub fn adopt(_child: &tokio::process::Child) {}
pub fn release(_pgid: u32) {}
pub fn signal_group(_pgid: Option<u32>, _signal: super::Signal) {}
pub fn signal_process(_pid: u32, _signal: super::Signal) {}
pub fn exit_code_of(status: std::process::ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}
pub fn set_args(
    command: &mut tokio::process::Command,
    args: &[std::ffi::OsString],
    _cmd_exe: bool,
) {
    command.args(args);
}
pub fn executable_in(
    _dir: &std::path::Path,
    _program: &std::ffi::OsStr,
) -> Option<std::path::PathBuf> {
    None
}
pub fn shell_fallback(_program: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    None
}
pub fn state_home() -> Option<std::path::PathBuf> {
    super::absolute_var("HOME").map(|h| h.join(".local/state"))
}
pub fn group_members(_pgid: Option<u32>) -> Vec<Leaked> {
    Vec::new()
}
pub fn command_line(_pid: u32) -> String {
    String::new()
}

#[derive(Default)]
pub struct Signals;

impl Signals {
    pub fn new() -> Signals {
        Signals
    }

    pub async fn next(&mut self) -> Option<i32> {
        tokio::signal::ctrl_c().await.ok().map(|()| 2)
    }
}

/// Nothing is adopted.
pub const ADOPTS_ORPHANS: bool = false;
