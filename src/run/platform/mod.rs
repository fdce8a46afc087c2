//! What differs by operating system, behind one API: Linux, macOS and Windows each have
//! a module with the same functions, and no other module of the crate asks which OS it
//! is built for.
//!
//! **Facts** (what the machine is):
//!
//! | | Linux | macOS | Windows |
//! |---|---|---|---|
//! | OS name and version | `/etc/os-release` | `sw_vers` | the registry's `ProductName`, build |
//! | kernel | `uname -r` | `uname -r` | – |
//! | C library | `getconf GNU_LIBC_VERSION`, else musl's loader | – | – |
//! | in a container | `/.dockerenv`, `/run/.containerenv`, `container`, cgroup | never | a container user |
//! | machine id | `/etc/machine-id` | `IOPlatformUUID` | `MachineGuid` |
//!
//! **Processes** (how a check runs, ends, and is cleaned up after):
//!
//! | | Linux | macOS | Windows |
//! |---|---|---|---|
//! | a check's processes together | its own process group | its own process group | its own process group (`CREATE_NEW_PROCESS_GROUP`) in its own job object |
//! | asked to stop | `SIGTERM` to the group | `SIGTERM` to the group | Ctrl-Break to the group |
//! | made to stop | `SIGKILL` to the group | `SIGKILL` to the group | `TerminateJobObject` |
//! | what is still alive | `/proc`: the group's members, with command lines | libproc: the group's members; `KERN_PROCARGS2`: command lines | the job's processes, with their images |
//! | escaped the group (`setsid`) | adopted by the tool (a subreaper), known by the token in their environment | launchd's orphans of this user, known by the token in their environment | cannot escape the job |
//! | die with the tool | a watchdog process that kills the listed groups | – (each check has its timeout) | the job closes with the tool (`KILL_ON_JOB_CLOSE`) |
//!
//! A function a system has nothing for answers "nothing" (no members, no adopted
//! children), never a guess.

#[cfg(unix)]
mod unix;

#[cfg(not(target_os = "linux"))]
mod absent;

// macOS reads it from the kernel; every system tests the parsing.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
mod procargs;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub use macos::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod other;
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
pub use other::*;

/// How hard a check's processes are asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Asked: they may clean up (SIGTERM, Ctrl-Break).
    Term,
    /// Made: nothing can ignore it (SIGKILL, terminating the job).
    Kill,
}

/// `pids` as leaked processes, each with its command line, in pid order.
pub fn with_command_lines(pids: impl Iterator<Item = u32>) -> Vec<crate::results::Leaked> {
    let mut leaked: Vec<crate::results::Leaked> = pids
        .map(|pid| crate::results::Leaked {
            pid,
            command: command_line(pid),
        })
        .collect();
    leaked.sort_by_key(|l| l.pid);
    leaked
}

/// The output of `program ARGS` (trimmed), when it runs and succeeds.
#[allow(dead_code)]
fn output_of(program: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// An environment variable holding an absolute path (the XDG rule: a relative one is
/// ignored).
pub fn absolute_var(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os(name)
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
}
