//! Running one environment's share: scheduling up to `--jobs` checks at once, keeping
//! manifest order in every output, and rewriting the result file after every check.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::manifest::{CheckId, Environment, Manifest};
use crate::plan;
use crate::results::source::now_rfc3339;
use crate::results::{
    CheckResult, FORMAT_VERSION, Leaked, ManifestRef, Outcome, PartialResult, ResultFileError,
    Runner, Shard, Source, Status, Tool, write_json_atomic,
};

use super::check::CheckJob;
use super::process::{Stop, StopReason, StopReceiver};
use crate::results::cause::signal_name;
use crate::results::format_duration;
use crate::results::journal::Journal;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where `verify-matrix-<env>.json` and `logs/` go.
    pub out_dir: PathBuf,
    /// Checks run at once (at least 1).
    pub jobs: usize,
    /// Stop starting checks after the first required failure.
    pub fail_fast: bool,
    /// Run only these checks (all when empty).
    pub only: Vec<CheckId>,
    /// The whole-run timeout (overrides the manifest's `run-timeout`).
    pub run_timeout: Option<Duration>,
    /// Where each check's output is also copied live (sensible with one job at a time).
    pub echo: Option<super::process::Echo>,
    /// This machine's facts, recorded in each result ([`super::facts::this_machine`]).
    pub machine: Runner,
    /// The run's secrets ([`super::secrets::run_masks`]): the logs and the results are
    /// redacted with them as they are written.
    pub masks: crate::untrusted::redacting::Masks,
    /// The shard of each environment this run is (`run --shard`); `None`: the whole
    /// environment.
    pub shard: Option<Shard>,
    /// The durations `split: timing` splits by.
    pub timings: super::split::Timings,
}

/// What the run reports as it goes.
#[derive(Debug)]
pub enum RunEvent<'a> {
    Started {
        check: &'a str,
        environment: &'a str,
    },
    Finished {
        result: &'a CheckResult,
    },
}

/// Why a run could not complete its bookkeeping (checks failing is not an error).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    ResultFile(#[from] ResultFileError),
    #[error("failed to write the log of `{check}`: {source}")]
    Log {
        check: String,
        source: std::io::Error,
    },
    #[error("a check task failed: {0}")]
    Task(String),
    #[error(
        "another run of environment `{env}` is writing to `{}` (lock `{}` is held); wait for it or use another --out folder",
        dir.display(), lock.display()
    )]
    Locked {
        env: String,
        dir: PathBuf,
        lock: PathBuf,
    },
    #[error("cannot lock `{}`: {source}", lock.display())]
    Lock {
        lock: PathBuf,
        source: std::io::Error,
    },
}

/// The exclusive lock of one environment's results in an output folder, held until it
/// drops. [`run_environment`] needs one, so that a run of several environments holds all
/// their locks before the first check starts.
#[derive(Debug)]
pub struct EnvironmentLock {
    environment: String,
    _file: File,
    /// Processes an earlier run of this environment left running when it was killed
    /// (SIGKILL, a crash), killed when the lock was taken.
    pub leftovers: Vec<Leaked>,
}

/// Takes the locks of every environment in `envs` under `out_dir`, or none: a run of
/// several environments either owns all their result files or starts nothing.
pub fn lock_environments<'a>(
    out_dir: &Path,
    envs: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<EnvironmentLock>, RunError> {
    envs.into_iter()
        .map(|env| {
            let file = lock_environment(out_dir, env)?;
            Ok(EnvironmentLock {
                environment: env.to_owned(),
                _file: file,
                leftovers: kill_leftovers(out_dir, env),
            })
        })
        .collect()
}

/// The list of the executions of `env` under `out_dir` that have started and may still
/// have processes; removed when a run of the environment ends.
pub fn running_path(out_dir: &Path, env: &str) -> PathBuf {
    out_dir.join(format!(".verify-matrix-{env}.running"))
}

/// Kills what a run of `env` that never ended left behind (its list of executions is
/// still there), and removes the list. Called with the environment's lock held.
fn kill_leftovers(out_dir: &Path, env: &str) -> Vec<Leaked> {
    let path = running_path(out_dir, env);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    let tokens: Vec<String> = text.lines().map(str::to_owned).collect();
    let killed = super::leaks::kill_tokens(&tokens);
    let _ = std::fs::remove_file(&path);
    killed
}

/// Takes the exclusive lock of `env` in `out_dir`, held until the returned file drops.
fn lock_environment(out_dir: &Path, env: &str) -> Result<File, RunError> {
    let lock = out_dir.join(format!(".verify-matrix-{env}.lock"));
    let io = |source| RunError::Lock {
        lock: lock.clone(),
        source,
    };
    std::fs::create_dir_all(out_dir).map_err(io)?;
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(RunError::Locked {
            env: env.to_owned(),
            dir: out_dir.to_path_buf(),
            lock,
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
    }
}

/// Forwards `outer` (interrupts) to a channel of this run's own, which also receives
/// the whole-run timeout.
fn run_stop_channel(mut outer: StopReceiver, run_timeout: Option<Duration>) -> StopReceiver {
    let (tx, rx) = watch::channel(*outer.borrow());
    tokio::spawn(async move {
        let timer = async {
            match run_timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(timer);
        loop {
            tokio::select! {
                changed = outer.changed() => {
                    if changed.is_err() {
                        // No more interrupts can come; only the timer is left.
                        (&mut timer).await;
                        let _ = tx.send(Some(Stop { reason: StopReason::RunTimeout, immediate: false }));
                        return;
                    }
                    let request = *outer.borrow();
                    if tx.send(request).is_err() {
                        return;
                    }
                }
                _ = &mut timer => {
                    if tx.borrow().is_none() {
                        let _ = tx.send(Some(Stop { reason: StopReason::RunTimeout, immediate: false }));
                    }
                    // Interrupts may still escalate to an immediate stop.
                    while outer.changed().await.is_ok() {
                        let request = *outer.borrow();
                        if tx.send(request).is_err() {
                            return;
                        }
                    }
                    return;
                }
            }
        }
    });
    rx
}

/// The path of the result file for `env` under `out_dir` (`env` may be a shard's
/// stem, `linux@2of4`: see [`Shard::stem`]).
pub fn result_path(out_dir: &Path, env: &str) -> PathBuf {
    out_dir.join(format!("verify-matrix-{env}.json"))
}

/// The checks `env` runs (all that apply to it, or `options.only`; in a shard, those
/// of its share), as jobs.
fn jobs(manifest: &Manifest, env: &Environment, options: &RunOptions) -> Vec<CheckJob> {
    let stem = Shard::stem(env.name.as_str(), options.shard);
    plan::runnable_checks(manifest, &env.name)
        .filter(|c| options.only.is_empty() || options.only.contains(&c.id))
        .filter_map(|c| {
            let slice = plan::slice_of(manifest, c, env, options.shard)?;
            let job = CheckJob {
                echo: options.echo.clone(),
                masks: options.masks.clone(),
                timings: options.timings.clone(),
                ..CheckJob::new(manifest, c, env, &options.out_dir)
            };
            Some(job.sliced(slice, &stem, &options.out_dir))
        })
        .collect()
}

/// Marks the result file finished: its outcome (how the run stopped, if it did), when,
/// and how long it took.
fn finish(partial: &mut PartialResult, stopped: Option<StopReason>, started: Instant) {
    partial.outcome = match stopped {
        None => Outcome::Complete,
        Some(StopReason::RunTimeout) => Outcome::RunTimeout,
        Some(StopReason::Interrupted(_)) => Outcome::Interrupted,
    };
    partial.finished_at = Some(now_rfc3339());
    partial.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
}

/// The result file of `env` before any check finished: every check not run, and an
/// outcome that claims no completeness.
fn unfinished(
    manifest: &Manifest,
    env: &Environment,
    source: &Source,
    jobs: &[CheckJob],
    machine: &Runner,
    shard: Option<Shard>,
) -> PartialResult {
    PartialResult {
        format_version: FORMAT_VERSION,
        tool: Tool::current(),
        manifest: ManifestRef {
            path: manifest.path.display().to_string(),
            digest: manifest.digest.clone(),
            content: (&manifest.content).into(),
        },
        environment: env.name.to_string(),
        shard,
        source: source.clone(),
        runner: Runner {
            detected: crate::plan::identity::detected(env, &crate::plan::select::Host),
            ..machine.clone()
        },
        started_at: now_rfc3339(),
        finished_at: None,
        duration_ms: 0,
        // Until the last check is recorded the file must not claim completeness.
        outcome: Outcome::Interrupted,
        checks: jobs
            .iter()
            .map(|j| Box::new(j.blank_result(Status::NotRun, "not run: the run did not finish")))
            .collect(),
        held: None,
    }
}

/// Why the checks a stop request kept from starting were not run.
fn not_run_reason(reason: StopReason, run_timeout: Option<std::time::Duration>) -> String {
    match reason {
        StopReason::RunTimeout => format!(
            "not run: the run timeout ({}) expired",
            format_duration(run_timeout.unwrap_or_default())
        ),
        StopReason::Interrupted(signal) => {
            format!("not run: interrupted by {}", signal_name(signal))
        }
    }
}

/// Runs the checks of `env` (the manifest's automated checks that apply to it, or
/// `options.only`), writing the partial result file as it goes; `lock` is the
/// environment's lock in `options.out_dir`.
pub async fn run_environment(
    manifest: &Manifest,
    env: &Environment,
    lock: &EnvironmentLock,
    source: &Source,
    options: &RunOptions,
    stop: StopReceiver,
    on_event: &(dyn Fn(RunEvent<'_>) + Sync),
) -> Result<PartialResult, RunError> {
    let started = Instant::now();
    let stem = Shard::stem(env.name.as_str(), options.shard);
    debug_assert_eq!(lock.environment, stem);
    let run_timeout = options.run_timeout.or(manifest.run_timeout);
    let stop = run_stop_channel(stop, run_timeout);
    let jobs = jobs(manifest, env, options);
    let path = result_path(&options.out_dir, &stem);
    let mut partial = unfinished(
        manifest,
        env,
        source,
        &jobs,
        &options.machine,
        options.shard,
    );
    write_json_atomic(&path, &partial)?;
    // Each finished check is appended here: recording it costs the same whatever the
    // number of checks before it.
    let mut journal = Journal::create(&path)?;

    let mut running = JoinSet::new();
    let mut next = 0;
    let mut stop_reason: Option<String> = None;
    let mut stopped: Option<StopReason> = None;
    let limit = options.jobs.max(1);
    loop {
        if stopped.is_none()
            && let Some(request) = *stop.borrow()
        {
            stopped = Some(request.reason);
            stop_reason = Some(not_run_reason(request.reason, run_timeout));
        }
        while stop_reason.is_none() && next < jobs.len() && running.len() < limit {
            let job = jobs[next].clone();
            on_event(RunEvent::Started {
                check: job.check.id.as_str(),
                environment: env.name.as_str(),
            });
            let index = next;
            let stop = stop.clone();
            running.spawn(async move { (index, job.run(stop).await) });
            next += 1;
        }
        let mut watch_stop = stop.clone();
        let joined = tokio::select! {
            joined = running.join_next() => joined,
            // A stop request re-evaluates what may start; running checks stop themselves.
            _ = watch_stop.changed(), if stopped.is_none() => continue,
        };
        let Some(joined) = joined else {
            break;
        };
        let (index, result) = joined.map_err(|e| RunError::Task(e.to_string()))?;
        let mut result = result.map_err(|source| RunError::Log {
            check: jobs[index].check.id.to_string(),
            source,
        })?;
        // What is shown and written of the result is redacted as its log was (a test's
        // message, a leaked process's command line, a summary).
        super::secrets::redact_result(&mut result, &options.masks.snapshot());
        on_event(RunEvent::Finished { result: &result });
        let failed = result.required && matches!(result.status, Status::Fail | Status::Error);
        if options.fail_fast && failed && stop_reason.is_none() {
            stop_reason = Some(format!(
                "not run: --fail-fast after `{}` failed",
                result.command_id
            ));
        }
        journal.append(&result)?;
        *partial.checks[index] = result;
    }
    if let Some(reason) = &stop_reason {
        for (slot, job) in partial.checks.iter_mut().zip(&jobs).skip(next) {
            **slot = job.blank_result(Status::NotRun, reason);
            on_event(RunEvent::Finished { result: slot });
        }
    }
    finish(&mut partial, stopped, started);
    write_json_atomic(&path, &partial)?;
    // The result file is complete: the journal has nothing it lacks.
    journal.remove();
    // Every check's processes are gone: nothing is left for a later run to clean.
    let _ = std::fs::remove_file(running_path(&options.out_dir, &stem));
    Ok(partial)
}
