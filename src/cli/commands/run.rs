//! `run`: this environment's share of the matrix, with a live view and the final table.

use std::path::{Path, PathBuf};

use crate::cli::args::{RunArgs, RunFormat};
use crate::cli::live::{Live, Mode};
use crate::cli::local::{only_checks, run_here};
use crate::cli::settings::{Settings, quoter};
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::manifest::aot;
use crate::plan::select;
use crate::render::{self, Format};
use crate::run::facts;
use crate::run::here::admit;
use compact_str::CompactString;

use crate::results::Report;
use crate::results::schema::ItemResult;

pub(super) fn run(settings: &Settings, args: &RunArgs, format: RunFormat) -> Result<i32, Error> {
    let mut manifest = settings.load_manifest()?;
    // Stricter than the manifest, never looser: a flaky pass fails every check, a
    // group's items too.
    if args.fail_on_flaky {
        fail_on_flaky(&mut manifest.checks);
    }
    let chosen = if args.all {
        manifest.environments.iter().collect()
    } else {
        select::select(&manifest, &args.envs, &select::Host)?
    };
    let only = only_checks(&manifest, &args.checks)?;
    let quiet = settings.quiet;
    // A result is written only for an environment this machine is.
    let machine = facts::this_machine(&settings.actions);
    let here = facts::this(&machine);
    let (environments, refused) = admit(chosen, &here, &select::Host);
    for refusal in &refused {
        eprintln!("refused: {}", refusal.line());
        settings.annotate_error(&refusal.line());
    }
    if environments.is_empty() && !refused.is_empty() && !quiet {
        eprintln!("{}", nothing_runs_here(&here));
    }
    // One quoter (the environment's secrets) for the live lines and the final table.
    let run_quoter = quoter(None);
    // With the AoT answer, stdout carries that one object and nothing else.
    let mode = match format {
        RunFormat::Aot | RunFormat::Signal => Mode::Quiet,
        RunFormat::Table => Mode::detect(quiet, settings.actions.actions),
    };
    let live = Live::new(mode, &args.out, usize::from(args.jobs), run_quoter.clone());
    if manifest.skip && !quiet {
        eprintln!("SKIPPED: the manifest says `skip: true`; no check runs");
    }
    let source = settings.source(&manifest.dir);
    let mut ran = run_here(
        &manifest,
        &environments,
        &refused,
        &only,
        args,
        &source,
        &live,
        &machine,
    )?;
    match format {
        RunFormat::Table => {
            let options = settings.table_options(&ran.report, run_quoter);
            print_stdout(&render::render(&ran.report, Format::Table, &options)?)?;
        }
        RunFormat::Signal => {
            // The spec's INFRA_BLOCKED report for what could not run here.
            let options = settings.table_options(&ran.report, run_quoter);
            match render::render(&ran.report, Format::InfraBlocked, &options) {
                Ok(text) => print_stdout(&format!("{text}\n"))?,
                Err(_) => eprintln!("no environment was blocked: every chosen environment ran"),
            }
        }
        RunFormat::Aot => {
            // Log paths as `render --format aot` of the run's folder gives them.
            logs_under(&mut ran.report, &args.out);
            let mut options = settings.table_options(&ran.report, run_quoter);
            options.log_root = Some(PathBuf::from("."));
            options.aot = Some(aot::from_manifest(&manifest));
            print_stdout(&render::render(&ran.report, Format::Aot, &options)?)?;
        }
    }
    let report = &ran.report;
    // The Action's `verdict` output for this leg.
    settings.write_github_output("verdict", report.verdict.as_str())?;
    if !quiet {
        for env in &ran.names {
            let stem = crate::results::Shard::stem(env.as_str(), args.shard);
            let path = crate::run::result_path(&args.out, &stem);
            // An environment that could not be entered wrote none.
            if path.exists() {
                eprintln!("results: {}", path.display());
            }
        }
        if ran.interrupted {
            eprintln!("interrupted: the results written so far are complete and valid");
        }
    }
    Ok(if ran.interrupted {
        exit_code::INTERRUPTED
    } else {
        report.exit_code()
    })
}

/// Makes each log path of `report` (relative to the run's folder `out`) relative to the
/// current folder.
fn logs_under(report: &mut Report, out: &Path) {
    let under = |log: &mut Option<CompactString>| {
        if let Some(path) = log.as_deref() {
            *log = Some(out.join(path).to_string_lossy().replace('\\', "/").into());
        }
    };
    for row in &mut report.rows {
        let d = &mut row.detail;
        under(&mut d.log_path);
        ItemResult::visit_mut(&mut d.items, "", &mut |item, _| under(&mut item.log_path));
    }
}

/// What to do when no chosen environment is this machine: declare one it is, or enter
/// one; the checks never run here as another environment.
fn nothing_runs_here(here: &crate::plan::identity::Machine) -> String {
    let os = here.os.as_deref().unwrap_or("linux");
    let label = match os {
        "macos" => "macos-latest",
        "windows" => "windows-latest",
        _ => "ubuntu-latest",
    };
    format!(
        "nothing ran: this machine ({}) is none of the chosen environments, and a result is \
         only ever written as the environment a machine is. To run the checks here, declare \
         an environment this machine is in verify-matrix.yml (`- name: {os}` with `runs-on: \
         {label}` and `detect: {{ os: {os} }}`; `cargo verify-matrix init` declares the \
         system it runs on), or say how to enter one from here (`enter:`, see \"Entering an \
         environment\" in the book)",
        here.describe()
    )
}

/// `fail-on-flaky` on every one of `checks` and on their groups' items.
fn fail_on_flaky(checks: &mut [crate::manifest::Check]) {
    for check in checks {
        check.fail_on_flaky = true;
        if let crate::manifest::CheckKind::AllOf(items) | crate::manifest::CheckKind::AnyOf(items) =
            &mut check.kind
        {
            fail_on_flaky(items);
        }
    }
}
