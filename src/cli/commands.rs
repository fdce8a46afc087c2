//! What each command does, from parsed arguments to output and exit code.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::args::{
    Cli, Command, GlobalArgs, MatrixFlags, MergeArgs, PlanArgs, PlanFormat, RenderArgs,
    RenderFlags, RunArgs, TrustFlags,
};
use super::color::use_color;
use super::live::{Live, Mode};
use super::{Error, print_stdout};
use crate::exit_code;
use crate::manifest::{self, CheckId, EnvName, Manifest, compare};
use crate::plan::{self, select};
use crate::render::{self, Budget, Format, Quoted, RenderOptions, SignalInfo};
use crate::results::io::{Probe, read_bounded};
use crate::results::source::detect_source;
use crate::results::{
    ManifestOrigin, ManifestTrust, PartialResult, Report, merge, write_json_atomic,
};
use crate::run::process::{Stop, StopReason};
use crate::run::{RunEvent, RunOptions, lock_environments, run_environment};
use crate::untrusted::{Quoter, Redactor};

/// Runs the parsed command line.
pub fn dispatch(cli: Cli) -> Result<i32, Error> {
    if cli.command.is_some() && cli.run.any_set() {
        return Err(Error::Usage(
            "options of `run` (--env, --out, --jobs, --fail-fast, --check) go after the command name, e.g. `run --env linux`; `plan` takes its own --env".to_owned(),
        ));
    }
    match cli.command {
        Some(Command::Plan(args)) => plan_cmd(&cli.global, &args),
        Some(Command::Run(args)) => run_cmd(&cli.global, &args),
        Some(Command::Merge(args)) => merge_cmd(&cli.global, &args),
        Some(Command::Render(args)) => render_cmd(&cli.global, &args),
        Some(Command::ValidateSignal(args)) => {
            super::signal::validate_signal_cmd(&cli.global, &args)
        }
        Some(Command::Publish(args)) => super::publish::publish_cmd(&cli.global, &args),
        Some(Command::Report(args)) => super::publish::report_cmd(&cli.global, &args),
        Some(Command::Exec(args)) => super::exec::exec_cmd(&args),
        Some(Command::Init(args)) => super::init::init_cmd(cli.global.quiet, &args),
        Some(Command::Schema) => super::init::schema_cmd(),
        None => run_cmd(&cli.global, &cli.run),
    }
}

pub(super) fn current_dir() -> Result<PathBuf, Error> {
    std::env::current_dir().map_err(|source| Error::Io {
        context: "cannot read the current directory".to_owned(),
        source,
    })
}

pub(super) fn load_manifest(global: &GlobalArgs) -> Result<Manifest, Error> {
    Ok(manifest::load(global.manifest.as_deref(), &current_dir()?)?)
}

fn plan_cmd(global: &GlobalArgs, args: &PlanArgs) -> Result<i32, Error> {
    let manifest = load_manifest(global)?;
    let only = match &args.env {
        Some(name) => Some(
            manifest
                .environment(name)
                .map(|e| e.name.clone())
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "unknown environment `{name}`; the manifest declares: {}",
                        manifest.environment_list()
                    ))
                })?,
        ),
        None => None,
    };
    let plan = plan::plan(&manifest, only.as_ref());
    match args.format {
        PlanFormat::Table => print_stdout(&plan::table::render(&plan))?,
        PlanFormat::Json => print_stdout(&(pretty(&plan) + "\n"))?,
        PlanFormat::Github => {
            let matrix = serde_json::to_string(&plan.github_matrix()).unwrap_or_default();
            print_stdout(&format!("{matrix}\n"))?;
            write_github_output("matrix", &matrix)?;
        }
    }
    Ok(exit_code::OK)
}

fn pretty<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// Under GitHub Actions, appends `name=value` to `$GITHUB_OUTPUT`.
fn write_github_output(name: &str, value: &str) -> Result<(), Error> {
    let under_actions = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    let Some(path) = std::env::var_os("GITHUB_OUTPUT").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    if !under_actions {
        return Ok(());
    }
    let io_err = |source| Error::Io {
        context: format!("failed to write `{name}` to $GITHUB_OUTPUT"),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(io_err)?;
    writeln!(file, "{name}={value}").map_err(io_err)
}

#[allow(clippy::print_stderr)]
fn run_cmd(global: &GlobalArgs, args: &RunArgs) -> Result<i32, Error> {
    let manifest = load_manifest(global)?;
    let environments = select::select(&manifest, &args.envs, &select::Host)?;
    let only: Vec<CheckId> = args.checks.iter().map(|c| CheckId(c.clone())).collect();
    for id in &only {
        if !manifest.checks.iter().any(|c| c.id == *id) {
            let known: Vec<&str> = manifest.checks.iter().map(|c| c.id.as_str()).collect();
            return Err(Error::Usage(format!(
                "unknown check `{id}`; the manifest defines: {}",
                known.join(", ")
            )));
        }
    }
    let quiet = global.quiet;
    let jobs = usize::from(args.jobs);
    // One quoter (the environment's secrets) for the live lines and the final table.
    let run_quoter = quoter(None);
    let live = Live::new(Mode::detect(quiet), &args.out, jobs, run_quoter.clone());
    let options = RunOptions {
        out_dir: args.out.clone(),
        jobs,
        fail_fast: args.fail_fast,
        only: only.clone(),
        run_timeout: args.run_timeout,
        echo: live.echo(),
    };
    let source = detect_source(&manifest.dir);
    let on_event = |event: RunEvent<'_>| live.event(event);
    if manifest.skip && !quiet {
        eprintln!("SKIPPED: the manifest says `skip: true`; no check runs");
    }
    // Every environment's lock before the first check: a run never finishes one
    // environment and then finds another taken.
    let locks = lock_environments(&args.out, environments.iter().map(|e| e.name.as_str()))?;
    for (env, lock) in environments.iter().zip(&locks) {
        for leaked in &lock.leftovers {
            eprintln!(
                "note: killed process {} ({}), left running in {} by a run that was killed",
                leaked.pid, leaked.command, env.name
            );
        }
    }
    let runtime = super::runtime()?;
    crate::run::leaks::become_subreaper();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(None);
    let mut partials = Vec::new();
    // With `skip: true` each environment still gets its (empty) result file, so that
    // a merge sees it reported rather than missing.
    runtime.block_on(async {
        let _signals = tokio::spawn(forward_signals(Signals::new(), stop_tx));
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
    let interrupted = matches!(
        *stop_rx.borrow(),
        Some(Stop {
            reason: StopReason::Interrupted(_),
            ..
        })
    );
    // The verdict of this run covers what it was asked to run: these environments, and
    // with --check only those checks.
    let mut scope = manifest.clone();
    if !only.is_empty() {
        scope.checks.retain(|c| only.contains(&c.id));
    }
    let names: Vec<EnvName> = environments.iter().map(|e| e.name.clone()).collect();
    let mut report = Report::build_for(&scope, &partials, &names);
    // Only a run of every required pair of the manifest may print a verdict.
    report.mark_partial(&manifest, &partials);
    let options = RenderOptions {
        color: use_color(global.color),
        quoter: run_quoter,
        ..RenderOptions::for_report(&report)
    };
    print_stdout(&render::render(&report, Format::Table, &options)?)?;
    // The Action's `verdict` output for this leg.
    write_github_output("verdict", report.verdict.as_str())?;
    if !quiet {
        for env in &names {
            eprintln!(
                "results: {}",
                crate::run::result_path(&args.out, env.as_str()).display()
            );
        }
    }
    if interrupted {
        if !quiet {
            eprintln!("interrupted: the results written so far are complete and valid");
        }
        return Ok(exit_code::INTERRUPTED);
    }
    Ok(report.exit_code())
}

/// SIGINT, SIGTERM and SIGHUP (what GitHub Actions sends on cancel) stop the run: the
/// first with the grace period, the next at once.
#[allow(clippy::print_stderr)]
pub(super) async fn forward_signals(
    mut signals: Signals,
    stop: tokio::sync::watch::Sender<Option<Stop>>,
) {
    let mut count = 0;
    while let Some(signal) = signals.next().await {
        count += 1;
        eprintln!(
            "{}: {}",
            crate::run::check::signal_name(signal),
            if count == 1 {
                "stopping the running checks (again to kill them at once)"
            } else {
                "killing the running checks"
            }
        );
        let _ = stop.send(Some(Stop {
            reason: StopReason::Interrupted(signal),
            immediate: count > 1,
        }));
    }
}

/// The signals that stop a run, registered before the first check starts so that none
/// can kill the tool the default way.
#[cfg(unix)]
pub(super) struct Signals(Option<[tokio::signal::unix::Signal; 3]>);

#[cfg(unix)]
impl Signals {
    pub(super) fn new() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        let all = (|| {
            Some([
                signal(SignalKind::interrupt()).ok()?,
                signal(SignalKind::terminate()).ok()?,
                signal(SignalKind::hangup()).ok()?,
            ])
        })();
        Signals(all)
    }

    async fn next(&mut self) -> Option<i32> {
        let [int, term, hup] = self.0.as_mut()?;
        tokio::select! {
            _ = int.recv() => Some(2),
            _ = term.recv() => Some(15),
            _ = hup.recv() => Some(1),
        }
    }
}

#[cfg(not(unix))]
pub(super) struct Signals;

#[cfg(not(unix))]
impl Signals {
    pub(super) fn new() -> Signals {
        Signals
    }

    async fn next(&mut self) -> Option<i32> {
        tokio::signal::ctrl_c().await.ok().map(|()| 2)
    }
}

/// Collects partial results under `paths` and builds the report, with log paths made
/// relative to `report_dir`.
#[allow(clippy::print_stderr)]
pub(super) fn merged_report(
    global: &GlobalArgs,
    trust: &TrustFlags,
    paths: &[PathBuf],
    report_dir: &Path,
) -> Result<Report, Error> {
    let collected = merge::collect_in(paths, report_dir, this_run().as_ref())?;
    if !global.quiet {
        for note in &collected.notes {
            eprintln!("note: {note}");
        }
    }
    let (manifest, trust) = judged_manifest(global, trust, &collected.partials)?;
    let partials: Vec<PartialResult> = collected.partials.into_iter().map(|l| l.result).collect();
    let mut report = Report::build(&manifest, &partials);
    report.apply_trust(trust);
    Ok(report)
}

fn merge_cmd(global: &GlobalArgs, args: &MergeArgs) -> Result<i32, Error> {
    let report_dir = match &args.out {
        Some(out) => parent_dir(out),
        None => PathBuf::from("."),
    };
    let report = merged_report(global, &args.trust, &args.paths, &report_dir)?;
    let options = render_options(global, &args.render, &report, report_dir);
    // The report file is an output too: its free text is quoted like any render's.
    let report = Quoted::from_report(report, &options.quoter);
    if let Some(out) = &args.out {
        write_json_atomic(out, report.report())?;
    }
    print_stdout(&render::render_quoted(&report, args.format, &options)?)?;
    Ok(report.exit_code())
}

fn render_cmd(global: &GlobalArgs, args: &RenderArgs) -> Result<i32, Error> {
    let first = &args.files[0];
    // A folder holds partial results (any artifact layout), read as `merge` reads it.
    let probe = if first.is_dir() {
        None
    } else {
        let bytes = read_bounded(first)?;
        let probe = Probe::read(first, &bytes)?.unwrap_or_default();
        probe.rows.is_some().then_some((bytes, probe))
    };
    let (report, log_root) = if let Some((bytes, probe)) = probe {
        if args.files.len() > 1 {
            return Err(Error::Usage(
                "render takes one report, or partial result files; not both".to_owned(),
            ));
        }
        (probed_report(first, &bytes, &probe)?, parent_dir(first))
    } else {
        let here = PathBuf::from(".");
        (
            merged_report(global, &args.trust, &args.files, &here)?,
            here,
        )
    };
    let options = render_options(global, &args.render, &report, log_root);
    let report = Quoted::from_report(report, &options.quoter);
    print_stdout(&render::render_quoted(&report, args.format, &options)?)?;
    // A READY_FOR_REVIEW of a report that is not verified is written (it says why), but
    // the exit code tells the agent it is not ready.
    Ok(match args.format {
        Format::Signal => report.exit_code(),
        _ => exit_code::OK,
    })
}

/// A report read from a file, which may come from an artifact: its names must be ones a
/// manifest can declare.
pub(super) fn checked_report(path: &Path, bytes: &[u8]) -> Result<Report, Error> {
    let probe = Probe::read(path, bytes)?.unwrap_or_default();
    probed_report(path, bytes, &probe)
}

/// [`checked_report`] when the keys of `bytes` are already probed.
fn probed_report(path: &Path, bytes: &[u8], probe: &Probe) -> Result<Report, Error> {
    let report: Report = probe.parse(path, bytes)?;
    if let Some(name) = report.invalid_name() {
        return Err(Error::InvalidInput(format!(
            "report `{}` is not valid: `{}` is not a check or environment name",
            path.display(),
            name.escape_debug()
        )));
    }
    Ok(report)
}

/// The options the matrix flags set, with logs read relative to `log_root` and text
/// quoted by `quoter`.
pub(super) fn matrix_options(
    flags: &MatrixFlags,
    report: &Report,
    log_root: PathBuf,
    quoter: Quoter,
) -> RenderOptions {
    let defaults = RenderOptions::for_report(report);
    RenderOptions {
        key: flags.key.clone().unwrap_or(defaults.key),
        log_root: Some(log_root),
        tail_lines: flags.tail_lines,
        link: flags.link.clone().or_else(run_url),
        web: std::env::var("GITHUB_SERVER_URL")
            .ok()
            .filter(|url| !url.is_empty()),
        quoter,
        ..defaults
    }
}

/// Quotes untrusted text, masking the values of this process's secret-looking
/// variables, `token` (the tool's own, when given) and token shapes.
pub(super) fn quoter(token: Option<&str>) -> Quoter {
    let vars = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    let mut redactor = Redactor::from_vars(vars);
    if let Some(token) = token {
        redactor.add(token);
    }
    Quoter::new(redactor)
}

/// The render options of `merge` and `render`.
fn render_options(
    global: &GlobalArgs,
    flags: &RenderFlags,
    report: &Report,
    log_root: PathBuf,
) -> RenderOptions {
    RenderOptions {
        color: use_color(global.color),
        budget: Budget {
            max_bytes: flags.max_bytes,
            max_chars: flags.max_chars,
        },
        signal: SignalInfo {
            task_id: flags.task_id.clone(),
            files: flags.modified_files.clone(),
            tests: flags.tests_written.clone(),
            summary: flags.summary.clone(),
        },
        ..matrix_options(&flags.matrix, report, log_root, quoter(None))
    }
}

/// Under GitHub Actions, the workflow run and attempt this process is part of.
fn this_run() -> Option<merge::ThisRun> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if var("GITHUB_ACTIONS").as_deref() != Some("true") {
        return None;
    }
    Some(merge::ThisRun {
        id: var("GITHUB_RUN_ID")?,
        attempt: var("GITHUB_RUN_ATTEMPT")?.parse().ok()?,
    })
}

/// Under GitHub Actions, the page of this workflow run.
fn run_url() -> Option<String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if var("GITHUB_ACTIONS").as_deref() != Some("true") {
        return None;
    }
    let server = var("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".to_owned());
    Some(format!(
        "{}/{}/actions/runs/{}",
        server.trim_end_matches('/'),
        var("GITHUB_REPOSITORY")?,
        var("GITHUB_RUN_ID")?
    ))
}

pub(super) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The manifest the results are judged against, and how it relates to the results'
/// own manifest and to a trusted base: `--manifest` when given, else the manifest in
/// the checked-out tree, else the copy embedded in the results. When the one used is
/// not the results' own, it is the trusted one: the results' manifest is compared with
/// it (or with `--base-manifest`), and its changes are listed.
#[allow(clippy::print_stderr)]
fn judged_manifest(
    global: &GlobalArgs,
    flags: &TrustFlags,
    partials: &[merge::Loaded],
) -> Result<(Manifest, ManifestTrust), Error> {
    // `merge::collect` has checked that every result names the same digest.
    let loaded = partials
        .first()
        .ok_or_else(|| Error::Usage("no result files given".to_owned()))?;
    let results = loaded.embedded_manifest()?;
    if results.digest != loaded.result.manifest.digest {
        return Err(Error::InvalidInput(format!(
            "`{}` embeds a manifest whose digest ({}) is not the one it records ({})",
            loaded.path.display(),
            results.digest,
            loaded.result.manifest.digest
        )));
    }
    let here = current_dir()?;
    let (used, origin) = match &global.manifest {
        Some(path) => (manifest::load(Some(path), &here)?, ManifestOrigin::Given),
        None => match manifest::discover(&here) {
            Ok(manifest::Found::Yaml(path) | manifest::Found::Cargo(path)) => {
                (manifest::load(Some(&path), &here)?, ManifestOrigin::Tree)
            }
            Err(manifest::ManifestError::NotFound { .. }) => {
                (results.clone(), ManifestOrigin::Embedded)
            }
            Err(e) => return Err(e.into()),
        },
    };
    let base = match &flags.base_manifest {
        Some(path) => Some(manifest::load(Some(path), &here)?),
        None => None,
    };
    let mut trust = ManifestTrust {
        origin: Some(origin),
        allow_weakening: flags.allow_weakening,
        ..ManifestTrust::default()
    };
    if used.digest != results.digest {
        trust.results_digest = Some(results.digest.clone());
        if !global.quiet {
            eprintln!(
                "note: the results were produced from another manifest ({}); they are judged against `{}` ({}, {})",
                results.digest,
                used.path.display(),
                origin.describe(),
                used.digest
            );
        }
    }
    let reference = base
        .as_ref()
        .or((used.digest != results.digest).then_some(&used));
    if let Some(reference) = reference {
        trust.compared_with = Some(reference.digest.clone());
        trust.changes = compare::changes(reference, &results);
    }
    Ok((used, trust))
}
