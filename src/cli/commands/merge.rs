//! `merge`: the partial results of every environment, judged as one report.

use std::path::PathBuf;

use crate::cli::args::MergeArgs;
use crate::cli::judge::merged_report;
use crate::cli::settings::{Settings, parent_dir};
use crate::cli::{Error, print_stdout};
use crate::render::{self, Quoted};
use crate::results::write_json_atomic;

pub(super) fn run(settings: &Settings, args: &MergeArgs) -> Result<i32, Error> {
    let report_dir = match &args.out {
        Some(out) => parent_dir(out),
        None => PathBuf::from("."),
    };
    let report = merged_report(settings, &args.trust, &args.paths, &report_dir)?;
    let options = settings.render_options(&args.render, &report, report_dir);
    // The report file is an output too: its free text is quoted like any render's.
    let report = Quoted::from_report(report, &options.quoter);
    if let Some(out) = &args.out {
        write_json_atomic(out, report.report())?;
    }
    print_stdout(&render::render_quoted(&report, args.format, &options)?)?;
    Ok(report.exit_code())
}
