//! Linux.

use std::path::Path;

use super::output_of;
use crate::run::facts::{OsFacts, linux_container, linux_machine_id, os_release, under};

/// The distribution's name and version, the kernel and the C library.
pub fn os_facts(root: &Path) -> OsFacts {
    let (name, version) = os_release(root);
    let kernel = nix::sys::utsname::uname()
        .ok()
        .and_then(|u| u.release().to_str().map(str::to_owned));
    let libc = output_of("getconf", &["GNU_LIBC_VERSION"]).or_else(|| {
        let lib = std::fs::read_dir(under(root, "/lib")).ok()?;
        lib.filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with("ld-musl"))
            .then(|| "musl".to_owned())
    });
    OsFacts {
        name,
        version,
        kernel,
        libc,
    }
}

/// Inside a container: `Some(runtime)` (the runtime when known).
pub fn container(root: &Path) -> Option<Option<String>> {
    linux_container(root, std::env::var("container").ok())
}

/// `/etc/machine-id`.
pub fn machine_id(root: &Path) -> Option<String> {
    linux_machine_id(root)
}

/// The host's name.
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default()
}

use super::unix::group_exists;
pub use super::unix::{
    SIGNALS_PROCESSES, Signals, adopt, executable_in, exit_code_of, isolate, release, set_args,
    shell_fallback, signal_group, signal_process, state_home,
};

use std::collections::BTreeSet;
use std::io;

use crate::results::Leaked;

/// Lets a check print up to 1 MiB ahead of the log's writing (a pipe holds 64 KiB by
/// default): a loud check is not held up while a block is redacted and written. Best
/// effort: a smaller limit leaves the pipe as it was.
pub fn widen(pipe: &io::PipeReader) {
    use nix::fcntl::{FcntlArg, fcntl};
    let _ = fcntl(pipe, FcntlArg::F_SETPIPE_SZ(1024 * 1024));
}

/// When the watchdog could not be started: the check's main process gets SIGKILL when
/// this process dies, however it dies (even by SIGKILL, which no handler sees). Its own
/// children are found by their token at the next start of the environment. The hook
/// makes every spawn a full `fork`.
pub fn die_with_this_process(command: &mut tokio::process::Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the child between fork and exec, and makes only
    // async-signal-safe system calls (prctl, getppid, kill).
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                .map_err(io::Error::from)?;
            // The parent may have died before the prctl: then nobody will tell us.
            if nix::unistd::getppid() != parent {
                let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
            }
            Ok(())
        });
    }
}

/// Makes this process undumpable: processes of the same user (the checks it runs) can no
/// longer open its `/proc/PID/fd` (its stdout, where the gate answers), read its memory
/// or attach to it.
pub fn guard_this_process() {
    let _ = nix::sys::prctl::set_dumpable(false);
}

/// The live (non-zombie) members of process group `pgid`.
pub fn group_members(pgid: Option<u32>) -> Vec<Leaked> {
    let Some(pgid) = pgid else { return Vec::new() };
    // The common case, a group already gone, costs one syscall instead of a /proc scan.
    if !group_exists(pgid) {
        return Vec::new();
    }
    live_members_of_group(pgid)
}

/// Makes this process a child subreaper, so orphans of checks are adopted by it rather
/// than by init. Without it, escaped processes are found through their token alone.
pub fn become_subreaper() {
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// The children of this process (adopted orphans included), from
/// `/proc/self/task/*/children`, else by scanning `/proc` for our parent id.
pub fn children() -> Vec<u32> {
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
    pids.into_iter().collect()
}

/// Reaps `pid`, a child of this process, if it has died (a zombie); never blocks.
pub fn reap_if_dead(pid: u32) {
    if state(pid) == Some('Z') {
        use nix::sys::wait::{WaitPidFlag, waitpid};
        use nix::unistd::Pid;
        if let Ok(raw) = i32::try_from(pid) {
            let _ = waitpid(Pid::from_raw(raw), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Every process id on the system.
pub fn all_pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
}

/// Fields of `/proc/<pid>/stat` after the command name (which may hold spaces).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// The process state letter (`R`, `S`, `Z`, …).
pub fn state(pid: u32) -> Option<char> {
    stat_fields(pid)?.first()?.chars().next()
}

fn parent(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}

/// Whether `pid` exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    state(pid).is_some_and(live_state)
}

/// A state letter of a process that still runs (not a zombie, not dead).
fn live_state(state: char) -> bool {
    state != 'Z' && state != 'X'
}

/// The live members of process group `pgid`, sorted by pid: one read of each
/// process's `stat` gives both its group and its state.
fn live_members_of_group(pgid: u32) -> Vec<Leaked> {
    super::with_command_lines(all_pids().filter(|pid| {
        stat_fields(*pid).is_some_and(|fields| {
            let live = fields
                .first()
                .and_then(|s| s.chars().next())
                .is_some_and(live_state);
            live && fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
        })
    }))
}

/// The value of `name` in `pid`'s environment, if it is readable and set.
pub fn environ_var(pid: u32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{name}=");
    environ
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

/// The command line of `pid`, arguments joined by spaces. A process that is exiting
/// has an empty command line; then its name is given in brackets, as `ps` does.
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

/// How many process groups the watchdog can list at once; more than that many checks
/// running at once are not watched (each still has its own timeout).
const SLOTS: usize = 4096;

/// Forks the watchdog (see `run::watchdog`): its process id, and the write end of the
/// pipe it reads the groups to kill from.
pub fn start_watchdog() -> Option<(u32, std::fs::File)> {
    use nix::fcntl::OFlag;
    use nix::unistd::{ForkResult, fork, pipe2};
    use std::os::fd::AsRawFd;

    let (read, write) = pipe2(OFlag::O_CLOEXEC).ok()?;
    // SAFETY: the child calls only async-signal-safe system calls (see `serve`) and
    // never returns to Rust code that could allocate or take a lock.
    match unsafe { fork() }.ok()? {
        ForkResult::Child => serve(read.as_raw_fd()),
        ForkResult::Parent { child } => {
            drop(read);
            Some((
                u32::try_from(child.as_raw()).ok()?,
                std::fs::File::from(write),
            ))
        }
    }
}

/// The watchdog's whole life, in the forked child: only raw system calls, no allocation.
fn serve(fd: std::os::fd::RawFd) -> ! {
    use nix::libc;
    // SAFETY: plain system calls on this process's own descriptors and signals.
    unsafe {
        libc::setsid();
        for signal in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
            libc::SIGUSR1,
            libc::SIGUSR2,
        ] {
            libc::signal(signal, libc::SIG_IGN);
        }
        // Nothing of the tool's is held open here (its output, the checks' pipes): only
        // the read end, as standard input.
        if fd != 0 {
            libc::dup2(fd, 0);
        }
        if libc::syscall(libc::SYS_close_range, 1u32, u32::MAX, 0u32) != 0 {
            for open in 1..65_536 {
                libc::close(open);
            }
        }
    }
    let mut live = [0i32; SLOTS];
    let mut buffer = [0u8; 5 * 64];
    let mut have = 0usize;
    loop {
        let free = &mut buffer[have..];
        // SAFETY: reads into the free part of a buffer this function owns.
        let read = unsafe { libc::read(0, free.as_mut_ptr().cast(), free.len()) };
        if read < 0 {
            if nix::errno::Errno::last() == nix::errno::Errno::EINTR {
                continue;
            }
            break;
        }
        if read == 0 {
            break;
        }
        have += read.unsigned_abs();
        let mut at = 0;
        while have - at >= 5 {
            let pgid = i32::from_le_bytes([
                buffer[at + 1],
                buffer[at + 2],
                buffer[at + 3],
                buffer[at + 4],
            ]);
            match buffer[at] {
                b'+' => {
                    if let Some(slot) = live.iter_mut().find(|slot| **slot == 0) {
                        *slot = pgid;
                    }
                }
                _ => {
                    if let Some(slot) = live.iter_mut().find(|slot| **slot == pgid) {
                        *slot = 0;
                    }
                }
            }
            at += 5;
        }
        buffer.copy_within(at..have, 0);
        have -= at;
    }
    for pgid in live {
        if pgid > 0 {
            // SAFETY: a signal to a process group this tool started.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
    // SAFETY: ends this process without running anything of the tool's.
    unsafe { libc::_exit(0) }
}

/// Orphans of checks are adopted by the tool (a subreaper): its children are candidates.
pub const ADOPTS_ORPHANS: bool = true;
