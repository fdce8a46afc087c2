//! `merge`: the partial results of every environment, judged as one report.

use std::path::PathBuf;

use crate::cli::args::MergeArgs;
use crate::cli::judge::merged;
use crate::cli::settings::{Settings, parent_dir};
use crate::cli::{Error, print_json_pretty, print_stdout};
use crate::render::{self, Format, Quoted};
use crate::results::write_report_replacing;

pub(super) fn run(settings: &Settings, args: &MergeArgs) -> Result<i32, Error> {
    let report_dir = match &args.out {
        Some(out) => parent_dir(out),
        None => PathBuf::from("."),
    };
    let (report, contracts) = merged(settings, &args.trust, &args.paths, &report_dir, args.format)?;
    let options = settings
        .render_options(&args.render, &report, report_dir)
        .with_contracts(contracts.steps, contracts.aot);
    // The report file is an output too: its free text is quoted like any render's.
    let report = Quoted::from_report(report, &options.quoter);
    // The report is written while the matrix is rendered (or, for JSON, printed): at
    // GitHub's largest matrices each takes a good part of the time, and they only read
    // the report.
    let (written, shown) = std::thread::scope(|scope| {
        let writing = args
            .out
            .as_ref()
            .map(|out| scope.spawn(|| write_report_replacing(out, report.report())));
        // JSON is streamed to stdout as it is serialized; the other formats are
        // rendered here and printed once the report is written.
        let shown = match args.format {
            Format::Json => print_json_pretty(report.report()).map(|()| None),
            format => render::render_quoted(&report, format, &options)
                .map(Some)
                .map_err(Error::from),
        };
        let written = writing.map(|w| {
            w.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        (written, shown)
    });
    let code = report.exit_code();
    // Every row of a large matrix freed one by one takes a noticeable time at exit,
    // and the process is about to end (also when it ends with an error below).
    std::mem::forget(report);
    written.transpose()?;
    if let Some(text) = shown? {
        print_stdout(&text)?;
    }
    Ok(code)
}
