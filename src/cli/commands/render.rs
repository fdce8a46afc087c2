//! `render`: a report, or partial results judged as `merge` judges them, in any format.

use std::path::PathBuf;

use crate::cli::args::RenderArgs;
use crate::cli::judge::{Contracts, merged, probed_report, streamed_report};
use crate::cli::settings::{Settings, parent_dir};
use crate::cli::{Error, print_json_pretty, print_stdout};
use crate::exit_code;
use crate::render::{self, Format, Quoted};
use crate::results::io::{Probe, ResultFileError, read_bounded};

pub(super) fn run(settings: &Settings, args: &RenderArgs) -> Result<i32, Error> {
    let first = &args.files[0];
    // A folder holds partial results (any artifact layout), read as `merge` reads it.
    let report = if first.is_dir() {
        None
    } else {
        match read_bounded(first) {
            Ok(bytes) => {
                let probe = Probe::read(first, &bytes)?.unwrap_or_default();
                match probe.rows {
                    Some(_) => Some(probed_report(first, &bytes, &probe)?),
                    None => None,
                }
            }
            // Larger than any partial result may be: a report (every pair of the
            // matrix), parsed as it is read.
            Err(ResultFileError::TooLarge { .. }) => Some(streamed_report(first)?),
            Err(e) => return Err(e.into()),
        }
    };
    let (report, log_root, contracts) = if let Some(report) = report {
        if args.files.len() > 1 {
            return Err(Error::Usage(
                "render takes one report, or partial result files; not both".to_owned(),
            ));
        }
        (report, parent_dir(first), Contracts::default())
    } else {
        let here = PathBuf::from(".");
        let (report, contracts) = merged(settings, &args.trust, &args.files, &here, args.format)?;
        (report, here, contracts)
    };
    let options = settings
        .render_options(&args.render, &report, log_root)
        .with_contracts(contracts.steps, contracts.aot);
    let report = Quoted::from_report(report, &options.quoter);
    let shown = match args.format {
        Format::Json => print_json_pretty(report.report()),
        format => render::render_quoted(&report, format, &options)
            .map_err(Error::from)
            .and_then(|text| print_stdout(&text)),
    };
    // A READY_FOR_REVIEW of a report that is not verified is written (it says why), but
    // the exit code tells the agent it is not ready.
    let code = match args.format {
        Format::Signal => report.exit_code(),
        _ => exit_code::OK,
    };
    // Every row of a large matrix freed one by one takes a noticeable time at exit,
    // and the process is about to end.
    std::mem::forget(report);
    shown?;
    Ok(code)
}
