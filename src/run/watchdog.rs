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

fn start() -> Option<Watchdog> {
    let (pid, pipe) = crate::run::platform::start_watchdog()?;
    Some(Watchdog {
        pid,
        pipe: Mutex::new(pipe),
    })
}
