//! What a run owns for its lifetime, as a test runner owns its signal handler: the async
//! runtime, the subreaper, and the signals that stop it. `run` and `exec` both work
//! inside a [`Session`].

use std::future::Future;

use tokio::sync::watch;

use super::leaks::become_subreaper;
use super::platform::Signals;
use super::process::{Stop, StopReason, StopReceiver};
use crate::results::cause::signal_name;

/// The async runtime of running and publishing: one thread, as the work is waiting on
/// processes, pipes and the network.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// A signal that arrived, as the session reports it to its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupt {
    /// The signal number (2 SIGINT, 15 SIGTERM, 1 SIGHUP).
    pub signal: i32,
    /// How many stopping signals have arrived, this one included.
    pub count: u32,
}

impl Interrupt {
    /// What the signal does, for people: `SIGINT: stopping the running checks …`.
    pub fn describe(&self) -> String {
        format!(
            "{}: {}",
            signal_name(self.signal),
            if self.count == 1 {
                "stopping the running checks (again to kill them at once)"
            } else {
                "killing the running checks"
            }
        )
    }
}

/// The runtime, with this process made the subreaper of what it starts, and a stop
/// channel the signals feed.
pub struct Session {
    runtime: tokio::runtime::Runtime,
    stop: watch::Receiver<Option<Stop>>,
    sender: Option<watch::Sender<Option<Stop>>>,
}

impl Session {
    /// Starts the runtime and becomes the subreaper (Linux).
    pub fn start() -> std::io::Result<Session> {
        let runtime = runtime()?;
        become_subreaper();
        let (sender, stop) = watch::channel(None);
        Ok(Session {
            runtime,
            stop,
            sender: Some(sender),
        })
    }

    /// The receiver of this session's stop requests, for the work to watch.
    pub fn stop(&self) -> StopReceiver {
        self.stop.clone()
    }

    /// Runs `work` to completion with SIGINT, SIGTERM and SIGHUP (what GitHub Actions
    /// sends on cancel) turned into stop requests: the first with the grace period, the
    /// next at once. `on_signal` hears of each signal as it arrives. The signals are
    /// registered before `work` starts, so none can kill the tool the default way.
    pub fn block_on<T>(
        &mut self,
        on_signal: impl Fn(Interrupt) + Send + 'static,
        work: impl Future<Output = T>,
    ) -> T {
        let sender = self.sender.take();
        self.runtime.block_on(async move {
            if let Some(sender) = sender {
                let signals = Signals::new();
                tokio::spawn(forward(signals, sender, on_signal));
            }
            work.await
        })
    }

    /// Whether a signal stopped the work.
    pub fn interrupted(&self) -> bool {
        matches!(
            *self.stop.borrow(),
            Some(Stop {
                reason: StopReason::Interrupted(_),
                ..
            })
        )
    }
}

/// When this run was entered by another (`VERIFY_MATRIX_LINK=stdin`), what fires as
/// its stdin, the link to that run, closes.
fn linked() -> Option<tokio::sync::oneshot::Receiver<()>> {
    use std::io::Read as _;
    if std::env::var_os(super::enter::LINK_VAR).as_deref() != Some("stdin".as_ref()) {
        return None;
    }
    let (closed, receiver) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 512];
        while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
        let _ = closed.send(());
    });
    Some(receiver)
}

async fn forward(
    mut signals: Signals,
    stop: watch::Sender<Option<Stop>>,
    on_signal: impl Fn(Interrupt),
) {
    let mut count = 0;
    let link = linked();
    let mut link_open = link.is_some();
    let link_closed = async {
        if let Some(link) = link {
            let _ = link.await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::pin!(link_closed);
    loop {
        let signal = tokio::select! {
            signal = signals.next() => match signal {
                Some(signal) => signal,
                None => break,
            },
            // The run that entered this environment closed the link: a hangup.
            () = &mut link_closed, if link_open => {
                link_open = false;
                1
            }
        };
        count += 1;
        // The stop first: saying so may fail (a closed stderr), the stop must not.
        let _ = stop.send(Some(Stop {
            reason: StopReason::Interrupted(signal),
            immediate: count > 1,
        }));
        on_signal(Interrupt { signal, count });
    }
}
