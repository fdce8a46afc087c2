//! `publish`: a report to the job summary, the PR comment and a check run; or, with
//! `--pending`, the mark that the head commit is being verified.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::cli::args::{PublishArgs, PublishFlags};
use crate::cli::judge::report_file;
use crate::cli::publishing::{
    context, manifest_key, publish_report, publish_settings, send, targets,
};
use crate::cli::settings::{Settings, current_dir, quoter};
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::publish::{self, Target};
use crate::render::Quoted;
use crate::results::Report;

pub(super) fn run(settings: &Settings, args: &PublishArgs) -> Result<i32, Error> {
    let Some(path) = &args.report else {
        return pending(settings, &args.publish);
    };
    let report = report_file(path)?;
    let report = Quoted::from_report(report, &quoter(args.publish.token.as_deref()));
    publish_report(settings, &report, path, &args.publish, false)
}

/// `publish --pending`: marks the head commit as being verified. Exits 0 when GitHub
/// refuses the token (a fork's read-only token: the report publishes where it can), 5
/// when publishing fails otherwise.
fn pending(settings: &Settings, flags: &PublishFlags) -> Result<i32, Error> {
    let key = match &flags.matrix.key {
        Some(key) => key.clone(),
        None => manifest_key(settings)?,
    };
    let mut report = Report::unjudged(&key, "pending");
    report.source = settings.source(&current_dir()?);
    if crate::cli::gitlab_publishing::service(settings, flags) == crate::cli::flags::Ci::Gitlab {
        let quoter = quoter(flags.token.as_deref());
        return crate::cli::gitlab_publishing::pending(settings, flags, report, quoter);
    }
    let context = context(settings, flags, &report)?;
    // The commit and repository being marked, as the publication names them.
    report.source.commit = context.head_sha.clone();
    report.source.repository = context.repository.clone();
    let quoter = quoter(flags.token.as_deref());
    let report = Quoted::from_report(report, &quoter);
    let options =
        settings.matrix_options(&flags.matrix, &report, PathBuf::from("."), quoter.clone());
    let targets = targets(flags, &[Target::Comment, Target::CheckRun]);
    let publish_settings = publish_settings(flags, targets, HashMap::new());
    let publication = publish::plan_pending(&report, &publish_settings, &options, &context)?;
    if flags.dry_run {
        print_stdout(&publication.describe())?;
        return Ok(exit_code::OK);
    }
    if !settings.quiet {
        for note in &publication.notes {
            eprintln!("note: {note}");
        }
    }
    let Some(sent) = send(settings, flags, &publication, &context)? else {
        return Ok(exit_code::OK);
    };
    if !sent.denied.is_empty() {
        eprintln!(
            "warning: the pending mark was not published; the report job still publishes the verdict"
        );
    }
    Ok(if sent.failed.is_empty() {
        exit_code::OK
    } else {
        exit_code::PUBLISH_FAILED
    })
}
