//! What Linux and macOS share: process groups, signals, exit statuses, executables.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use nix::sys::signal::{Signal as Sig, kill, killpg};
use nix::unistd::Pid;

use super::{Signal, absolute_var};

fn sig(signal: Signal) -> Sig {
    match signal {
        Signal::Term => Sig::SIGTERM,
        Signal::Kill => Sig::SIGKILL,
    }
}

/// Starts the check in a process group of its own, named `arg0` (the name a shell
/// knows itself by, `bash: line 1: …`, as when searched on `PATH`).
pub fn isolate(command: &mut tokio::process::Command, arg0: Option<&OsStr>) {
    if let Some(arg0) = arg0 {
        command.arg0(arg0);
    }
    command.process_group(0);
}

/// Nothing to hold beside the group: a process group needs no handle.
pub fn adopt(_child: &tokio::process::Child) {}

/// Nothing to let go of (see [`adopt`]).
pub fn release(_pgid: u32) {}

/// Sends `signal` to the process group `pgid`; a group already gone is the normal end.
pub fn signal_group(pgid: Option<u32>, signal: Signal) {
    let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let _ = killpg(Pid::from_raw(pgid), sig(signal));
}

/// A process asked to stop gets SIGTERM and may clean up.
pub const SIGNALS_PROCESSES: bool = true;

/// Sends `signal` to `pid`, and to the group it leads (a `setsid` escaper's children
/// go with it).
pub fn signal_process(pid: u32, signal: Signal) {
    let Ok(raw) = i32::try_from(pid) else { return };
    let _ = kill(Pid::from_raw(raw), sig(signal));
    if nix::unistd::getpgid(Some(Pid::from_raw(raw))).is_ok_and(|g| g.as_raw() == raw) {
        let _ = killpg(Pid::from_raw(raw), sig(signal));
    }
}

/// Whether process group `pgid` still has any member (zombies included): one syscall.
pub fn group_exists(pgid: u32) -> bool {
    i32::try_from(pgid).is_ok_and(|p| killpg(Pid::from_raw(p), None).is_ok())
}

/// The exit code of `status`; a signal N is reported as 128+N, as shells do.
pub fn exit_code_of(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        return 128 + signal;
    }
    status.code().unwrap_or(1)
}

/// The arguments, as they are: `execve` takes them one by one.
pub fn set_args(
    command: &mut tokio::process::Command,
    args: &[std::ffi::OsString],
    _cmd_exe: bool,
) {
    command.args(args);
}

/// `dir/program`, when it is a file anyone may execute (as `execvp` looks).
pub fn executable_in(dir: &Path, program: &OsStr) -> Option<PathBuf> {
    let candidate = dir.join(program);
    is_executable(&candidate).then_some(candidate)
}

/// No shell is looked for outside `PATH`.
pub fn shell_fallback(_program: &OsStr) -> Option<PathBuf> {
    None
}

/// Whether `path` is a file anyone may execute.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Where per-user state lives: `$XDG_STATE_HOME`, else `~/.local/state`.
pub fn state_home() -> Option<PathBuf> {
    absolute_var("XDG_STATE_HOME").or_else(|| absolute_var("HOME").map(|h| h.join(".local/state")))
}

/// The signals that stop a run: SIGINT, SIGTERM, SIGHUP.
pub struct Signals(Option<[tokio::signal::unix::Signal; 3]>);

impl Default for Signals {
    fn default() -> Signals {
        Signals::new()
    }
}

impl Signals {
    pub fn new() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        let all = (|| {
            Some([
                signal(SignalKind::interrupt()).ok()?,
                signal(SignalKind::terminate()).ok()?,
                signal(SignalKind::hangup()).ok()?,
            ])
        })();
        Signals(all)
    }

    /// The next signal's number.
    pub async fn next(&mut self) -> Option<i32> {
        let [int, term, hup] = self.0.as_mut()?;
        tokio::select! {
            _ = int.recv() => Some(2),
            _ = term.recv() => Some(15),
            _ = hup.recv() => Some(1),
        }
    }
}
