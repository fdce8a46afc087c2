//! The checks die with the tool, however it dies (even by SIGKILL, which no handler sees).
//!
//! On Linux one small process, forked once when the first check starts, watches the
//! tool: it holds the read end of a pipe whose only write end is the tool's, and the
//! tool tells it the process group of every check as it starts (`+`) and once it is gone
//! (`-`). When the tool dies the kernel closes the write end; the watchdog reads end of
//! file, sends SIGKILL to every group still listed, and exits. It ignores the signals
//! that stop the tool (an interrupt of the terminal's process group, a SIGTERM) and
//! leads its own session, so that a signal to the tool's group does not reach it.
//!
//! This takes the place of a parent-death signal set in each check's child between fork
//! and exec: that hook forces a full `fork` of the tool for every check (whose cost
//! grows with the tool's memory), where without it the check is started by
//! `posix_spawn`, whose cost stays flat. It also reaches the whole group, not only the
//! main process. When the watchdog cannot be started, each check gets the parent-death
//! signal instead ([`Watchdog::get`] returns `None`).

use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// How many process groups the watchdog can list at once; more than that many checks
/// running at once are not watched (each still has its own timeout).
const SLOTS: usize = 4096;

/// The tool's end of the watchdog.
pub struct Watchdog {
    pid: u32,
    pipe: Mutex<std::fs::File>,
}

static WATCHDOG: OnceLock<Option<Watchdog>> = OnceLock::new();

impl Watchdog {
    /// The running watchdog, started on first use; `None` when it could not be started
    /// (or off Linux).
    pub fn get() -> Option<&'static Watchdog> {
        WATCHDOG.get_or_init(start).as_ref()
    }

    /// The watchdog's process id, if it was started: it is the tool's own child, never
    /// a process a check left behind.
    pub fn pid() -> Option<u32> {
        WATCHDOG.get()?.as_ref().map(|w| w.pid)
    }

    /// Lists the process group `pgid` until the returned guard is dropped.
    pub fn watch(&'static self, pgid: u32) -> Watched {
        self.send(b'+', pgid);
        Watched {
            watchdog: self,
            pgid,
        }
    }

    fn send(&self, op: u8, pgid: u32) {
        let Ok(pgid) = i32::try_from(pgid) else {
            return;
        };
        let mut message = [op, 0, 0, 0, 0];
        message[1..].copy_from_slice(&pgid.to_le_bytes());
        // Five bytes are written at once (less than PIPE_BUF). A watchdog that is gone
        // cannot be helped: the check still has its timeout and the next start's sweep.
        let mut pipe = self.pipe.lock().unwrap_or_else(|e| e.into_inner());
        let _ = pipe.write_all(&message);
    }
}

/// A process group listed with the watchdog; dropping it takes it off the list.
pub struct Watched {
    watchdog: &'static Watchdog,
    pgid: u32,
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.watchdog.send(b'-', self.pgid);
    }
}

#[cfg(target_os = "linux")]
fn start() -> Option<Watchdog> {
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
            Some(Watchdog {
                pid: u32::try_from(child.as_raw()).ok()?,
                pipe: Mutex::new(std::fs::File::from(write)),
            })
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn start() -> Option<Watchdog> {
    None
}

/// The watchdog's whole life, in the forked child: only raw system calls, no allocation.
#[cfg(target_os = "linux")]
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
