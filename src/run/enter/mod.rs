//! Entering an environment from a machine that is not it (`enter:`): the tool runs
//! itself inside — `run --env NAME` through the environment's way in — and that inner
//! run is the supervisor of every check there: it owns the checks' process groups, their
//! timeouts, grace and leak detection, and answers the signals the outer run passes on.
//! It writes its results into the repository's folder, which the way in binds at the
//! same path (a container, a dev container, a Compose service, a `command`), or which
//! is copied to the remote host and whose results are brought back (`ssh`).
//!
//! The outer run starts the way in in a process group of its own, listed with the
//! watchdog (a killed outer run takes it along), and holds the inner run's stdin: the
//! inner run stops its checks (as at SIGHUP) when that link closes, which is how an
//! interrupt reaches a run no signal of this machine can reach (inside a container, on
//! another host) — and a killed outer run, or a killed engine client, closes it too.
//! A second interrupt kills the way in and removes what it started. What the way in
//! said last on stderr is kept: a way in that fails before the inner run writes anything
//! (a program that is not there, an engine that does not answer, an image that cannot
//! be pulled) leaves that as the reason the environment is blocked.

mod ssh;

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncBufReadExt as _;

use super::platform::{self, Signal};
use super::process::StopReceiver;
use super::watchdog::Watchdog;
use crate::manifest::{Engine, Enter, REPO_PLACEHOLDER};

/// The variable that tells the inner run it is inside `NAME` already.
pub const ENTERED_VAR: &str = "VERIFY_MATRIX_ENTERED";

/// The variable that tells the inner run its stdin is its link to the run that
/// entered it (`stdin`): when the link closes, it stops its checks.
pub const LINK_VAR: &str = "VERIFY_MATRIX_LINK";

/// Where this tool's binary is mounted in a container or a dev container.
pub const PROGRAM_INSIDE: &str = "/opt/cargo-verify-matrix/bin/cargo-verify-matrix";

/// Where a `command` way in finds this tool: a folder of the repository (which every
/// way in must reach), ignored by git through its own `.gitignore`.
pub const TOOL_FOLDER: &str = ".verify-matrix/bin";

/// A copy of `program` at `repo/`[`TOOL_FOLDER`]`/cargo-verify-matrix` (the same
/// folder the ssh way in places it in on the remote): hard-linked where the file system
/// allows, else copied; made under a name of its own and renamed into place, so a run
/// inside never starts half a file, and a run already going keeps its own. The folder
/// ignores itself (`*` in its `.gitignore`), so no `git-clean` check or `git add -A`
/// takes it. Where no way in hides folders (Windows), the tool stays where it is.
pub fn place_in_repo(repo: &Path, program: &Path) -> io::Result<std::path::PathBuf> {
    if cfg!(windows) {
        return Ok(program.to_owned());
    }
    let folder = repo.join(TOOL_FOLDER);
    std::fs::create_dir_all(&folder)?;
    // The folder is the repository's, whatever a link planted there says: nothing is
    // written through one to elsewhere.
    let (real, root) = (folder.canonicalize()?, repo.canonicalize()?);
    if !real.starts_with(&root) || real != root.join(TOOL_FOLDER) {
        return Err(io::Error::other(format!(
            "`{}` leads to `{}`, not a folder of the repository",
            folder.display(),
            real.display()
        )));
    }
    // Written only where nothing is (a link there included: it is never followed).
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(folder.join(".gitignore"))
        .and_then(|mut file| {
            use std::io::Write as _;
            file.write_all(b"# cargo verify-matrix: its own binary for ways in\n*\n")
        });
    let target = folder.join("cargo-verify-matrix");
    let making = folder.join(format!(".cargo-verify-matrix.{}", std::process::id()));
    let _ = std::fs::remove_file(&making);
    if std::fs::hard_link(program, &making).is_err() {
        std::fs::copy(program, &making)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&making, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    if let Err(e) = std::fs::rename(&making, &target) {
        let _ = std::fs::remove_file(&making);
        return Err(e);
    }
    Ok(target)
}

/// Places the supervisor inside: `$1` must be there and run, else the way in ends with
/// 125 and says why (an image without `/bin/sh` fails before, with the engine's words).
const PLACE: &str = r#"p=$1; shift; if [ ! -x "$p" ]; then echo "the supervisor cannot be placed inside: $p is not there or cannot run" >&2; exit 125; fi; exec "$p" "$@""#;

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

/// The run inside an environment, as this machine sees it.
#[derive(Debug, Clone)]
pub struct Inner<'a> {
    /// The environment's name.
    pub name: &'a str,
    /// The repository's folder, `{repo}`.
    pub repo: &'a Path,
    /// This tool's binary.
    pub program: &'a Path,
    /// The output folder (inside the repository).
    pub out: &'a Path,
    /// The stem of the result's file name (`linux`, `linux@2of4`).
    pub stem: &'a str,
    /// `run`'s arguments after `run` (`--env NAME …`), paths as on this machine.
    pub args: &'a [OsString],
    /// A word that makes this run's container names its own.
    pub tag: &'a str,
}

impl Inner<'_> {
    /// The files of this run's result in the output folder: the result and its journal.
    pub fn result_files(&self) -> [std::path::PathBuf; 2] {
        let result = super::result_path(self.out, self.stem);
        let journal = crate::results::journal::journal_path(&result);
        [result, journal]
    }
}

/// The commands of a way in: the steps before the run inside, the run inside, and
/// what removes what they started when the run inside had to be killed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WayIn {
    /// Run one after another before the run inside; each must succeed.
    pub setup: Vec<Vec<OsString>>,
    /// The run inside.
    pub argv: Vec<OsString>,
    /// Whether an interrupt is passed to the way in's own processes (a `command` runs
    /// the inner run in its group; an engine's client or ssh does not).
    pub signals_reach_inside: bool,
    /// Run after a killed run inside, to remove what the way in started.
    pub teardown: Vec<Vec<OsString>>,
}

impl WayIn {
    /// The commands that enter `enter` and run `inner` there.
    pub fn new(enter: &Enter, inner: &Inner<'_>) -> Result<WayIn, String> {
        let repo = inner.repo.to_string_lossy().into_owned();
        let program = inner.program.to_string_lossy().into_owned();
        let words = |items: &[&str]| items.iter().map(OsString::from).collect::<Vec<_>>();
        let entered = format!("{ENTERED_VAR}={}", inner.name);
        let link = format!("{LINK_VAR}=stdin");
        let container = format!("verify-matrix-{}-{}", sanitize(inner.name), inner.tag);
        let mounts = || -> Result<Vec<OsString>, String> {
            for path in [&repo, &program] {
                if path.contains(':') || path.contains(',') {
                    return Err(format!(
                        "`{path}` cannot be mounted into a container (its path has `:` or `,`)"
                    ));
                }
            }
            Ok(words(&[
                "--volume",
                &format!("{repo}:{repo}"),
                "--volume",
                &format!("{program}:{PROGRAM_INSIDE}:ro"),
                "--workdir",
                &repo,
                "--env",
                &entered,
                "--env",
                &link,
            ]))
        };
        let supervised = |program: &str| {
            let mut argv = words(&[
                "/bin/sh",
                "-c",
                PLACE,
                "cargo-verify-matrix",
                program,
                "run",
            ]);
            argv.extend(inner.args.iter().cloned());
            argv
        };
        Ok(match enter {
            Enter::Command(words) => {
                let mut argv: Vec<OsString> = words
                    .iter()
                    .map(|w| OsString::from(w.replace(REPO_PLACEHOLDER, &repo)))
                    .collect();
                argv.push(inner.program.as_os_str().to_owned());
                argv.push("run".into());
                argv.extend(inner.args.iter().cloned());
                WayIn {
                    argv,
                    signals_reach_inside: true,
                    ..WayIn::default()
                }
            }
            Enter::Container {
                engine,
                image,
                options,
            } => {
                let mut argv = words(&[
                    engine.program(),
                    "run",
                    "--rm",
                    "--interactive",
                    "--init",
                    "--name",
                    &container,
                ]);
                argv.extend(mounts()?);
                argv.extend(options.iter().map(OsString::from));
                argv.push(image.into());
                argv.extend(supervised(PROGRAM_INSIDE));
                WayIn {
                    argv,
                    teardown: vec![remove(*engine, &container)],
                    ..WayIn::default()
                }
            }
            Enter::Compose {
                engine,
                file,
                service,
            } => {
                let file = inner.repo.join(file).to_string_lossy().into_owned();
                let mut argv = words(&[
                    engine.program(),
                    "compose",
                    "--file",
                    &file,
                    "run",
                    "--rm",
                    "-T",
                    "--name",
                    &container,
                ]);
                argv.extend(mounts()?);
                argv.push(service.into());
                argv.extend(supervised(PROGRAM_INSIDE));
                WayIn {
                    argv,
                    teardown: vec![remove(*engine, &container)],
                    ..WayIn::default()
                }
            }
            Enter::Devcontainer { config } => {
                let config = inner.repo.join(config).to_string_lossy().into_owned();
                mounts()?;
                let at = ["--workspace-folder", &repo, "--config", &config];
                let mut up = words(&["devcontainer", "up"]);
                up.extend(words(&at));
                up.extend(words(&[
                    "--mount",
                    &format!("type=bind,source={repo},target={repo}"),
                    "--mount",
                    &format!("type=bind,source={program},target={PROGRAM_INSIDE}"),
                ]));
                let mut argv = words(&["devcontainer", "exec"]);
                argv.extend(words(&at));
                argv.extend(words(&["--remote-env", &entered, "--remote-env", &link]));
                argv.extend(supervised(PROGRAM_INSIDE));
                WayIn {
                    setup: vec![up],
                    argv,
                    ..WayIn::default()
                }
            }
            Enter::Ssh { .. } => ssh::Remote::new(enter, inner)?.way_in(inner),
        })
    }
}

/// The command that removes container `name`, whatever its state.
fn remove(engine: Engine, name: &str) -> Vec<OsString> {
    [engine.program(), "rm", "--force", name]
        .into_iter()
        .map(OsString::from)
        .collect()
}

/// `name` in the characters a container's name may have.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Enters `enter` and runs `inner` there: the way in's setup, the run inside (each
/// line of its stderr given to `say` as it comes), and for a remote host the results
/// brought home into `inner.out`. An interrupt on `stop` closes the inner run's link
/// (and, where they reach it, SIGTERM to the processes inside); SIGKILL to the way in
/// and its teardown after `grace` or at a second request. `Err` when it cannot be
/// entered at all (the reason, in the words of what failed).
pub async fn enter(
    enter: &Enter,
    inner: &Inner<'_>,
    stop: StopReceiver,
    grace: Duration,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Entered, String> {
    if let Enter::Ssh { .. } = enter {
        let remote = ssh::Remote::new(enter, inner)?;
        remote.send(inner, stop.clone(), say).await?;
        let way = remote.way_in(inner);
        let entered = run(&way, inner.name, stop.clone(), grace, say).await?;
        // What the run there wrote comes home after an interrupt too; only a further
        // one stops the fetch.
        let mut further = stop;
        further.borrow_and_update();
        remote.bring_home(inner, further, say).await?;
        return Ok(entered);
    }
    // A command way in may hide whatever it likes of this machine (`/tmp`, the home
    // folder, where this tool was built), but it must reach the repository: the run
    // inside starts from a copy of this tool there.
    let placed;
    let inner = if let Enter::Command(_) = enter {
        placed = place_in_repo(inner.repo, inner.program).map_err(|e| {
            format!(
                "this tool cannot be placed in the repository for the way in (`{}`): {e}",
                inner.repo.join(TOOL_FOLDER).display()
            )
        })?;
        &Inner {
            program: &placed,
            ..inner.clone()
        }
    } else {
        inner
    };
    let way = WayIn::new(enter, inner)?;
    for step in &way.setup {
        // What it prints may be why it failed (`devcontainer up` says so in JSON).
        let printed = tempfile::tempfile().map_err(|e| format!("a temporary file: {e}"))?;
        let mut done = Step::new(step)
            .stdout(printed.try_clone().map_err(|e| e.to_string())?, 64 << 20)
            .run(stop.clone(), say)
            .await?;
        if done.exit_code != 0 {
            done.said_instead(printed);
            return Err(done.failure(step));
        }
    }
    run(&way, inner.name, stop, grace, say).await
}

/// One command of a way in's setup or teardown.
pub(crate) struct Step<'a> {
    argv: &'a [OsString],
    stdin: Option<std::fs::File>,
    stdout: Option<(std::fs::File, u64)>,
}

/// How a [`Step`] ended.
pub(crate) struct StepDone {
    pub exit_code: i32,
    pub stderr_tail: String,
}

impl StepDone {
    /// Takes what it printed on stdout (`file`) as what it said, when that says why it
    /// failed: the `message` of a JSON line (`{"outcome":"error","message":…}`), else
    /// its last line.
    fn said_instead(&mut self, mut file: std::fs::File) {
        use std::io::{Read as _, Seek as _, SeekFrom};
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let from = len.saturating_sub(STDERR_KEPT as u64);
        let mut text = String::new();
        if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_string(&mut text).is_err() {
            return;
        }
        let last = last_line(&text);
        let said = serde_json::from_str::<serde_json::Value>(last)
            .ok()
            .and_then(|v| v.get("message")?.as_str().map(str::to_owned))
            .unwrap_or_else(|| last.to_owned());
        if !said.is_empty() {
            self.stderr_tail = said;
        }
    }

    /// Why `argv` failed, in its own words.
    pub fn failure(&self, argv: &[OsString]) -> String {
        // The program, and its subcommand when it has one (`devcontainer up`).
        let shown: Vec<String> = argv
            .iter()
            .take(2)
            .map(|w| w.to_string_lossy().into_owned())
            .enumerate()
            .take_while(|(i, w)| *i == 0 || !w.starts_with('-'))
            .map(|(_, w)| w)
            .collect();
        let last = last_words(&self.stderr_tail);
        if last.is_empty() {
            format!("`{}` exited with {}", shown.join(" "), self.exit_code)
        } else {
            format!(
                "`{}` exited with {}: {last}",
                shown.join(" "),
                self.exit_code
            )
        }
    }
}

impl<'a> Step<'a> {
    pub fn new(argv: &'a [OsString]) -> Step<'a> {
        Step {
            argv,
            stdin: None,
            stdout: None,
        }
    }

    /// Feeds it `file` on stdin.
    pub fn stdin(mut self, file: std::fs::File) -> Self {
        self.stdin = Some(file);
        self
    }

    /// Writes its stdout into `file`, at most `limit` bytes: a step that prints more is
    /// killed, and fails.
    pub fn stdout(mut self, file: std::fs::File, limit: u64) -> Self {
        self.stdout = Some((file, limit));
        self
    }

    /// Runs it to its end, or kills it at an interrupt (`Err`).
    pub async fn run(
        self,
        mut stop: StopReceiver,
        say: &(dyn Fn(&str) + Sync),
    ) -> Result<StepDone, String> {
        let Started {
            mut child,
            program,
            group,
            _watched,
        } = spawn(
            self.argv,
            self.stdin.map_or_else(Stdio::null, Stdio::from),
            if self.stdout.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            },
            &[],
        )?;
        let stderr = child.stderr.take();
        let printed = child.stdout.take();
        // Its stdout into the file, bounded: past the limit it is killed.
        let copying = async {
            use std::io::Write as _;
            use tokio::io::AsyncReadExt as _;
            let (Some(mut printed), Some((mut file, limit))) = (printed, self.stdout) else {
                return Ok(());
            };
            let mut buf = vec![0u8; 64 * 1024];
            let mut total = 0u64;
            loop {
                let n = printed.read(&mut buf).await.map_err(|e| e.to_string())?;
                if n == 0 {
                    return file.flush().map_err(|e| e.to_string());
                }
                total += n as u64;
                if total > limit {
                    platform::signal_group(group, Signal::Kill);
                    return Err(format!("`{program}` printed more than {limit} bytes"));
                }
                file.write_all(&buf[..n]).map_err(|e| e.to_string())?;
            }
        };
        let (status, tail, copied) = tokio::select! {
            all = async { tokio::join!(child.wait(), read_stderr(stderr, say, None), copying) } => all,
            _ = stop.changed() => {
                platform::signal_group(group, Signal::Kill);
                let _ = child.wait().await;
                release(group);
                return Err(format!("interrupted while `{program}` ran"));
            }
        };
        platform::signal_group(group, Signal::Kill);
        release(group);
        copied?;
        let status = status.map_err(|e| format!("waiting for `{program}`: {e}"))?;
        Ok(StepDone {
            exit_code: platform::exit_code_of(status),
            stderr_tail: tail,
        })
    }
}

/// A way in's process, started.
struct Started {
    child: tokio::process::Child,
    /// Its program, as people read it.
    program: String,
    /// Its process group.
    group: Option<u32>,
    /// Listed with the watchdog while it runs.
    _watched: Option<super::watchdog::Watched>,
}

/// Starts `argv` in a process group of its own, listed with the watchdog, stderr piped,
/// `env` added to its variables.
fn spawn(
    argv: &[OsString],
    stdin: Stdio,
    stdout: Stdio,
    env: &[(&str, &str)],
) -> Result<Started, String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("the way in is empty".to_owned());
    };
    let shown = program.to_string_lossy().into_owned();
    let mut command = tokio::process::Command::new(program);
    platform::isolate(&mut command, None);
    platform::set_args(&mut command, args, false);
    command
        .envs(env.iter().copied())
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command
        .spawn()
        .map_err(|e| format!("`{shown}` cannot be started: {}", describe(&e)))?;
    platform::adopt(&child);
    let group = child.id();
    Ok(Started {
        child,
        program: shown,
        group,
        _watched: group.and_then(|pid| Some(Watchdog::get()?.watch(pid))),
    })
}

fn release(group: Option<u32>) {
    if let Some(pid) = group {
        platform::release(pid);
    }
}

/// Reads `stderr` line by line, each given to `say`, keeping the last
/// [`STDERR_KEPT`] bytes; once `ended` fires, what still holds it gets [`DRAIN`] to
/// finish its lines, not forever.
async fn read_stderr(
    stderr: Option<tokio::process::ChildStderr>,
    say: &(dyn Fn(&str) + Sync),
    ended: Option<tokio::sync::oneshot::Receiver<()>>,
) -> String {
    let mut kept = String::new();
    let Some(stderr) = stderr else { return kept };
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let drained = async {
        match ended {
            Some(ended) => {
                let _ = ended.await;
                tokio::time::sleep(DRAIN).await;
            }
            None => std::future::pending().await,
        }
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
    keep_last(&mut kept);
    kept
}

/// Runs the way in's run inside for environment `name`: see [`enter`].
pub async fn run(
    way: &WayIn,
    name: &str,
    mut stop: StopReceiver,
    grace: Duration,
    say: &(dyn Fn(&str) + Sync),
) -> Result<Entered, String> {
    let Started {
        mut child,
        group,
        _watched,
        ..
    } = spawn(
        &way.argv,
        // The link: the inner run stops when it closes.
        Stdio::piped(),
        // The inner run's table: the outer run prints its own, with every environment.
        Stdio::null(),
        &[(ENTERED_VAR, name), (LINK_VAR, "stdin")],
    )?;
    let mut link = child.stdin.take();
    let stderr = child.stderr.take();
    let (ended, drained) = tokio::sync::oneshot::channel::<()>();
    let reading = read_stderr(stderr, say, Some(drained));
    let waiting = async {
        let mut asked = 0u8;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status,
                changed = stop.changed(), if asked < 2 => {
                    let immediate = changed.is_err() || stop.borrow().is_some_and(|s| s.immediate);
                    asked = if immediate || asked == 1 { 2 } else { 1 };
                    if asked == 2 {
                        link = None;
                        platform::signal_group(group, Signal::Kill);
                    } else if way.signals_reach_inside {
                        ask_to_stop(group);
                    } else {
                        // Closing the link asks the run inside to stop, wherever it is.
                        link = None;
                    }
                }
                _ = tokio::time::sleep(grace), if asked == 1 => {
                    asked = 2;
                    platform::signal_group(group, Signal::Kill);
                }
            }
        };
        drop(link);
        let _ = ended.send(());
        (status, asked == 2)
    };
    let (stderr_tail, (status, killed)) = tokio::join!(reading, waiting);
    // Whatever the way in left behind in its group goes with it.
    platform::signal_group(group, Signal::Kill);
    release(group);
    if killed {
        // Nothing a killed way in started is left running (a container whose client
        // was killed runs on without it).
        for step in &way.teardown {
            let quiet = |_: &str| {};
            let _ = Step::new(step).run(never_stopped(), &quiet).await;
        }
    }
    let status = status.map_err(|e| format!("waiting for the way in: {e}"))?;
    Ok(Entered {
        exit_code: platform::exit_code_of(status),
        stderr_tail,
    })
}

/// A stop receiver that never fires, for what must run to its end.
fn never_stopped() -> StopReceiver {
    let (sender, receiver) = tokio::sync::watch::channel(None);
    // Kept alive, so the receiver never sees the channel close.
    std::mem::forget(sender);
    receiver
}

/// The most of a way in's own words a reason quotes: enough for an engine's error.
const WORDS_KEPT: usize = 400;

/// What a way in said last (the last line of `stderr` that says something), on one
/// line, cut to 400 bytes: the reason its environment is blocked.
pub fn last_words(stderr: &str) -> String {
    let line = last_line(stderr)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    crate::untrusted::cut(&line, WORDS_KEPT)
}

/// The last line of `text` that says something.
fn last_line(text: &str) -> &str {
    text.trim()
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn inner<'a>(args: &'a [OsString]) -> Inner<'a> {
        Inner {
            name: "debian12",
            repo: Path::new("/work/repo"),
            program: Path::new("/usr/bin/cargo-verify-matrix"),
            out: Path::new("/work/repo/verify-matrix-results"),
            stem: "debian12",
            args,
            tag: "42",
        }
    }

    fn words(argv: &[OsString]) -> Vec<String> {
        argv.iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect()
    }

    const ARGS: [&str; 4] = [
        "--env",
        "debian12",
        "--out",
        "/work/repo/verify-matrix-results",
    ];

    /// The supervisor's words after the way in's own.
    fn supervised(program: &str) -> Vec<String> {
        let mut words: Vec<String> = vec![
            "/bin/sh".into(),
            "-c".into(),
            PLACE.into(),
            "cargo-verify-matrix".into(),
            program.into(),
            "run".into(),
        ];
        words.extend(ARGS.map(String::from));
        words
    }

    #[test]
    fn a_container_mounts_the_repository_and_the_tool_and_is_named_for_its_removal() {
        let args = ARGS.map(OsString::from);
        let enter = Enter::Container {
            engine: Engine::Podman,
            image: "debian:12".into(),
            options: vec!["--network".into(), "none".into()],
        };
        let way = WayIn::new(&enter, &inner(&args)).unwrap();
        let mut expected: Vec<String> = [
            "podman",
            "run",
            "--rm",
            "--interactive",
            "--init",
            "--name",
            "verify-matrix-debian12-42",
            "--volume",
            "/work/repo:/work/repo",
            "--volume",
            "/usr/bin/cargo-verify-matrix:/opt/cargo-verify-matrix/bin/cargo-verify-matrix:ro",
            "--workdir",
            "/work/repo",
            "--env",
            "VERIFY_MATRIX_ENTERED=debian12",
            "--env",
            "VERIFY_MATRIX_LINK=stdin",
            "--network",
            "none",
            "debian:12",
        ]
        .map(String::from)
        .to_vec();
        expected.extend(supervised(PROGRAM_INSIDE));
        assert_eq!(words(&way.argv), expected);
        assert!(way.setup.is_empty());
        assert!(!way.signals_reach_inside);
        assert_eq!(
            way.teardown.iter().map(|t| words(t)).collect::<Vec<_>>(),
            vec![vec!["podman", "rm", "--force", "verify-matrix-debian12-42"]]
        );
    }

    #[test]
    fn a_compose_service_runs_with_the_same_mounts() {
        let args = ARGS.map(OsString::from);
        let enter = Enter::Compose {
            engine: Engine::Docker,
            file: "compose.yaml".into(),
            service: "api".into(),
        };
        let way = WayIn::new(&enter, &inner(&args)).unwrap();
        let argv = words(&way.argv);
        assert_eq!(
            argv[..9],
            [
                "docker",
                "compose",
                "--file",
                "/work/repo/compose.yaml",
                "run",
                "--rm",
                "-T",
                "--name",
                "verify-matrix-debian12-42"
            ]
        );
        let service = argv.iter().position(|w| w == "api").unwrap();
        assert_eq!(argv[service + 1..], supervised(PROGRAM_INSIDE)[..]);
        assert!(argv.contains(&"/work/repo:/work/repo".to_owned()));
    }

    #[test]
    fn a_dev_container_is_brought_up_with_the_mounts_then_exec_runs_the_supervisor() {
        let args = ARGS.map(OsString::from);
        let enter = Enter::Devcontainer {
            config: ".devcontainer/devcontainer.json".into(),
        };
        let way = WayIn::new(&enter, &inner(&args)).unwrap();
        assert_eq!(
            way.setup.iter().map(|s| words(s)).collect::<Vec<_>>(),
            vec![vec![
                "devcontainer",
                "up",
                "--workspace-folder",
                "/work/repo",
                "--config",
                "/work/repo/.devcontainer/devcontainer.json",
                "--mount",
                "type=bind,source=/work/repo,target=/work/repo",
                "--mount",
                "type=bind,source=/usr/bin/cargo-verify-matrix,target=/opt/cargo-verify-matrix/bin/cargo-verify-matrix",
            ]]
        );
        let mut expected: Vec<String> = [
            "devcontainer",
            "exec",
            "--workspace-folder",
            "/work/repo",
            "--config",
            "/work/repo/.devcontainer/devcontainer.json",
            "--remote-env",
            "VERIFY_MATRIX_ENTERED=debian12",
            "--remote-env",
            "VERIFY_MATRIX_LINK=stdin",
        ]
        .map(String::from)
        .to_vec();
        expected.extend(supervised(PROGRAM_INSIDE));
        assert_eq!(words(&way.argv), expected);
    }

    #[test]
    fn a_remote_run_maps_the_repositorys_paths_to_the_remote_folder() {
        let args = ARGS.map(OsString::from);
        let enter = Enter::Ssh {
            host: "ci-arm-1".into(),
            path: "/srv/work".into(),
            port: Some(2222),
            options: vec!["-i".into(), "/keys/ci".into()],
        };
        let way = WayIn::new(&enter, &inner(&args)).unwrap();
        let argv = words(&way.argv);
        assert_eq!(
            argv[..10],
            [
                "ssh",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=20",
                "-p",
                "2222",
                "-i",
                "/keys/ci",
                "--"
            ]
        );
        assert_eq!(argv[10], "ci-arm-1");
        let command = &argv[11];
        assert!(
            command.starts_with(
                "cd /srv/work && VERIFY_MATRIX_ENTERED=debian12 VERIFY_MATRIX_LINK=stdin exec /bin/sh -c "
            ),
            "{command}"
        );
        assert!(
            command.ends_with(
                "cargo-verify-matrix /srv/work/.verify-matrix/bin/cargo-verify-matrix run --env debian12 --out /srv/work/verify-matrix-results"
            ),
            "{command}"
        );
        assert_eq!(argv.len(), 12);
    }

    #[cfg(unix)]
    #[test]
    fn a_step_that_prints_more_than_its_limit_is_killed_and_fails() {
        let argv: Vec<OsString> = ["sh", "-c", "head -c 100000 /dev/zero; sleep 60.71"]
            .map(OsString::from)
            .to_vec();
        let file = tempfile::tempfile().unwrap();
        let started = std::time::Instant::now();
        let done = crate::run::session::runtime().unwrap().block_on(
            Step::new(&argv)
                .stdout(file.try_clone().unwrap(), 1000)
                .run(never_stopped(), &|_| {}),
        );
        assert_eq!(done.err().unwrap(), "`sh` printed more than 1000 bytes");
        // Killed, not waited for.
        assert!(started.elapsed() < Duration::from_secs(50));
        // What it printed within the limit is kept.
        assert!(file.metadata().unwrap().len() <= 1000);

        let small = tempfile::tempfile().unwrap();
        let argv: Vec<OsString> = ["sh", "-c", "printf 12345"].map(OsString::from).to_vec();
        let done = crate::run::session::runtime()
            .unwrap()
            .block_on(
                Step::new(&argv)
                    .stdout(small.try_clone().unwrap(), 1000)
                    .run(never_stopped(), &|_| {}),
            )
            .unwrap();
        assert_eq!(done.exit_code, 0);
        assert_eq!(small.metadata().unwrap().len(), 5);
    }

    #[test]
    fn a_path_a_mount_cannot_name_is_refused() {
        let args = ARGS.map(OsString::from);
        let mut inner = inner(&args);
        inner.repo = Path::new("/work/a:b");
        let enter = Enter::Container {
            engine: Engine::Docker,
            image: "debian:12".into(),
            options: vec![],
        };
        let err = WayIn::new(&enter, &inner).unwrap_err();
        assert_eq!(
            err,
            "`/work/a:b` cannot be mounted into a container (its path has `:` or `,`)"
        );
    }
}
