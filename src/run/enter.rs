//! Entering an environment from a machine that is not it (`enter:`): the tool runs
//! itself inside — `run --env NAME` through the environment's way in — and that inner
//! run is the supervisor of every check there: it owns the checks' process groups, their
//! timeouts, grace and leak detection, and answers the signals the outer run passes on.
//! It writes its results into the repository's folder, which the way in must bind at
//! the same path, so they come home however the environment ends.
//!
//! The outer run starts the way in in a process group of its own, listed with the
//! watchdog (a killed outer run takes it along), passes an interrupt on as SIGTERM
//! (and a second one as SIGKILL), and keeps the last of what it said on stderr: a way
//! in that fails before the inner run writes anything (a program that is not there, a
//! sandbox that cannot start) leaves that as the reason the environment is blocked.

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncBufReadExt as _;

use super::platform::{self, Signal};
use super::process::StopReceiver;
use super::watchdog::Watchdog;
use crate::manifest::{Enter, REPO_PLACEHOLDER};

/// The variable that tells the inner run it is inside `NAME` already.
pub const ENTERED_VAR: &str = "VERIFY_MATRIX_ENTERED";

/// How long what holds the way in's stderr after it ended may go on writing.
const DRAIN: Duration = Duration::from_secs(2);

/// How much of what the way in said on stderr is kept for the reason it failed.
const STDERR_KEPT: usize = 4096;

/// Whether an environment with `enter` must be entered from here: not when this
/// process is the run inside it.
pub fn must_enter(name: &str) -> bool {
    std::env::var(ENTERED_VAR).ok().as_deref() != Some(name)
}

/// How the way in ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entered {
    /// The way in's exit code (the inner run's, when it ran; 128+N for signal N).
    pub exit_code: i32,
    /// The last of what it said on stderr.
    pub stderr_tail: String,
}

/// The words that enter `enter` and run `program args…` inside, `{repo}` replaced by
/// `repo`.
pub fn argv(enter: &Enter, repo: &Path, program: &Path, args: &[OsString]) -> Vec<OsString> {
    let Enter::Command(words) = enter;
    let repo = repo.to_string_lossy();
    let mut argv: Vec<OsString> = words
        .iter()
        .map(|w| OsString::from(w.replace(REPO_PLACEHOLDER, &repo)))
        .collect();
    argv.push(program.as_os_str().to_owned());
    argv.extend(args.iter().cloned());
    argv
}

/// Runs `argv` (from [`argv`]) for environment `name`, each line of its stderr given to
/// `say` as it comes; an interrupt on `stop` is passed on as SIGTERM, and SIGKILL after
/// `grace` or at a second request. `Err` when it cannot be started at all (its reason,
/// as the system said it).
pub async fn run(
    argv: &[OsString],
    name: &str,
    mut stop: StopReceiver,
    grace: Duration,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Entered, String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("the way in is empty".to_owned());
    };
    let mut command = tokio::process::Command::new(program);
    platform::isolate(&mut command, None);
    platform::set_args(&mut command, args, false);
    command
        .env(ENTERED_VAR, name)
        .stdin(Stdio::null())
        // The inner run's table: the outer run prints its own, with every environment.
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| {
        format!(
            "`{}` cannot be started: {}",
            program.to_string_lossy(),
            describe(&e)
        )
    })?;
    platform::adopt(&child);
    let group = child.id();
    let _watched = group.and_then(|pid| Some(Watchdog::get()?.watch(pid)));
    let stderr = child.stderr.take();
    // Once the way in has ended, what is still holding its stderr (a daemon it left)
    // gets a moment to finish its lines, not forever.
    let (ended, drained) = tokio::sync::oneshot::channel::<()>();
    let reading = async {
        let mut kept = String::new();
        let Some(stderr) = stderr else { return kept };
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        let drained = async {
            let _ = drained.await;
            tokio::time::sleep(DRAIN).await;
        };
        tokio::pin!(drained);
        loop {
            tokio::select! {
                line = lines.next_line() => {
                    let Ok(Some(line)) = line else { break };
                    say(&line);
                    kept.push_str(&line);
                    kept.push('\n');
                    if kept.len() > 2 * STDERR_KEPT {
                        keep_last(&mut kept);
                    }
                }
                () = &mut drained => break,
            }
        }
        kept
    };
    let waiting = async {
        let mut asked = 0u8;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status,
                changed = stop.changed(), if asked < 2 => {
                    let immediate = changed.is_err() || stop.borrow().is_some_and(|s| s.immediate);
                    asked = if immediate || asked == 1 { 2 } else { 1 };
                    if asked == 2 {
                        platform::signal_group(group, Signal::Kill);
                    } else {
                        ask_to_stop(group);
                    }
                }
                _ = tokio::time::sleep(grace), if asked == 1 => {
                    asked = 2;
                    platform::signal_group(group, Signal::Kill);
                }
            }
        };
        let _ = ended.send(());
        status
    };
    let (mut stderr_tail, status) = tokio::join!(reading, waiting);
    // Whatever the way in left behind in its group goes with it.
    platform::signal_group(group, Signal::Kill);
    if let Some(pid) = group {
        platform::release(pid);
    }
    let status = status.map_err(|e| format!("waiting for the way in: {e}"))?;
    keep_last(&mut stderr_tail);
    Ok(Entered {
        exit_code: platform::exit_code_of(status),
        stderr_tail,
    })
}

/// Asks what runs inside to stop (SIGTERM): every process of the way in's group but
/// the way in itself, which ends when the run inside has written its results and
/// ended (a sandbox that kills its child when it dies, as `bwrap --die-with-parent`
/// does, would otherwise end the run inside before it wrote them). Where the group's
/// members cannot be listed, the whole group.
fn ask_to_stop(group: Option<u32>) {
    let Some(leader) = group else { return };
    let inside: Vec<u32> = platform::group_members(group)
        .into_iter()
        .map(|p| p.pid)
        .filter(|pid| *pid != leader)
        .collect();
    if inside.is_empty() {
        platform::signal_group(group, Signal::Term);
    }
    for pid in inside {
        platform::signal_process(pid, Signal::Term);
    }
}

/// `text` cut to its last [`STDERR_KEPT`] bytes (at a character's start).
fn keep_last(text: &mut String) {
    if text.len() <= STDERR_KEPT {
        return;
    }
    let cut = (text.len() - STDERR_KEPT..text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    text.drain(..cut);
}

/// A start failure as people read it.
fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such program".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    }
}
