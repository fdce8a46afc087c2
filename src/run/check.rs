//! One check in one environment: from the manifest's check to its result (§4).

use std::path::{Path, PathBuf};
use std::time::Duration;

use std::sync::LazyLock;

use regex::Regex;

use crate::manifest::{
    Check, CheckKind, Environment, ExpectExit, Gate, Manifest, Policy, TestSpec,
};
use crate::results::cause::signal_name;
use crate::results::counted;
use crate::results::logs::tail;
use crate::results::schema::ItemResult;
use crate::results::{CheckResult, Status, format_duration};

use super::CheckError;
use super::argv;
use super::auto;
use super::effect;
use super::kinds;
use super::policy;
use super::process::{self, Execution, Spec, StopReason, StopReceiver};
use super::reports;
use crate::untrusted::redacting::Masks;

/// Everything needed to run one check, owned so it can move to a task.
#[derive(Debug, Clone)]
pub struct CheckJob {
    pub check: Check,
    pub environment: String,
    pub shell: crate::manifest::Shell,
    pub env: std::collections::BTreeMap<String, String>,
    pub cwd: PathBuf,
    /// The manifest's folder: the repository part a check may read reports from.
    pub root: PathBuf,
    /// Absolute or relative to the current directory: where the log is written.
    pub log_file: PathBuf,
    /// Relative to the result file's folder: what the result records.
    pub log_path: String,
    pub policy: Policy,
    /// Where output is also copied live.
    pub echo: Option<super::process::Echo>,
    /// The run's output folder (never counted by `not-file` or `git-clean`).
    pub out_dir: PathBuf,
    /// Where each execution's token is recorded for the environment's next run (none
    /// for `exec`, which has no environment folder).
    pub running: Option<PathBuf>,
    /// The run's secrets: what is written (the log, the result) is redacted with them.
    pub masks: Masks,
    /// The check's slice when it splits (shard k of the n it is split into; 1/1 when
    /// the whole environment runs); `None`: it runs whole.
    pub slice: Option<crate::results::Shard>,
    /// The durations `split: timing` splits by.
    pub timings: super::split::Timings,
}

/// The future of [`CheckJob::run`], boxed because groups run their items recursively.
pub type BoxedRun<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<CheckResult>> + Send + 'a>>;

impl CheckJob {
    /// Prepares `check` for `env`, with logs under `out_dir`.
    pub fn new(manifest: &Manifest, check: &Check, env: &Environment, out_dir: &Path) -> CheckJob {
        let log_path = format!("logs/{}/{}.log", env.name, check.id);
        let mut vars = manifest.env_for(check, env);
        vars.insert("VERIFY_MATRIX_ENV".to_owned(), env.name.to_string());
        vars.insert("VERIFY_MATRIX_CHECK".to_owned(), check.id.to_string());
        CheckJob {
            check: check.clone(),
            environment: env.name.to_string(),
            shell: manifest.shell_for(check, env),
            env: vars,
            cwd: if check.cwd == "." {
                manifest.dir.clone()
            } else {
                manifest.dir.join(&check.cwd)
            },
            root: manifest.dir.clone(),
            log_file: out_dir.join(&log_path),
            log_path,
            policy: manifest.policy.clone(),
            echo: None,
            out_dir: out_dir.to_path_buf(),
            running: Some(super::runner::running_path(out_dir, env.name.as_str())),
            masks: Masks::default(),
            slice: None,
            timings: Default::default(),
        }
    }

    /// This job as `slice` of the check, in the leg whose files are named `stem`
    /// (`linux@2of4`): its log and its list of executions beside the leg's result, and
    /// `VERIFY_MATRIX_SHARD`/`VERIFY_MATRIX_SHARDS` set when it splits.
    pub fn sliced(
        mut self,
        slice: Option<crate::results::Shard>,
        stem: &str,
        out_dir: &Path,
    ) -> CheckJob {
        if stem != self.environment {
            self.log_path = format!("logs/{stem}/{}.log", self.check.id);
            self.log_file = out_dir.join(&self.log_path);
            self.running = Some(super::runner::running_path(out_dir, stem));
        }
        if let Some(slice) = slice {
            self.env
                .insert("VERIFY_MATRIX_SHARD".to_owned(), slice.index.to_string());
            self.env
                .insert("VERIFY_MATRIX_SHARDS".to_owned(), slice.count.to_string());
        }
        self.slice = slice;
        self
    }

    /// `command` with this slice's placeholders filled in: `{shard}`, `{shards}` (a
    /// shell's `${shard}` is left alone).
    fn expand(&self, command: &str) -> String {
        let Some(slice) = self.slice else {
            return command.to_owned();
        };
        expand_with(
            command,
            &[
                ("{shards}", slice.count.to_string()),
                ("{shard}", slice.index.to_string()),
            ],
        )
    }

    /// A `split: timing` check: its share of the tests `list` prints, split by the
    /// history's durations, passed as `{tests}`, `{tests_file}` and
    /// `VERIFY_MATRIX_TESTS_FILE`; an empty share runs nothing.
    async fn run_split(
        &self,
        command: &str,
        list: &str,
        stop: StopReceiver,
    ) -> std::io::Result<CheckResult> {
        use super::split;
        let slice = self
            .slice
            .unwrap_or(crate::results::Shard { index: 1, count: 1 });
        let started = std::time::Instant::now();
        // The whole reason in the log; the summary is one short line of it.
        let failed = |reason: String| -> std::io::Result<CheckResult> {
            self.write_log(&format!("{reason}\n"))?;
            let mut result = self.blank_result(Status::Error, &reason);
            result.log_path = Some(self.log_path.clone().into());
            result.duration_ms = millis(started.elapsed());
            Ok(result)
        };
        let listed = match self.list_tests(list).await {
            Ok(ids) if ids.is_empty() => {
                return failed(format!("`list` printed no test id: `{list}`"));
            }
            Ok(ids) => ids,
            Err(reason) => return failed(format!("listing the tests failed: {reason}")),
        };
        let empty = Vec::new();
        let timed = match &self.timings {
            split::Timings::None => &empty,
            split::Timings::Recorded(all) => all
                .get(&(self.check.id.to_string(), self.environment.clone()))
                .unwrap_or(&empty),
            split::Timings::Unreadable(why) => {
                return failed(format!("the history cannot be read: {why}"));
            }
        };
        let known = split::durations(&listed, timed);
        let share = split::share(&listed, &known, slice);
        let file = self
            .out_dir
            .join("splits")
            .join(self.log_path.trim_start_matches("logs/"))
            .with_extension("tests");
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut text = share.ids.join("\n");
        text.push('\n');
        // The share as given to the check, in a folder of its own outside the results
        // (removed when the check is done): the results folder is uploaded, and it gets
        // the copy with the secrets masked, as every file the run writes.
        let private = tempfile::Builder::new()
            .prefix("verify-matrix-share-")
            .tempdir()?;
        let given = private.path().join("tests");
        std::fs::write(&given, &text)?;
        std::fs::write(&file, self.masks.redact(&text).as_bytes())?;
        let absolute = given;
        let with_facts = |mut result: CheckResult| {
            let sharded = result.sharded.get_or_insert_with(Default::default);
            sharded.slice = Some(slice);
            sharded.split = Some(Box::new(share.facts.clone()));
            result
        };
        if share.ids.is_empty() {
            let mut result = self.blank_result(
                Status::Pass,
                &format!(
                    "no test in shard {slice}'s share of the {} listed; judged with the other shards",
                    share.facts.listed
                ),
            );
            result.exit_code = Some(0);
            result.tests_executed = Some(0);
            result.attempts = 1;
            self.write_log(&format!(
                "shard {slice}: no test of the {} listed is in this shard's share\n",
                share.facts.listed
            ))?;
            result.log_path = Some(self.log_path.clone().into());
            return Ok(with_facts(result));
        }
        let expanded = expand_with(
            &self.expand(command),
            &[
                (
                    "{tests_file}",
                    split::quoted(&[absolute.display().to_string()], self.shell),
                ),
                ("{tests}", split::quoted(&share.ids, self.shell)),
            ],
        );
        let mut job = self.clone();
        job.env.insert(
            "VERIFY_MATRIX_TESTS_FILE".to_owned(),
            absolute.display().to_string(),
        );
        let result = job.run_command(&expanded, stop).await?;
        drop(private);
        Ok(with_facts(result))
    }

    /// The test ids `list` prints on its standard output, run as the check would be
    /// (its shell, folder and variables, never the variables hidden from checks, the
    /// policy's refusals; in a process group of its own, killed whole when it is done or
    /// out of time), within the check's timeout; its output bounded.
    async fn list_tests(&self, list: &str) -> Result<Vec<String>, String> {
        use super::platform;
        use tokio::io::AsyncReadExt as _;
        if let Some(refusal) = policy::refusal(list, self.shell, &self.policy) {
            return Err(format!("`{list}` was refused: {refusal}"));
        }
        let argv = argv::argv(self.shell, list).map_err(|e| e.0)?;
        let mut command = tokio::process::Command::new(&argv.program);
        platform::isolate(&mut command, None);
        for name in process::HIDDEN_FROM_CHECKS {
            command.env_remove(name);
        }
        platform::set_args(&mut command, &argv.args, argv.cmd_exe);
        command
            .current_dir(&self.cwd)
            .envs(&self.env)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| format!("`{list}`: {e}"))?;
        platform::adopt(&child);
        // Whatever way this returns, nothing the listing started is left running.
        struct Group(Option<u32>);
        impl Drop for Group {
            fn drop(&mut self) {
                super::platform::signal_group(self.0, super::platform::Signal::Kill);
                if let Some(pid) = self.0 {
                    super::platform::release(pid);
                }
            }
        }
        let _group = Group(child.id());
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(format!("`{list}`: no output"));
        };
        let limit = 64 * 1024 * 1024;
        let work = async {
            let mut out = Vec::new();
            let mut err = Vec::new();
            let (mut stdout, mut stderr) = (stdout.take(limit), stderr.take(64 * 1024));
            let (read_out, read_err) =
                tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
            read_out.map_err(|e| e.to_string())?;
            let _ = read_err;
            if out.len() as u64 >= limit {
                return Err(format!("`{list}` printed more than {limit} bytes"));
            }
            let status = child.wait().await.map_err(|e| e.to_string())?;
            Ok::<_, String>((status, out, err))
        };
        let (status, out, err) = tokio::time::timeout(self.check.timeout, work)
            .await
            .map_err(|_| {
                format!(
                    "`{list}` timed out after {}",
                    format_duration(self.check.timeout)
                )
            })??;
        if !status.success() {
            let err = String::from_utf8_lossy(&err);
            return Err(format!(
                "exit {} of `{list}`: {}",
                status
                    .code()
                    .map_or_else(|| "a signal".to_owned(), |c| c.to_string()),
                err.trim()
                    .lines()
                    .rev()
                    .take(3)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join(" · ")
            ));
        }
        let ids = super::split::parse_list(&String::from_utf8_lossy(&out), &self.cwd);
        if ids.len() > super::split::MAX_LISTED {
            return Err(format!(
                "`{list}` printed {} test ids, more than the most split, {}",
                ids.len(),
                super::split::MAX_LISTED
            ));
        }
        Ok(ids)
    }
}

impl CheckJob {
    /// A result with every field filled from the check, before anything ran.
    pub fn blank_result(&self, status: Status, summary: &str) -> CheckResult {
        CheckResult {
            sharded: self.slice.map(|slice| {
                Box::new(crate::results::Sharded {
                    slice: Some(slice),
                    ..Default::default()
                })
            }),
            ..CheckResult::blank(&self.check, &self.environment, status, summary)
        }
    }

    /// Runs the check until done or until `stop` asks the run to stop.
    pub fn run(&self, stop: StopReceiver) -> BoxedRun<'_> {
        Box::pin(async move {
            match &self.check.kind {
                CheckKind::Run(cmd) | CheckKind::Test(TestSpec::Command(cmd)) => {
                    match (self.check.split, &self.check.list) {
                        (Some(crate::manifest::Split::Timing), Some(list)) => {
                            self.run_split(cmd, list, stop).await
                        }
                        _ => self.run_command(&self.expand(cmd), stop).await,
                    }
                }
                CheckKind::Test(TestSpec::Auto) => match auto::detect_test_command(&self.cwd) {
                    Ok(cmd) => {
                        let mut result = self.run_command(&cmd, stop).await?;
                        result.command = cmd.into();
                        Ok(result)
                    }
                    Err(reason) => Ok(self.blank_result(Status::Error, &reason.0)),
                },
                CheckKind::File { .. } | CheckKind::NotFile { .. } | CheckKind::GitClean { .. } => {
                    self.run_evidence().await
                }
                CheckKind::AllOf(items) => self.run_group(items, true, stop).await,
                CheckKind::AnyOf(items) => self.run_group(items, false, stop).await,
                CheckKind::Assert(_) | CheckKind::Quality { .. } => Ok(
                    self.blank_result(Status::NotRun, "manual item: awaiting review, never run")
                ),
            }
        })
    }

    /// A file or git check: evidence, exit code 0 or 1, the evidence in the log.
    async fn run_evidence(&self) -> std::io::Result<CheckResult> {
        let started = std::time::Instant::now();
        let (cwd, kind, out_dir) = (
            self.cwd.clone(),
            self.check.kind.clone(),
            self.out_dir.clone(),
        );
        let evidence = tokio::task::spawn_blocking(move || match &kind {
            CheckKind::File { pattern, search } => kinds::file(&cwd, pattern, search),
            CheckKind::NotFile { pattern } => kinds::not_file(&cwd, pattern, Some(&out_dir)),
            CheckKind::GitClean { path } => kinds::git_clean(&cwd, path, Some(&out_dir)),
            _ => Err("not a file or git check".into()),
        })
        .await
        .map_err(std::io::Error::other)?;
        let mut result = self.blank_result(Status::Fail, "");
        result.duration_ms = millis(started.elapsed());
        result.attempts = 1;
        match evidence {
            Ok(evidence) => {
                self.write_log(&evidence.detail)?;
                result.log_path = Some(self.log_path.clone().into());
                result.status = if evidence.passed {
                    Status::Pass
                } else {
                    Status::Fail
                };
                result.exit_code = Some(if evidence.passed { 0 } else { 1 });
                result.say(&evidence.summary);
            }
            Err(reason) => {
                result.status = Status::Error;
                result.say(&reason.0);
            }
        }
        Ok(result)
    }

    /// `all-of` / `any-of`: every item is evaluated (no short-circuit), so the result
    /// shows the whole tree; the group's log lists each item's evidence.
    async fn run_group(
        &self,
        items: &[Check],
        all: bool,
        stop: StopReceiver,
    ) -> std::io::Result<CheckResult> {
        let started = std::time::Instant::now();
        let mut detail_lines = Vec::new();
        let mut marks = Vec::new();
        let mut recorded = Vec::new();
        let (mut passed, mut judged) = (0, 0);
        for item in items {
            let r = self.item_job(item).run(stop.clone()).await?;
            let ok = r.status == Status::Pass;
            // A manual item is for a person to judge: the group neither passes nor
            // fails by it.
            let manual = item.kind.is_manual();
            judged += usize::from(!manual);
            passed += usize::from(ok);
            let mark = match (manual, ok) {
                (true, _) => "–",
                (false, true) => "✓",
                (false, false) => "✗",
            };
            marks.push(format!("{} {mark}", item.id));
            detail_lines.push(format!(
                "{mark} {} ({}): {} [{}]",
                item.id,
                if manual { "manual" } else { r.status.as_str() },
                r.summary,
                r.log_path.as_deref().unwrap_or("no log")
            ));
            recorded.push(ItemResult {
                item: item.id.as_str().into(),
                kind: r.kind,
                status: r.status,
                exit_code: r.exit_code,
                summary: r.summary,
                log_path: r.log_path,
                items: r.items,
            });
        }
        let kind = if all { "all-of" } else { "any-of" };
        let manual = items.len() - judged;
        let skipped = if manual > 0 {
            format!(", {manual} manual item(s) left to review")
        } else {
            String::new()
        };
        let detail = format!(
            "{kind}: {passed} of {judged} item(s) passed{skipped}\n{}\n",
            detail_lines.join("\n")
        );
        self.write_log(&detail)?;
        // A group with nothing automated in it proves nothing: it does not pass.
        let status = if judged == 0 {
            Status::NotRun
        } else if (all && passed == judged) || (!all && passed > 0) {
            Status::Pass
        } else {
            Status::Fail
        };
        let mut result = self.blank_result(status, "");
        result.log_path = Some(self.log_path.clone().into());
        result.duration_ms = millis(started.elapsed());
        if judged > 0 {
            result.exit_code = Some(if status == Status::Pass { 0 } else { 1 });
            result.attempts = 1;
        }
        result.say(&if judged == 0 {
            format!("{kind}: only manual items, awaiting review; nothing run")
        } else {
            format!("{kind}: {passed}/{judged} passed ({})", marks.join(", "))
        });
        result.items = recorded;
        Ok(result)
    }

    /// A group item as a job of its own, logging beside the group.
    fn item_job(&self, item: &Check) -> CheckJob {
        let stem = self.log_path.trim_end_matches(".log");
        let log_path = format!("{stem}.{}.log", item.id);
        let mut env = self.env.clone();
        env.extend(item.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        CheckJob {
            check: item.clone(),
            environment: self.environment.clone(),
            shell: item.shell.unwrap_or(self.shell),
            env,
            cwd: self.cwd.join(&item.cwd),
            root: self.root.clone(),
            log_file: self.out_dir.join(&log_path),
            log_path,
            policy: self.policy.clone(),
            echo: self.echo.clone(),
            out_dir: self.out_dir.clone(),
            running: self.running.clone(),
            masks: self.masks.clone(),
            slice: None,
            timings: Default::default(),
        }
    }

    fn write_log(&self, text: &str) -> std::io::Result<()> {
        if let Some(dir) = self.log_file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // What the tool writes of its own (a listing's error, a group's lines) quotes
        // what commands said: masked as their output is.
        std::fs::write(&self.log_file, self.masks.redact(text).as_bytes())
    }

    /// A command check, retrying retryable failures up to `retries` times.
    async fn run_command(&self, cmd: &str, mut stop: StopReceiver) -> std::io::Result<CheckResult> {
        let argv = policy::refusal(cmd, self.shell, &self.policy)
            .map_or_else(|| argv::argv(self.shell, cmd), |r| Err(r.into()));
        let argv = match argv {
            Ok(argv) => argv,
            Err(CheckError(reason)) => {
                let mut result = self.blank_result(Status::Error, &format!("refused: {reason}"));
                result.refused = Some(reason.into());
                return Ok(result);
            }
        };
        let max_attempts = self.check.retries.saturating_add(1);
        let mut attempt = 0;
        let mut total = Duration::ZERO;
        loop {
            attempt += 1;
            let spec = Spec {
                argv: argv.clone(),
                cwd: self.cwd.clone(),
                env: self.env.clone(),
                timeout: self.check.timeout,
                grace: self.check.grace,
                log_path: self.log_file.clone(),
                append: attempt > 1,
                echo: self.echo.clone(),
                running: self.running.clone(),
                masks: self.masks.clone(),
                scan: Some(self.check.gate),
            };
            if attempt > 1 {
                append_banner(&self.log_file, attempt, max_attempts)?;
            }
            // Effectiveness is judged on this attempt's output only.
            let offset = if attempt > 1 {
                std::fs::metadata(&self.log_file).map_or(0, |m| m.len())
            } else {
                0
            };
            let started = reports::Started::now(&self.check.reports, &self.cwd);
            let execution = process::execute(&spec, &mut stop).await?;
            total += execution.duration;
            let mut result = self.judge(&execution, offset, &started);
            if result.status == Status::Fail && transient_failure(&self.log_file) {
                result.retryable = true;
            }
            result.attempts = attempt;
            result.duration_ms = millis(total);
            if result.status == Status::Pass {
                result.flaky = attempt > 1;
                if result.flaky {
                    result.say(&format!(
                        "{} (flaky: passed on attempt {attempt})",
                        result.summary
                    ));
                }
                return Ok(result);
            }
            if !result.retryable || attempt >= max_attempts || stop.borrow().is_some() {
                return Ok(result);
            }
            let backoff = Duration::from_millis(250 * u64::from(attempt));
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = stop.changed() => return Ok(result),
            }
        }
    }

    /// The result of one attempt whose output starts at `offset` in the log and which
    /// started as `started` says.
    fn judge(&self, execution: &Execution, offset: u64, started: &reports::Started) -> CheckResult {
        let took = format_duration(execution.duration);
        let mut result = self.blank_result(Status::Fail, "");
        result.exit_code = execution.exit_code;
        result.duration_ms = millis(execution.duration);
        result.log_path = Some(self.log_path.clone().into());
        result.timed_out = execution.timed_out;
        result.leaked = execution.leaked.clone();
        let code = execution.exit_code.unwrap_or(-1);
        let (status, retryable, summary) = if let Some(error) = &execution.spawn_error {
            (Status::Error, false, error.clone())
        } else if let Some(reason) = execution.stopped {
            let why = match reason {
                StopReason::RunTimeout => crate::results::RUN_TIMEOUT_STOP.to_owned(),
                StopReason::Interrupted(signal) => {
                    format!("interrupted by {}", signal_name(signal))
                }
            };
            (
                Status::Error,
                true,
                format!("{why} after {took} (exit {code})"),
            )
        } else if execution.timed_out {
            (
                Status::Error,
                true,
                format!(
                    "timed out after {} (exit {code})",
                    format_duration(self.check.timeout)
                ),
            )
        } else if !execution.leaked.is_empty() {
            let n = execution.leaked.len();
            let first = execution.leaked[0].command.clone();
            (
                Status::Error,
                true,
                format!(
                    "exit {code}, but left {n} process{} running (killed): {first}",
                    if n == 1 { "" } else { "es" }
                ),
            )
        } else if execution.pipe_held {
            (
                Status::Error,
                true,
                format!("exit {code}, but a background process kept its output open"),
            )
        } else if let Some(why) = self.no_real_failure(code) {
            // A negative check passes on a failure of the command itself, never on a
            // shell that could not find or run it, or on a crash.
            (Status::Error, false, format!("exit {code}: {why}"))
        } else if self.check.expect.accepts(code) {
            (
                Status::Pass,
                false,
                format!("passed (exit {code}) in {took}"),
            )
        } else {
            let wanted = self.wanted();
            // The shell's meaning of the code, with the command it names in the log:
            // `command not found: `ruff` (exit 127, required 0)`.
            let summary = match crate::results::cause::cause_in_log(code, &self.log_file, offset) {
                Some(cause) => format!("{cause} (exit {code}, {wanted}) in {took}"),
                None => format!("exit {code} ({wanted}) in {took}"),
            };
            (Status::Fail, false, summary)
        };
        result.status = status;
        result.retryable = retryable;
        result.summary = summary.into();
        if execution.spawn_error.is_none() {
            self.apply_effectiveness(
                &mut result,
                execution.assessment.as_ref(),
                offset,
                started,
                &took,
            );
        }
        let whole = std::mem::take(&mut result.summary);
        result.say(&whole);
        result
    }

    /// For a check that expects a failure: why exit `code` is not the command failing
    /// (the shell's 126 and 127, or death by a signal).
    fn no_real_failure(&self, code: i32) -> Option<String> {
        if self.check.expect != ExpectExit::Failure {
            return None;
        }
        match code {
            127 => Some("the command was not found, so the failure it expects proves nothing".to_owned()),
            126 => Some("the command could not be run (not executable), so the failure it expects proves nothing".to_owned()),
            129..=192 => Some(format!(
                "the command was killed by {}, which is not the failure it expects",
                signal_name(code - 128)
            )),
            _ => None,
        }
    }

    /// What a failing exit code was measured against, for summaries.
    fn wanted(&self) -> String {
        match self.check.expect.required_code() {
            Some(want) => format!("required {want}"),
            None => "expected a failure".to_owned(),
        }
    }

    /// Reads the gate's effectiveness from the log and the runner's reports; an
    /// ineffective gate that must be effective fails (its real exit code is kept), and
    /// test counts go in the summary.
    fn apply_effectiveness(
        &self,
        result: &mut CheckResult,
        scanned: Option<&effect::Assessment>,
        offset: u64,
        started: &reports::Started,
        took: &str,
    ) {
        // Read beside the write; else (the copy left to an escaped process) from the log.
        let a = match scanned {
            Some(a) => a.clone(),
            None => effect::assess_file_from(self.check.gate, &self.log_file, offset),
        };
        result.gate_effective = a.gate_effective;
        result.tests_executed = a.tests_executed;
        result.test_counts = a.test_counts.map(Box::new);
        result.ineffective_reason = a.ineffective_reason.map(Into::into);
        if !self.check.reports.is_empty() {
            self.apply_reports(result, started, a.noop);
        }
        // A shard's tests are a share: `min-tests` and running none are judged on the
        // union of the shards, when they are merged.
        let share = self.slice.is_some_and(|s| s.count > 1);
        if !share {
            self.apply_floor(result);
        }
        let code = result.exit_code.unwrap_or(-1);
        if let Some(packages) = &a.packages
            && result.test_counts.is_none()
            && result.status == Status::Pass
        {
            result.summary =
                format!("{packages} in {took} (no test count: run go test with -v or -json)")
                    .into();
        }
        if let Some(counts) = &result.test_counts
            && result.gate_effective == Some(true)
        {
            let skipped = if counts.skipped > 0 {
                format!(", {} skipped", counts.skipped)
            } else {
                String::new()
            };
            let flaky = if counts.flaky > 0 {
                format!(" ({} flaky)", counts.flaky)
            } else {
                String::new()
            };
            if result.status == Status::Pass {
                result.summary = format!(
                    "{} passed{flaky}{skipped} in {took}",
                    counted(counts.passed, "test", "tests")
                )
                .into();
            } else if result.status == Status::Fail
                && counts.failed > 0
                // An accepted exit code failed by its report says so already.
                && !self.check.expect.accepts(code)
            {
                let wanted = self.wanted();
                result.summary = format!(
                    "exit {code} ({wanted}): {} of {} failed in {took}",
                    counts.failed,
                    counted(counts.passed + counts.failed, "test", "tests")
                )
                .into();
            }
        }
        self.hold_back(result, took);
        if let Some(why) = flaky_fails(&self.check, result) {
            result.status = Status::Fail;
            result.summary = why.into();
        } else if share && result.tests_executed == Some(0) && result.status == Status::Pass {
            result.summary = format!(
                "no test in shard {}'s share (exit {code}); judged with the other shards",
                self.slice.map(|s| s.to_string()).unwrap_or_default()
            )
            .into();
        } else if self.check.must_be_effective
            && result.gate_effective == Some(false)
            && result.status == Status::Pass
        {
            result.status = Status::Fail;
            result.summary = format!(
                "ineffective: {} (exit {code})",
                result.ineffective_reason.as_deref().unwrap_or("unknown")
            )
            .into();
        }
    }
}

impl CheckJob {
    /// The runner's own reports: their counts win over the log's (a difference makes
    /// the gate ineffective: "counts disagree"), their tests are recorded; a missing or
    /// left-over report makes the gate ineffective, an unreadable one the check an
    /// ERROR.
    fn apply_reports(&self, result: &mut CheckResult, started: &reports::Started, noop: bool) {
        let context = reports::Context {
            cwd: self.cwd.clone(),
            root: self.root.clone(),
            started: started.clone(),
            redactor: std::sync::Arc::new(self.masks.snapshot()),
        };
        let reading = match reports::read(&self.check.reports, &context) {
            Ok(reading) => reading,
            Err(reports::Problem::Missing(reason)) => {
                result.gate_effective = Some(false);
                result.ineffective_reason = Some(reason.into());
                return;
            }
            Err(reports::Problem::Unreadable(reason)) => {
                if result.status != Status::Error {
                    result.status = Status::Error;
                    result.summary = reason.as_str().into();
                }
                result.gate_effective = Some(false);
                result.ineffective_reason = Some(reason.into());
                return;
            }
        };
        let counts = reading.counts;
        let log_counts = result.test_counts.take();
        let executed = counts.passed + counts.failed;
        let disagreement = log_counts
            .as_ref()
            .filter(|log| reports::counts_disagree(log, &counts, reading.outside_failures))
            .map(|log| {
                format!(
                    "counts disagree: the report says {}, the log ({}) says {}",
                    describe_counts(&counts),
                    log.runner,
                    describe_counts(log)
                )
            });
        if let Some(reason) = disagreement {
            result.gate_effective = Some(false);
            result.ineffective_reason = Some(reason.into());
        } else if let Some(said) = &reading.noop {
            // The report shows what the log would have: a cached result, no test run.
            result.gate_effective = Some(false);
            result.ineffective_reason = Some(
                format!("no-op: the report says `{said}`: its tests were not run by this check")
                    .into(),
            );
        } else if executed == 0 && self.check.gate == Gate::Test {
            result.gate_effective = Some(false);
            result.ineffective_reason = Some(
                format!(
                    "the report{} no test that ran",
                    if reading.report.files.len() == 1 {
                        " lists"
                    } else {
                        "s list"
                    }
                )
                .into(),
            );
        } else if !noop {
            // The report's evidence stands in for the log's (which may have had none);
            // a no-op the log showed (a cached result) still stands.
            result.gate_effective = Some(true);
            result.ineffective_reason = None;
        }
        let mut report = reading.report;
        // A runner that exits 0 while its report lists failures is not green.
        if result.status == Status::Pass
            && counts.failed > 0
            && matches!(self.check.expect, ExpectExit::Code(_))
        {
            result.status = Status::Fail;
            result.summary = format!(
                "exit {}, but the report lists {} failed test{}",
                result.exit_code.unwrap_or(-1),
                counts.failed,
                if counts.failed == 1 { "" } else { "s" }
            )
            .into();
        }
        result.tests_executed = Some(executed);
        result.test_counts = Some(Box::new(counts));
        report.log_counts = log_counts.map(|c| *c);
        result.tests = Some(Box::new(report));
    }

    /// The check's quarantine: a pair whose failures it holds back, and only those,
    /// passes; an entry past its date (or a glob over every test) fails it.
    fn hold_back(&self, result: &mut CheckResult, took: &str) {
        let (Some(tests), Some(counts), ExpectExit::Code(_)) = (
            result.tests.as_deref_mut(),
            result.test_counts.as_mut(),
            self.check.expect,
        ) else {
            return;
        };
        let held = crate::results::quarantine::apply(
            &self.check,
            counts,
            tests,
            crate::manifest::today(),
            result.exit_code,
            self.slice.is_some_and(|s| s.count > 1),
        );
        let passed = counts.passed;
        if result.status == Status::Error {
            return;
        }
        if !held.refused.is_empty() {
            result.status = Status::Fail;
            result.summary = held.refused.join("; ").into();
        } else if held.all_held && result.status == Status::Fail {
            result.status = Status::Pass;
            result.summary = format!(
                "{} passed, {} failed in quarantine (exit {}) in {took}",
                counted(passed, "test", "tests"),
                held.held,
                result.exit_code.unwrap_or(-1),
            )
            .into();
        }
    }

    /// `min-tests`: fewer executed tests than the floor make the gate ineffective.
    fn apply_floor(&self, result: &mut CheckResult) {
        let Some(min) = self.check.min_tests else {
            return;
        };
        if result.gate_effective == Some(false) {
            return;
        }
        // Tests, not repeats: a floor met mostly by a few names run over and over (2
        // tests run 150 times against `min-tests: 300`) is not met. Real suites repeat
        // some names (same-titled tests); they stay far from half.
        let distinct = result
            .tests
            .as_ref()
            .filter(|t| t.left_out == 0 && !t.cases.is_empty())
            .map(|t| {
                t.cases
                    .iter()
                    .map(|c| (c.suite.as_str(), c.name.as_str()))
                    .collect::<std::collections::HashSet<_>>()
                    .len() as u64
            });
        let reason = match (result.tests_executed, distinct) {
            (Some(ran), Some(distinct)) if ran >= min && distinct < min && distinct * 2 < ran => {
                format!(
                    "min-tests {min} is met only by repeats: {ran} tests ran, {distinct} of them distinct"
                )
            }
            (Some(ran), _) if ran >= min => return,
            (Some(ran), _) => format!(
                "ran {ran} test{}, fewer than min-tests {min}",
                if ran == 1 { "" } else { "s" }
            ),
            (None, _) => format!("no test count to hold against min-tests {min}"),
        };
        result.gate_effective = Some(false);
        result.ineffective_reason = Some(reason.into());
    }
}

/// `120 tests (118 passed, 2 failed)`, for messages.
fn describe_counts(counts: &crate::results::TestCounts) -> String {
    let ran = counts.passed + counts.failed;
    format!(
        "{ran} test{} ({} passed, {} failed)",
        if ran == 1 { "" } else { "s" },
        counts.passed,
        counts.failed
    )
}

/// Log text that marks a failure as transient (network, locks, rate limits): worth a retry.
static TRANSIENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)connection (reset|refused)|timed out|could not resolve host|temporary failure in name resolution|ETIMEDOUT|ECONNRESET|ECONNREFUSED|\b(HTTP|status)[ /:]*50[234]\b|\b50[234] (Bad Gateway|Service Unavailable|Gateway Time-?out)|Blocking waiting for file lock|text file busy|rate limit",
    )
    .expect("valid regex")
});

/// Whether the end of the log shows a transient failure.
fn transient_failure(log: &Path) -> bool {
    tail(log, 200, 64 * 1024).is_some_and(|text| TRANSIENT.is_match(&text))
}

fn append_banner(log: &Path, attempt: u32, of: u32) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log)?;
    writeln!(
        file,
        "\n=== cargo-verify-matrix: attempt {attempt} of {of} ==="
    )
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;

/// `command` with each placeholder of `values` replaced by its value (a shell's
/// `${name}` is left alone).
fn expand_with(command: &str, values: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(command.len());
    let mut rest = command;
    while let Some(at) = rest.find('{') {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        // `out` ends with what came before the brace: a `$` there is the shell's.
        let value = (!out.ends_with('$'))
            .then(|| values.iter().find(|(p, _)| from.starts_with(p)))
            .flatten();
        match value {
            Some((placeholder, n)) => {
                out.push_str(n);
                rest = &from[placeholder.len()..];
            }
            None => {
                out.push('{');
                rest = &from[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Why `result` cannot pass under `fail-on-flaky`: tests that passed only on a retry.
/// The same rule [`crate::results::intake`] holds a claimed pass to.
pub fn flaky_fails(check: &Check, result: &CheckResult) -> Option<String> {
    let flaky = result.test_counts.as_ref().map_or(0, |c| c.flaky);
    (check.fail_on_flaky && flaky > 0 && result.status == Status::Pass).then(|| {
        format!(
            "{} passed only on a retry, and fail-on-flaky is set",
            counted(flaky, "flaky test", "flaky tests")
        )
    })
}
