//! `run`: this environment's share of the matrix, with a live view and the final table.

use crate::cli::args::RunArgs;
use crate::cli::live::{Live, Mode};
use crate::cli::local::{only_checks, result_path, run_here};
use crate::cli::settings::{Settings, quoter};
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::plan::select;
use crate::render::{self, Format};

pub(super) fn run(settings: &Settings, args: &RunArgs) -> Result<i32, Error> {
    let manifest = settings.load_manifest()?;
    let environments = select::select(&manifest, &args.envs, &select::Host)?;
    let only = only_checks(&manifest, &args.checks)?;
    let quiet = settings.quiet;
    // One quoter (the environment's secrets) for the live lines and the final table.
    let run_quoter = quoter(None);
    let live = Live::new(
        Mode::detect(quiet, settings.actions.actions),
        &args.out,
        usize::from(args.jobs),
        run_quoter.clone(),
    );
    if manifest.skip && !quiet {
        eprintln!("SKIPPED: the manifest says `skip: true`; no check runs");
    }
    let source = settings.source(&manifest.dir);
    let ran = run_here(&manifest, &environments, &only, args, &source, &live)?;
    let report = &ran.report;
    let options = settings.table_options(report, run_quoter);
    print_stdout(&render::render(report, Format::Table, &options)?)?;
    // The Action's `verdict` output for this leg.
    settings.write_github_output("verdict", report.verdict.as_str())?;
    if !quiet {
        for env in &ran.names {
            eprintln!("results: {}", result_path(&args.out, env).display());
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
