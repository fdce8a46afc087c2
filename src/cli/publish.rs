//! `publish` and `report`: putting a report where reviewers look.

use std::path::Path;

use super::args::{GlobalArgs, PublishArgs, PublishFlags, ReportArgs};
use super::color::use_color;
use super::commands::{checked_report, matrix_options, merged_report, parent_dir};
use super::{Error, print_stdout};
use crate::publish::{self, ActionsFiles, Target};
use crate::render::{self, Format, RenderOptions};
use crate::results::io::read_bounded;
use crate::results::{Report, write_json_atomic};

pub(super) fn publish_cmd(global: &GlobalArgs, args: &PublishArgs) -> Result<i32, Error> {
    let report = checked_report(&args.report, &read_bounded(&args.report)?)?;
    publish_report(global, &report, &args.report, &args.publish)
}

pub(super) fn report_cmd(global: &GlobalArgs, args: &ReportArgs) -> Result<i32, Error> {
    let report_dir = parent_dir(&args.out);
    let report = merged_report(global, &args.paths, &report_dir)?;
    write_json_atomic(&args.out, &report)?;
    let options = RenderOptions {
        color: use_color(global.color),
        ..RenderOptions::for_report(&report)
    };
    print_stdout(&render::render(&report, Format::Table, &options)?)?;
    publish_report(global, &report, &args.out, &args.publish)
}

/// Publishes `report` (read from, or written to, `path`); the exit code is the
/// verdict's once publishing worked.
#[allow(clippy::print_stderr)]
fn publish_report(
    global: &GlobalArgs,
    report: &Report,
    path: &Path,
    flags: &PublishFlags,
) -> Result<i32, Error> {
    let targets = if flags.to.is_empty() {
        vec![Target::Summary]
    } else {
        flags.to.clone()
    };
    let options = matrix_options(&flags.matrix, report, parent_dir(path));
    let files = ActionsFiles::from_env();
    let publication = publish::plan(report, path, &targets, &options, &files, flags.dry_run)?;
    if flags.dry_run {
        print_stdout(&publication.describe())?;
    } else {
        publication.apply()?;
        if !global.quiet
            && let Some((file, _)) = &publication.summary
        {
            eprintln!("published: job summary ({})", file.display());
        }
    }
    Ok(report.exit_code())
}
