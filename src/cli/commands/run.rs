//! `run`: this environment's share of the matrix, with a live view and the final table.

use crate::cli::args::RunArgs;
use crate::cli::live::{Live, Mode, announce};
use crate::cli::settings::{Settings, quoter};
use crate::cli::{Error, print_stdout, session};
use crate::exit_code;
use crate::manifest::{CheckId, EnvName, Manifest};
use crate::plan::select;
use crate::render::{self, Format};
use crate::results::{PartialResult, Report};
use crate::run::{EnvironmentLock, RunOptions, lock_environments, run_environment};

pub(super) fn run(settings: &Settings, args: &RunArgs) -> Result<i32, Error> {
    let manifest = settings.load_manifest()?;
    let environments = select::select(&manifest, &args.envs, &select::Host)?;
    let only = only_checks(&manifest, &args.checks)?;
    let quiet = settings.quiet;
    let jobs = usize::from(args.jobs);
    // One quoter (the environment's secrets) for the live lines and the final table.
    let run_quoter = quoter(None);
    let live = Live::new(
        Mode::detect(quiet, settings.actions.actions),
        &args.out,
        jobs,
        run_quoter.clone(),
    );
    let options = RunOptions {
        out_dir: args.out.clone(),
        jobs,
        fail_fast: args.fail_fast,
        only: only.clone(),
        run_timeout: args.run_timeout,
        echo: live.echo(),
    };
    let source = settings.source(&manifest.dir);
    let on_event = |event: crate::run::RunEvent<'_>| live.event(event);
    if manifest.skip && !quiet {
        eprintln!("SKIPPED: the manifest says `skip: true`; no check runs");
    }
    // Every environment's lock before the first check: a run never finishes one
    // environment and then finds another taken.
    let locks = lock_environments(&args.out, environments.iter().map(|e| e.name.as_str()))?;
    for (env, lock) in environments.iter().zip(&locks) {
        note_leftovers(&env.name, lock);
    }
    let mut session = session()?;
    let mut partials = Vec::new();
    let stop_rx = session.stop();
    // With `skip: true` each environment still gets its (empty) result file, so that
    // a merge sees it reported rather than missing.
    session.block_on(announce, async {
        for (env, lock) in environments.iter().zip(&locks) {
            let partial = run_environment(
                &manifest,
                env,
                lock,
                &source,
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
        Ok::<(), Error>(())
    })?;
    live.finish();
    let interrupted = session.interrupted();
    let names: Vec<EnvName> = environments.iter().map(|e| e.name.clone()).collect();
    let report = run_report(&manifest, &only, &partials, &names);
    let options = settings.table_options(&report, run_quoter);
    print_stdout(&render::render(&report, Format::Table, &options)?)?;
    // The Action's `verdict` output for this leg.
    settings.write_github_output("verdict", report.verdict.as_str())?;
    if !quiet {
        for env in &names {
            eprintln!(
                "results: {}",
                crate::run::result_path(&args.out, env.as_str()).display()
            );
        }
        if interrupted {
            eprintln!("interrupted: the results written so far are complete and valid");
        }
    }
    Ok(if interrupted {
        exit_code::INTERRUPTED
    } else {
        report.exit_code()
    })
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

/// The checks `--check` names, each one the manifest defines.
fn only_checks(manifest: &Manifest, named: &[String]) -> Result<Vec<CheckId>, Error> {
    let only: Vec<CheckId> = named.iter().map(|c| CheckId(c.clone())).collect();
    for id in &only {
        if !manifest.checks.iter().any(|c| c.id == *id) {
            let known: Vec<&str> = manifest.checks.iter().map(|c| c.id.as_str()).collect();
            return Err(Error::Usage(format!(
                "unknown check `{id}`; the manifest defines: {}",
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
) -> Report {
    let mut scope = manifest.clone();
    if !only.is_empty() {
        scope.checks.retain(|c| only.contains(&c.id));
    }
    let mut report = Report::build_for(&scope, partials, names);
    report.mark_partial(manifest, partials);
    report
}
