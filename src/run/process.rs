//! Running one command as a verification worker: its own process group, stdin closed,
//! stdout and stderr interleaved through one pipe into the log file (never held in
//! memory), a timeout that terminates the whole group (SIGTERM, grace, SIGKILL), and a
//! look at what is left of the group once the main process has exited.

use crate::untrusted::redacting::{Masks, RedactingWriter};
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::manifest::Gate;
use crate::results::Leaked;

use super::argv::Argv;
use super::effect::{self, Assessment};
use super::leaks::{self, Running};
use super::platform::{self, Signal};
use super::watchdog::Watchdog;

/// Exit code recorded for a command killed by its timeout (as coreutils' `timeout`).
pub const TIMEOUT_EXIT: i32 = 124;
/// Exit code recorded when the program does not exist (as shells do).
pub const NOT_FOUND_EXIT: i32 = 127;
/// Exit code recorded when the program cannot be executed (as shells do).
pub const NOT_EXECUTABLE_EXIT: i32 = 126;

/// Variables of this process that checks never inherit unless the manifest sets them:
/// the tokens the tool itself publishes with (`publish`, `report`: GitHub's and
/// GitLab's), and the mark of a run inside an entered environment (a check's own run of
/// the tool enters afresh).
pub const HIDDEN_FROM_CHECKS: &[&str] = &[
    "GITHUB_TOKEN",
    "GITLAB_TOKEN",
    super::enter::ENTERED_VAR,
    super::enter::LINK_VAR,
];

/// How long to wait for the output pipe to close after the process group is gone.
const PIPE_DRAIN: Duration = Duration::from_secs(2);

/// Why a run stops its running checks early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The whole-run timeout expired.
    RunTimeout,
    /// SIGINT, SIGTERM or SIGHUP (the signal number).
    Interrupted(i32),
}

/// A request to stop: `immediate` skips the grace period (a second signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    pub reason: StopReason,
    pub immediate: bool,
}

/// Receives stop requests; `None` until one is made.
pub type StopReceiver = watch::Receiver<Option<Stop>>;

/// Where a check's output is also copied as it arrives (a live view for people), besides
/// its log file.
#[derive(Clone)]
pub struct Echo(pub std::sync::Arc<std::sync::Mutex<dyn Write + Send>>);

impl std::fmt::Debug for Echo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Echo")
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    pub argv: Argv,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub timeout: Duration,
    pub grace: Duration,
    pub log_path: PathBuf,
    /// Append to the log (a retry) instead of starting it afresh.
    pub append: bool,
    /// Also copy the output here as it arrives.
    pub echo: Option<Echo>,
    /// Where the execution's token is appended once it starts, so that a later run can
    /// find what a killed run left behind.
    pub running: Option<PathBuf>,
    /// The run's secrets: the output is redacted with them before the log (and the
    /// echo) gets it.
    pub masks: Masks,
    /// The gate whose effectiveness is read from the output, beside the write (the
    /// execution's `assessment`), instead of from the log once the check is over.
    pub scan: Option<Gate>,
}

/// What happened.
#[derive(Debug, Clone, Default)]
pub struct Execution {
    /// The exit code; 128+N for signal N; 124 on timeout; 126/127 when it could not start.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Set when the run stopped this command before it finished.
    pub stopped: Option<StopReason>,
    /// Set when the command could not be started.
    pub spawn_error: Option<String>,
    /// Processes of the check still alive after its main process exited (now killed).
    pub leaked: Vec<Leaked>,
    /// Something kept the output pipe open after every known process was gone.
    pub pipe_held: bool,
    pub duration: Duration,
    /// The gate's effectiveness read from the whole output as it was written (with
    /// `Spec::scan`, when the copy ended).
    pub assessment: Option<Assessment>,
}

/// Runs `spec` to completion (or until `stop` says so); I/O errors are the tool's own
/// (the log cannot be written).
pub async fn execute(spec: &Spec, stop: &mut StopReceiver) -> io::Result<Execution> {
    let mut log = open_log(spec)?;
    let started = Instant::now();
    let (reader, writer) = io::pipe()?;
    platform::widen(&reader);
    let token = leaks::new_token();
    let mut command = command(spec, &token, writer)?;
    if let Some(running) = &spec.running {
        record_token(running, &token)?;
    }

    let spawned = command.spawn();
    // Listed with the watchdog before anything else, so that the tool killed in the
    // instant after the spawn still takes the check with it; listed until the group is
    // gone and every leak is killed (the guard's drop).
    let _watched = spawned
        .as_ref()
        .ok()
        .and_then(tokio::process::Child::id)
        .and_then(|pid| Some(Watchdog::get()?.watch(pid)));
    // The Command holds our copies of the pipe's write end: drop them, so that EOF
    // comes when the last process of the check closes its copy.
    drop(command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let message = spawn_error_message(spec, &e);
            writeln!(log, "cargo-verify-matrix: {message}")?;
            return Ok(Execution {
                exit_code: Some(spawn_error_code(&e)),
                spawn_error: Some(message),
                duration: started.elapsed(),
                ..Execution::default()
            });
        }
    };
    let pgid = child.id();
    if let Some(pid) = pgid {
        Running::add(pid);
    }
    // Windows: the check's job, closed (killing what is left in it) when this returns.
    platform::adopt(&child);
    let _job = pgid.map(Release);
    let echo = spec.echo.clone();
    let masks = spec.masks.clone();
    // The scan reads the blocks the log gets, on a thread of its own, as they come.
    let (blocks, scan) = match spec.scan {
        Some(gate) => {
            let (sender, receiver) = std::sync::mpsc::sync_channel(SCAN_BLOCKS);
            let scan = tokio::task::spawn_blocking(move || {
                effect::assess_reader(gate, effect::BlockReader::new(receiver))
            });
            (Some(sender), Some(scan))
        }
        None => (None, None),
    };
    let copier = tokio::task::spawn_blocking(move || {
        copy_to_log(
            reader,
            Tee {
                log,
                echo,
                scan: blocks,
            },
            masks,
        )
    });

    let mut execution = Execution::default();
    let outcome = tokio::select! {
        status = child.wait() => Ok(status),
        _ = tokio::time::sleep(spec.timeout) => Err(None),
        request = stop_requested(stop) => Err(Some(request)),
    };
    let status = match outcome {
        Ok(status) => status,
        Err(request) => {
            execution.timed_out = request.is_none();
            execution.stopped = request.map(|r| r.reason);
            let grace = match request {
                Some(Stop {
                    immediate: true, ..
                }) => Duration::ZERO,
                _ => spec.grace,
            };
            terminate_group(pgid, &mut child, grace, stop).await
        }
    };
    if let Some(pid) = pgid {
        Running::remove(pid);
    }
    let status = status?;
    execution.exit_code = Some(if execution.timed_out {
        TIMEOUT_EXIT
    } else {
        exit_code_of(status)
    });

    let leaked = clean_up(pgid, &token, spec.grace).await;
    if execution.stopped.is_none() && !execution.timed_out {
        execution.leaked = leaked;
    }
    match tokio::time::timeout(PIPE_DRAIN, copier).await {
        // The copy's own I/O error (an unwritable log) is the tool's error.
        Ok(joined) => {
            joined.map_err(io::Error::other)??;
        }
        // An escaped process still holds the pipe: the copier thread is left to end
        // when that process does; what it already wrote is in the log.
        Err(_) => execution.pipe_held = true,
    }
    // The copy is over, its sender dropped: the scan ends with the output's last block.
    if let Some(scan) = scan
        && !execution.pipe_held
    {
        execution.assessment = scan.await.ok();
    }
    execution.duration = started.elapsed();
    Ok(execution)
}

/// Lets go of what [`platform::adopt`] holds for a check, once it is over.
struct Release(u32);

impl Drop for Release {
    fn drop(&mut self) {
        platform::release(self.0);
    }
}

/// The command of `spec`: its own process group, stdout and stderr into `writer`, no
/// stdin, the hidden variables removed and the leak token set.
fn command(
    spec: &Spec,
    token: &str,
    writer: io::PipeWriter,
) -> io::Result<tokio::process::Command> {
    let path = spec
        .env
        .get("PATH")
        .map(OsString::from)
        .or_else(|| std::env::var_os("PATH"));
    let found = spec
        .argv
        .shell
        .then(|| on_path(&spec.argv.program, path.as_deref()))
        .flatten();
    let mut command = match &found {
        Some(found) => tokio::process::Command::new(found),
        None => tokio::process::Command::new(&spec.argv.program),
    };
    // Searched here, the shell is still named as the check wrote it (`bash: line 1: …`).
    platform::isolate(&mut command, found.is_some().then_some(&*spec.argv.program));
    for name in HIDDEN_FROM_CHECKS {
        command.env_remove(name);
    }
    platform::set_args(&mut command, &spec.argv.args, spec.argv.cmd_exe);
    command
        .current_dir(&spec.cwd)
        // The manifest's own variables may set a hidden one again: it asked for it.
        .envs(&spec.env)
        .env(leaks::TOKEN_VAR, token)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .kill_on_drop(true);
    // The watchdog kills the check's group if this process dies; without it, the
    // check's main process gets a parent-death signal (which costs a full fork).
    if Watchdog::get().is_none() {
        platform::die_with_this_process(&mut command);
    }
    Ok(command)
}

/// Where `program` is on `path`, as `execvp` would find it (the first entry holding an
/// executable file of that name), remembered for the run: each check's own search
/// costs one failed `execve` per entry before the right one. `None` leaves the search
/// to the check: a name with a slash, no `PATH`, a relative entry (found from the
/// check's own folder), or nothing found (the check then fails as it would have).
fn on_path(program: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    type Found = HashMap<(OsString, OsString), Option<PathBuf>>;
    static FOUND: OnceLock<Mutex<Found>> = OnceLock::new();
    let path = path?;
    if Path::new(program).components().count() != 1 {
        return None;
    }
    let key = (program.to_owned(), path.to_owned());
    let mut found = FOUND.get_or_init(Default::default).lock().ok()?;
    found
        .entry(key)
        .or_insert_with(|| {
            let dirs: Vec<PathBuf> = std::env::split_paths(path).collect();
            if dirs.iter().any(|d| !d.is_absolute()) {
                return None;
            }
            dirs.iter()
                .find_map(|dir| platform::executable_in(dir, program))
                .or_else(|| platform::shell_fallback(program))
        })
        .clone()
}

/// Kills whatever is left of a check, which outlived it: first its process group, then
/// what escaped the group (re-parented to this process, the subreaper, once the group's
/// intermediate processes are gone). Returns what was left, one entry per pid.
async fn clean_up(pgid: Option<u32>, token: &str, grace: Duration) -> Vec<Leaked> {
    let in_group = group_members(pgid);
    if !in_group.is_empty() {
        kill_group_and_wait(pgid, grace).await;
    }
    let escaped = leaks::escaped(token);
    leaks::kill(&escaped, grace).await;
    leaks::reap_adopted();
    // A process seen in the group may have escaped it since (`setsid` execs in place):
    // one entry per pid, with its latest command line.
    let mut leaked = in_group;
    for leak in escaped {
        match leaked.iter_mut().find(|l| l.pid == leak.pid) {
            Some(seen) => *seen = leak,
            None => leaked.push(leak),
        }
    }
    leaked
}

/// Appends `token` to the environment's list of running executions.
fn record_token(running: &std::path::Path, token: &str) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(running)?;
    writeln!(file, "{token}")
}

/// Resolves when a stop is requested (immediately if one already was).
async fn stop_requested(stop: &mut StopReceiver) -> Stop {
    loop {
        if let Some(request) = *stop.borrow_and_update() {
            return request;
        }
        if stop.changed().await.is_err() {
            // The sender is gone: nobody can ask to stop any more.
            std::future::pending::<()>().await;
        }
    }
}

fn spawn_error_code(e: &io::Error) -> i32 {
    match e.kind() {
        io::ErrorKind::PermissionDenied => NOT_EXECUTABLE_EXIT,
        _ => NOT_FOUND_EXIT,
    }
}

fn spawn_error_message(spec: &Spec, e: &io::Error) -> String {
    let program = spec.argv.program.to_string_lossy();
    match e.kind() {
        io::ErrorKind::NotFound if !spec.cwd.is_dir() => {
            format!("working directory `{}` does not exist", spec.cwd.display())
        }
        io::ErrorKind::NotFound => format!("command not found: {program}"),
        io::ErrorKind::PermissionDenied => format!("permission denied: {program}"),
        _ => format!("could not start {program}: {e}"),
    }
}

fn open_log(spec: &Spec) -> io::Result<File> {
    if let Some(dir) = spec.log_path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(spec.append)
        .truncate(!spec.append)
        .open(&spec.log_path)
}

/// Copies the pipe into the log in fixed chunks through the redacting writer, so
/// memory stays flat however much the command prints and no secret reaches the disk;
/// what was read is written before the copy ends, even if it is abandoned. A failing
/// echo (a closed terminal) never fails the log; the echo gets the redacted output too.
fn copy_to_log(mut reader: io::PipeReader, tee: Tee, masks: Masks) -> io::Result<()> {
    let mut out = RedactingWriter::new(tee, masks);
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return out.finish().map(|_| ()),
            Ok(n) => out.write_all(&buf[..n])?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                out.finish()?;
                return Err(e);
            }
        }
    }
}

/// The log, the live echo beside it, and the scan reading what the log gets.
struct Tee {
    log: File,
    echo: Option<Echo>,
    scan: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
}

/// The blocks written and not yet scanned, at most (the scan keeps up, or the write
/// waits for it: memory stays flat).
const SCAN_BLOCKS: usize = 8;

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.log.write_all(buf)?;
        if let Some(scan) = &self.scan
            && scan.send(buf.to_vec()).is_err()
        {
            // The scan is gone: the log is read once the check is over instead.
            self.scan = None;
        }
        if let Some(echo) = &self.echo
            && let Ok(mut out) = echo.0.lock()
        {
            let _ = out.write_all(buf).and_then(|()| out.flush());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.log.flush()
    }
}

/// The exit code of `status`: a signal N is reported as 128+N, as shells do; on Windows
/// the code as the system reports it (an NTSTATUS such as `0xC000013A`, a Ctrl-Break,
/// reads as the negative number it is as an `i32`).
pub fn exit_code_of(status: ExitStatus) -> i32 {
    platform::exit_code_of(status)
}

/// SIGTERM to the group, up to `grace` for the main process to exit (cut short by an
/// immediate stop request), then SIGKILL; returns the main process's status.
async fn terminate_group(
    pgid: Option<u32>,
    child: &mut tokio::process::Child,
    grace: Duration,
    stop: &mut StopReceiver,
) -> io::Result<ExitStatus> {
    signal_group(pgid, Signal::Term);
    let immediate = async {
        loop {
            if stop_requested(stop).await.immediate {
                return;
            }
            if stop.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    };
    let exited = tokio::select! {
        status = child.wait() => Some(status?),
        _ = tokio::time::sleep(grace) => None,
        _ = immediate => None,
    };
    if let Some(status) = exited {
        // The shell may have gone while others of its group ignore SIGTERM.
        kill_group_and_wait(pgid, grace).await;
        return Ok(status);
    }
    signal_group(pgid, Signal::Kill);
    // Where process groups cannot be signalled (Windows), at least the main process goes.
    let _ = child.start_kill();
    let status = child.wait().await?;
    kill_group_and_wait(pgid, Duration::ZERO).await;
    Ok(status)
}

/// Terminates whatever remains of the group: SIGTERM, up to `grace`, SIGKILL.
async fn kill_group_and_wait(pgid: Option<u32>, grace: Duration) {
    if group_members(pgid).is_empty() {
        return;
    }
    signal_group(pgid, Signal::Term);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if group_members(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    signal_group(pgid, Signal::Kill);
    // SIGKILL cannot be ignored; give the kernel a moment to finish the deaths.
    for _ in 0..100 {
        if group_members(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn signal_group(pgid: Option<u32>, signal: Signal) {
    platform::signal_group(pgid, signal);
}

/// The live members of the check's process group (Windows: of its job).
pub fn group_members(pgid: Option<u32>) -> Vec<Leaked> {
    platform::group_members(pgid)
}
