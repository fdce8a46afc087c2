//! `publish`: a report to the job summary, the PR comment and a check run (on GitLab,
//! the job log, the merge-request note and a commit status); or, with `--pending`, the
//! mark that the head commit is being verified.

use crate::cli::Error;
use crate::cli::args::{PublishArgs, PublishFlags};
use crate::cli::engine;
use crate::cli::judge::report_file;
use crate::cli::publishing::manifest_key;
use crate::cli::settings::{Settings, current_dir, quoter};
use crate::render::Quoted;
use crate::results::Report;

pub(super) fn run(settings: &Settings, args: &PublishArgs) -> Result<i32, Error> {
    let Some(path) = &args.report else {
        return pending(settings, &args.publish);
    };
    let report = report_file(path)?;
    let report = Quoted::from_report(report, &quoter(args.publish.token.as_deref()));
    engine::of(settings, args.publish.ci).publish_report(
        settings,
        &report,
        path,
        &args.publish,
        false,
    )
}

/// `publish --pending`: marks the head commit as being verified. Exits 0 when the
/// service refuses the token (a fork's read-only token: the report publishes where it
/// can), 5 when publishing fails otherwise.
fn pending(settings: &Settings, flags: &PublishFlags) -> Result<i32, Error> {
    let key = match &flags.matrix.key {
        Some(key) => key.clone(),
        None => manifest_key(settings)?,
    };
    let mut report = Report::unjudged(&key, "pending");
    report.source = settings.source(&current_dir()?);
    let quoter = quoter(flags.token.as_deref());
    engine::of(settings, flags.ci).publish_pending(settings, flags, report, quoter)
}
