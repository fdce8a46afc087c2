//! `report`: merge, render and publish in one step, the final job of a workflow. Whatever
//! keeps the results from being judged, this commit gets a NOT VERIFIED with the reason.

use crate::cli::args::ReportArgs;
use crate::cli::judge::merged_report;
use crate::cli::publishing::{manifest_key, publish_report};
use crate::cli::settings::{Settings, current_dir, parent_dir, quoter};
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::render::{self, Format, Quoted};
use crate::results::merge::MergeError;
use crate::results::{Report, write_report_replacing};

pub(super) fn run(settings: &Settings, args: &ReportArgs) -> Result<i32, Error> {
    let report_dir = parent_dir(&args.out);
    let report = match merged_report(settings, &args.trust, &args.paths, &report_dir) {
        Ok(mut report) => {
            if args.cancelled {
                report.mark_cancelled();
            }
            report
        }
        // Whatever kept the results from being judged (no results after a failed plan or
        // cancelled legs, an invalid manifest, unreadable artifacts), this commit gets a
        // NOT VERIFIED with the reason: an earlier commit's VERIFIED must not stand.
        Err(error) if error.exit_code() == exit_code::INVALID_INPUT => {
            // An invalid manifest (a failed plan) is the reason, before missing results.
            let reason = match settings.load_manifest() {
                Err(Error::Manifest(manifest)) => {
                    format!(
                        "no verdict: the manifest is invalid: {}",
                        manifest.one_line()
                    )
                }
                Err(other) => format!("no verdict: {other}"),
                Ok(_) => unjudged_reason(&error),
            };
            {
                eprintln!("error: {error}");
            }
            let mut report = Report::unjudged(&manifest_key(settings)?, &reason);
            // The commit and run this verdict is about, as the comment names them.
            report.source = settings.source(&current_dir()?);
            if args.cancelled {
                report.mark_cancelled();
            }
            publish_built(settings, args, report)?;
            return Ok(error.exit_code());
        }
        Err(error) => return Err(error),
    };
    publish_built(settings, args, report)
}

/// Why a report could not judge any result, for the published NOT VERIFIED.
fn unjudged_reason(error: &Error) -> String {
    match error {
        Error::Merge(MergeError::Nothing(_) | MergeError::NoSuchPath { .. }) => format!(
            "no results to judge ({error}): the plan, or every environment's run, failed or was cancelled"
        ),
        _ => format!("no verdict: {error}"),
    }
}

/// Writes, shows and publishes a report `report` made.
fn publish_built(settings: &Settings, args: &ReportArgs, report: Report) -> Result<i32, Error> {
    let options = settings.table_options(&report, quoter(args.publish.token.as_deref()));
    // Quoted once: the report file, the table and every publication use the same text.
    let report = Quoted::from_report(report, &options.quoter);
    write_report_replacing(&args.out, report.report())?;
    print_stdout(&render::render_quoted(&report, Format::Table, &options)?)?;
    publish_report(settings, &report, &args.out, &args.publish)
}
