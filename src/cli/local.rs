//! This machine's share of the matrix, for `run` and `hook`: the environments' locks,
//! the checks, and the report of what ran (partial unless it covered every required
//! pair of the manifest).

use std::path::Path;

use super::Error;
use super::args::RunArgs;
use super::live::{Live, announce};
use super::session;
use crate::manifest::{CheckId, EnvName, Environment, Manifest};
use crate::results::{PartialResult, Report, Runner, Shard, Source};
use crate::run::here::Refusal;
use crate::run::{EnvironmentLock, RunOptions, lock_environments, run_environment};

/// What a local run produced.
pub(crate) struct Ran {
    pub report: Report,
    pub names: Vec<EnvName>,
    pub interrupted: bool,
}

/// Runs `only` (every check when empty) in `environments`, one after the other, with
/// `live` showing it; an interrupt stops the run, keeping what finished. The refused
/// environments run nothing and are in the report as not run here, with the reason.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_here(
    manifest: &Manifest,
    environments: &[&Environment],
    refused: &[Refusal],
    only: &[CheckId],
    args: &RunArgs,
    source: &Source,
    live: &Live,
    machine: &Runner,
) -> Result<Ran, Error> {
    let options = RunOptions {
        out_dir: args.out.clone(),
        jobs: usize::from(args.jobs),
        fail_fast: args.fail_fast,
        only: only.to_vec(),
        run_timeout: args.run_timeout,
        echo: live.echo(),
        machine: machine.clone(),
        masks: crate::run::secrets::run_masks(manifest),
        shard: args.shard,
        timings: timings(manifest, environments, args)?,
    };
    if let Some(shard) = args.shard {
        for env in environments {
            check_shard(manifest, env, shard)?;
        }
    }
    let on_event = |event: crate::run::RunEvent<'_>| live.event(event);
    // The environments entered from here run inside, each under its own run there.
    let (entered, direct): (Vec<&Environment>, Vec<&Environment>) = environments
        .iter()
        .partition(|e| crate::run::here::entered_from_here(e));
    let entry = if entered.is_empty() {
        None
    } else {
        Some(Entry::new(manifest, args, only)?)
    };
    // Every environment's lock before the first check: a run never finishes one
    // environment and then finds another taken.
    let stems: Vec<String> = direct
        .iter()
        .map(|e| Shard::stem(e.name.as_str(), args.shard))
        .collect();
    let locks = lock_environments(&args.out, stems.iter().map(String::as_str))?;
    for (env, lock) in direct.iter().zip(&locks) {
        note_leftovers(&env.name, lock);
    }
    let mut session = session()?;
    let mut partials = Vec::new();
    let mut blocked: Vec<(EnvName, String)> = Vec::new();
    let stop_rx = session.stop();
    // With `skip: true` each environment still gets its (empty) result file, so that
    // a merge sees it reported rather than missing.
    session.block_on(announce, async {
        for (env, lock) in direct.iter().zip(&locks) {
            let partial = run_environment(
                manifest,
                env,
                lock,
                source,
                &options,
                stop_rx.clone(),
                &on_event,
            )
            .await?;
            partials.push(partial);
            if stop_rx.borrow().is_some() {
                break;
            }
        }
        for env in &entered {
            if stop_rx.borrow().is_some() {
                break;
            }
            let Some(entry) = &entry else { break };
            match entry.run(env, stop_rx.clone()).await {
                Ok(partial) => partials.push(partial),
                Err(why) => blocked.push((env.name.clone(), why)),
            }
        }
        Ok::<(), Error>(())
    })?;
    live.finish();
    let names: Vec<EnvName> = environments.iter().map(|e| e.name.clone()).collect();
    let mut judged: Vec<EnvName> = names.clone();
    judged.extend(refused.iter().map(|r| r.environment.clone()));
    let mut report = run_report(manifest, only, &partials, &judged, args.shard);
    say_refused(&mut report, refused);
    say_blocked(&mut report, &blocked);
    Ok(Ran {
        report,
        names,
        interrupted: session.interrupted(),
    })
}

/// The durations the history recorded for the `split: timing` checks of
/// `environments` (`--timings`, else `.verify-matrix/history.sqlite` beside the manifest
/// when it exists).
fn timings(
    manifest: &Manifest,
    environments: &[&Environment],
    args: &RunArgs,
) -> Result<crate::run::split::Timings, Error> {
    use crate::run::split::Timings;
    let pairs: Vec<(String, String)> = environments
        .iter()
        .flat_map(|env| {
            crate::plan::runnable_checks(manifest, &env.name)
                .filter(|c| c.split == Some(crate::manifest::Split::Timing))
                .map(|c| (c.id.to_string(), env.name.to_string()))
        })
        .collect();
    let path = match &args.timings {
        Some(path) if !path.is_file() => {
            return Err(Error::Usage(format!(
                "--timings {}: no such file (the history database whose test durations `split: timing` splits by)",
                path.display()
            )));
        }
        Some(path) => path.clone(),
        None => manifest.dir.join(".verify-matrix/history.sqlite"),
    };
    if pairs.is_empty() || !path.is_file() {
        return Ok(Timings::None);
    }
    let history = match crate::history::History::open(&path) {
        Ok(history) => history,
        Err(e) => return Ok(Timings::Unreadable(e.to_string())),
    };
    let mut all = rustc_hash::FxHashMap::default();
    for (check, env) in pairs {
        match history.test_durations(&check, &env) {
            Ok(timed) => {
                all.insert((check, env), timed);
            }
            Err(e) => return Ok(Timings::Unreadable(e.to_string())),
        }
    }
    Ok(Timings::Recorded(std::sync::Arc::new(all)))
}

/// `--shard` must be one of `env`'s shards as the manifest splits it.
fn check_shard(manifest: &Manifest, env: &Environment, shard: Shard) -> Result<(), Error> {
    let legs = manifest.legs(env);
    if legs <= 1 {
        return Err(Error::Usage(format!(
            "--shard {shard}: `{}` is not sharded (the manifest gives it no `shards:`); run it whole, without --shard",
            env.name
        )));
    }
    if shard.count != legs {
        return Err(Error::Usage(format!(
            "--shard {shard}: `{}` is split into {legs} shards, not {}; give --shard K/{legs}",
            env.name, shard.count
        )));
    }
    Ok(())
}

/// What entering an environment from here needs: the way to run this tool inside, and
/// the run's options as the inner run takes them.
struct Entry {
    /// This program, as the way in runs it (the same path inside).
    program: std::path::PathBuf,
    /// The repository's folder, `{repo}`.
    repo: std::path::PathBuf,
    /// The output folder, inside the repository.
    out: std::path::PathBuf,
    /// `run`'s options after `--env NAME`.
    args: Vec<std::ffi::OsString>,
    /// How long the inner run has after SIGTERM before it is killed.
    grace: std::time::Duration,
    /// The shard it runs (`--shard`).
    shard: Option<Shard>,
    /// The digest of the manifest this run runs: what the run inside must have run.
    digest: String,
    /// The run's time limit (`--run-timeout`, else the manifest's `run-timeout`): the
    /// way in too must end within it (and the grace that follows).
    limit: Option<std::time::Duration>,
}

impl Entry {
    fn new(manifest: &Manifest, args: &RunArgs, only: &[CheckId]) -> Result<Entry, Error> {
        let absolute = |path: &Path| {
            std::path::absolute(path)
                .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
                .map_err(|e| Error::Usage(format!("`{}`: {e}", path.display())))
        };
        let repo = absolute(&manifest.dir)?;
        std::fs::create_dir_all(&args.out)
            .map_err(|e| Error::Usage(format!("--out {}: {e}", args.out.display())))?;
        let out = absolute(&args.out)?;
        if !out.starts_with(&repo) {
            return Err(Error::Usage(format!(
                "--out {}: an entered environment writes its results inside the repository (`{}`), the folder its way in binds; give an --out inside it",
                args.out.display(),
                repo.display()
            )));
        }
        let program = std::env::current_exe()
            .map_err(|e| Error::Usage(format!("this program's path: {e}")))?;
        let mut inner: Vec<std::ffi::OsString> = vec![
            "--manifest".into(),
            absolute(&manifest.path)?.into(),
            "--out".into(),
            out.clone().into(),
            "--jobs".into(),
            args.jobs.to_string().into(),
        ];
        for id in only {
            inner.push("--check".into());
            inner.push(id.as_str().into());
        }
        if args.fail_fast {
            inner.push("--fail-fast".into());
        }
        if args.fail_on_flaky {
            inner.push("--fail-on-flaky".into());
        }
        if let Some(limit) = args.run_timeout {
            inner.push("--run-timeout".into());
            inner.push(format!("{}s", limit.as_secs().max(1)).into());
        }
        if let Some(shard) = args.shard {
            inner.push("--shard".into());
            inner.push(shard.to_string().into());
        }
        if let Some(timings) = &args.timings {
            inner.push("--timings".into());
            inner.push(absolute(timings)?.into());
        }
        let grace = manifest
            .checks
            .iter()
            .map(|c| c.grace)
            .max()
            .unwrap_or_default()
            + std::time::Duration::from_secs(5);
        Ok(Entry {
            program,
            repo,
            out,
            args: inner,
            grace,
            shard: args.shard,
            digest: manifest.digest.clone(),
            limit: args.run_timeout.or(manifest.run_timeout),
        })
    }

    /// Runs `env`'s share inside it; its result, or why there is none (the way in's own
    /// words).
    async fn run(
        &self,
        env: &Environment,
        stop: crate::run::process::StopReceiver,
    ) -> Result<PartialResult, String> {
        use crate::run::enter;
        let Some(way_in) = &env.enter else {
            return Err("it has no way in".to_owned());
        };
        let stem = Shard::stem(env.name.as_str(), self.shard);
        let mut args = vec!["--env".into(), env.name.as_str().into()];
        args.extend(self.args.iter().cloned());
        let tag = std::process::id().to_string();
        let inner = enter::Inner {
            name: env.name.as_str(),
            repo: &self.repo,
            program: &self.program,
            out: &self.out,
            stem: &stem,
            args: &args,
            tag: &tag,
        };
        let [result, journal] = inner.result_files();
        // Nothing of an earlier run may pass for this one's.
        for stale in [&result, &journal] {
            let _ = std::fs::remove_file(stale);
        }
        // The run inside says what it does on stderr, as this one would; where its
        // results are is this run's to say (a remote host's path means nothing here).
        let say = |line: &str| {
            if !line.starts_with("results: ") {
                eprintln!("{line}");
            }
        };
        // The run timeout bounds the way in as well as the checks inside: past it (and
        // the grace the run inside has to stop its checks), the way in is asked to stop,
        // then killed, and the environment is blocked.
        let timed_out = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = match self.limit {
            Some(limit) => with_deadline(stop, limit + self.grace, timed_out.clone()),
            None => stop,
        };
        let entered = enter::enter(way_in, &inner, stop, self.grace, &say).await;
        if timed_out.load(std::sync::atomic::Ordering::SeqCst) {
            let limit = self.limit.unwrap_or_default();
            return Err(format!(
                "its way in did not end within the run timeout ({}) and the {} the run inside has to stop: it was stopped{}",
                crate::results::format_duration(limit),
                crate::results::format_duration(self.grace),
                entered
                    .ok()
                    .map(|e| enter::last_words(&e.stderr_tail))
                    .filter(|w| !w.is_empty())
                    .map(|w| format!("; it said: {w}"))
                    .unwrap_or_default()
            ));
        }
        let entered = entered?;
        let why_none = || {
            let last = enter::last_words(&entered.stderr_tail);
            if last.is_empty() {
                format!(
                    "its way in exited with {} and wrote no result",
                    entered.exit_code
                )
            } else {
                format!(
                    "its way in exited with {} and wrote no result: {last}",
                    entered.exit_code
                )
            }
        };
        if !result.exists() {
            return Err(why_none());
        }
        let collected = crate::results::merge::collect(std::slice::from_ref(&result), &self.out)
            .map_err(|e| format!("its result could not be read: {e}"))?;
        let partial = collected
            .partials
            .into_iter()
            .map(|l| l.result)
            .find(|p| p.environment == env.name.as_str())
            .ok_or_else(why_none)?;
        // The run inside must have run this run's manifest: a way in that runs another
        // (a weaker one) left a result that is not this environment's under it.
        if partial.manifest.digest != self.digest {
            return Err(format!(
                "its result was made from another manifest ({}) than this run's ({}): not taken",
                partial.manifest.digest, self.digest
            ));
        }
        Ok(partial)
    }
}

/// `stop`, and a stop (the run timeout) of its own once `after` has passed, which
/// `timed_out` records.
fn with_deadline(
    mut stop: crate::run::process::StopReceiver,
    after: std::time::Duration,
    timed_out: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> crate::run::process::StopReceiver {
    use crate::run::process::{Stop, StopReason};
    let (sender, receiver) = tokio::sync::watch::channel(*stop.borrow());
    tokio::spawn(async move {
        let deadline = tokio::time::sleep(after);
        tokio::pin!(deadline);
        let (mut fired, mut open) = (false, true);
        loop {
            tokio::select! {
                () = sender.closed() => return,
                changed = stop.changed(), if open => {
                    // No one can ask any more once it closed; the deadline still stands.
                    open = changed.is_ok();
                    let now = *stop.borrow();
                    if open && sender.send(now).is_err() {
                        return;
                    }
                }
                () = &mut deadline, if !fired => {
                    fired = true;
                    timed_out.store(true, std::sync::atomic::Ordering::SeqCst);
                    let _ = sender.send(Some(Stop {
                        reason: StopReason::RunTimeout,
                        immediate: false,
                    }));
                }
            }
        }
    });
    receiver
}

/// Each environment that could not be entered: INFRA_BLOCKED, with the reason in place
/// of "no results".
fn say_blocked(report: &mut Report, blocked: &[(EnvName, String)]) {
    for (env, why) in blocked {
        let line = format!("{env}: could not be entered: {why}");
        let plain = format!("{env}: no results");
        match report.reasons.iter_mut().find(|r| **r == plain) {
            Some(reason) => *reason = line,
            None => report.reasons.push(line),
        }
        for missing in report
            .missing
            .iter_mut()
            .filter(|m| m.environment == env.as_str())
        {
            missing.reason = format!("could not be entered: {why}");
        }
    }
}

/// Each refused environment's reason in place of "no results": its pairs were not run
/// here because this machine is not it.
fn say_refused(report: &mut Report, refused: &[Refusal]) {
    for refusal in refused {
        let env = refusal.environment.as_str();
        let blocked = format!("{env}: no results");
        match report.reasons.iter_mut().find(|r| **r == blocked) {
            Some(reason) => *reason = refusal.line(),
            None => report.reasons.push(refusal.line()),
        }
        for missing in report.missing.iter_mut().filter(|m| m.environment == env) {
            missing.reason = format!("not run here: {}", refusal.why);
        }
    }
}

/// Where the result file of `env` is, under the run's folder.
pub(crate) fn result_path(out: &Path, env: &EnvName) -> std::path::PathBuf {
    crate::run::result_path(out, env.as_str())
}

/// Says which processes an earlier, killed run of `env` left running, now killed.
fn note_leftovers(env: &EnvName, lock: &EnvironmentLock) {
    for leaked in &lock.leftovers {
        eprintln!(
            "note: killed process {} ({}), left running in {env} by a run that was killed",
            leaked.pid, leaked.command
        );
    }
}

/// The checks `named`, each one the manifest defines.
pub(crate) fn only_checks(manifest: &Manifest, named: &[String]) -> Result<Vec<CheckId>, Error> {
    let only: Vec<CheckId> = named.iter().map(|c| CheckId(c.clone())).collect();
    for id in &only {
        if !manifest.checks.iter().any(|c| c.id == *id) {
            let known: Vec<&str> = manifest.checks.iter().map(|c| c.id.as_str()).collect();
            return Err(Error::Usage(format!(
                "unknown check `{id}`{}; the manifest defines: {}",
                crate::manifest::diagnostic::suggestion(id.as_str(), known.iter().copied()),
                known.join(", ")
            )));
        }
    }
    Ok(only)
}

/// The report of this run. Its verdict covers what the run was asked to run: these
/// environments, and with `--check` only those checks; and only a run of every required
/// pair of the manifest may print one.
fn run_report(
    manifest: &Manifest,
    only: &[CheckId],
    partials: &[PartialResult],
    names: &[EnvName],
    shard: Option<Shard>,
) -> Report {
    let mut scope = manifest.clone();
    if !only.is_empty() {
        scope.checks.retain(|c| only.contains(&c.id));
    }
    // A shard's report is of the checks it ran (its slices, and in shard 1 what runs
    // whole); it never covers its environments, so it never has a verdict.
    if shard.is_some() {
        scope.checks.retain(|c| {
            names.iter().any(|name| {
                manifest
                    .environment(name.as_str())
                    .is_some_and(|env| crate::plan::slice_of(manifest, c, env, shard).is_some())
            })
        });
    }
    let mut report = Report::build_for(&scope, partials, names);
    report.mark_partial(manifest, partials);
    report
}
