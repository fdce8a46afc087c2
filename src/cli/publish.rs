//! `publish` and `report`: putting a report where reviewers look.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::args::{GlobalArgs, PublishArgs, PublishFlags, ReportArgs};
use super::color::use_color;
use super::commands::{
    checked_report, current_dir, load_manifest, matrix_options, merged_report, parent_dir, quoter,
};
use super::{Error, print_stdout, runtime};
use crate::exit_code;
use crate::manifest;
use crate::publish::{
    self, ActionsFiles, CheckSite, Context, GitHub, Overrides, Publication, RetryPolicy, Sent,
    Settings, Target, Token,
};
use crate::render::{self, Format, Quoted, RenderOptions};
use crate::results::io::read_bounded;
use crate::results::merge::MergeError;
use crate::results::source::detect_source;
use crate::results::{Report, write_json_atomic};

pub(super) fn publish_cmd(global: &GlobalArgs, args: &PublishArgs) -> Result<i32, Error> {
    let Some(path) = &args.report else {
        return pending_cmd(global, &args.publish);
    };
    let report = checked_report(path, &read_bounded(path)?)?;
    let report = Quoted::from_report(report, &quoter(args.publish.token.as_deref()));
    publish_report(global, &report, path, &args.publish)
}

/// `publish --pending`: marks the head commit as being verified. Exits 0 when GitHub
/// refuses the token (a fork's read-only token: the report publishes where it can), 5
/// when publishing fails otherwise.
#[allow(clippy::print_stderr)]
fn pending_cmd(global: &GlobalArgs, flags: &PublishFlags) -> Result<i32, Error> {
    let key = match &flags.matrix.key {
        Some(key) => key.clone(),
        None => manifest_key(global)?,
    };
    let mut report = Report::unjudged(&key, "pending");
    report.source = detect_source(&current_dir()?);
    let context = context(flags, &report)?;
    // The commit and repository being marked, as the publication names them.
    report.source.commit = context.head_sha.clone();
    report.source.repository = context.repository.clone();
    let quoter = quoter(flags.token.as_deref());
    let report = Quoted::from_report(report, &quoter);
    let options = matrix_options(&flags.matrix, &report, PathBuf::from("."), quoter.clone());
    let settings = Settings {
        targets: if flags.to.is_empty() {
            vec![Target::Comment, Target::CheckRun]
        } else {
            flags.to.clone()
        },
        dry_run: flags.dry_run,
        check_name: flags.check_name.clone(),
        comment_author: flags.comment_author.clone(),
        sites: HashMap::new(),
    };
    let publication = publish::plan_pending(&report, &settings, &options, &context)?;
    if flags.dry_run {
        print_stdout(&publication.describe())?;
        return Ok(exit_code::OK);
    }
    if !global.quiet {
        for note in &publication.notes {
            eprintln!("note: {note}");
        }
    }
    let Some(sent) = send(global, flags, &publication, &context)? else {
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

/// The publication's target, from the environment, the report and the command line.
fn context(flags: &PublishFlags, report: &Report) -> Result<Context, Error> {
    let overrides = Overrides {
        repository: flags.repo.clone(),
        pr: flags.pr,
        sha: flags.sha.clone(),
    };
    let var = |name: &str| std::env::var(name).ok();
    let mut context =
        Context::resolve(&var, report, &overrides).map_err(publish::PublishError::from)?;
    // A dry run works anywhere: what nothing names is shown as a placeholder.
    if flags.dry_run {
        context
            .repository
            .get_or_insert_with(|| DRY_RUN_REPOSITORY.to_owned());
        context
            .head_sha
            .get_or_insert_with(|| DRY_RUN_SHA.to_owned());
    }
    Ok(context)
}

/// What a dry run shows for a repository nothing names (`--repo`, `GITHUB_REPOSITORY`).
const DRY_RUN_REPOSITORY: &str = "OWNER/NAME";
/// What a dry run shows for a commit nothing names (`--sha`, the event, the results).
const DRY_RUN_SHA: &str = "HEAD-SHA";

pub(super) fn report_cmd(global: &GlobalArgs, args: &ReportArgs) -> Result<i32, Error> {
    let report_dir = parent_dir(&args.out);
    let report = match merged_report(global, &args.trust, &args.paths, &report_dir) {
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
            let reason = match load_manifest(global) {
                Err(Error::Manifest(manifest)) => {
                    format!(
                        "no verdict: the manifest is invalid: {}",
                        manifest.one_line()
                    )
                }
                Err(other) => format!("no verdict: {other}"),
                Ok(_) => unjudged_reason(&error),
            };
            #[allow(clippy::print_stderr)]
            {
                eprintln!("error: {error}");
            }
            let mut report = Report::unjudged(&manifest_key(global)?, &reason);
            // The commit and run this verdict is about, as the comment names them.
            report.source = detect_source(&current_dir()?);
            if args.cancelled {
                report.mark_cancelled();
            }
            publish_built(global, args, report)?;
            return Ok(error.exit_code());
        }
        Err(error) => return Err(error),
    };
    publish_built(global, args, report)
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

/// The sticky comment's key when the manifest cannot be read: `--manifest`, else the
/// file the search finds, else the first name searched for.
fn manifest_key(global: &GlobalArgs) -> Result<String, Error> {
    if let Some(path) = &global.manifest {
        return Ok(path.display().to_string());
    }
    Ok(match manifest::discover(&current_dir()?) {
        Ok(manifest::Found::Yaml(path) | manifest::Found::Cargo(path)) => {
            path.display().to_string()
        }
        Err(_) => manifest::FILE_NAMES[0].to_owned(),
    })
}

/// Writes, shows and publishes a report `report` made.
fn publish_built(global: &GlobalArgs, args: &ReportArgs, report: Report) -> Result<i32, Error> {
    let options = RenderOptions {
        color: use_color(global.color),
        quoter: quoter(args.publish.token.as_deref()),
        ..RenderOptions::for_report(&report)
    };
    // Quoted once: the report file, the table and every publication use the same text.
    let report = Quoted::from_report(report, &options.quoter);
    write_json_atomic(&args.out, report.report())?;
    print_stdout(&render::render_quoted(&report, Format::Table, &options)?)?;
    publish_report(global, &report, &args.out, &args.publish)
}

/// Explains a refused token, the usual case being a pull request from a fork.
const DENIED_HELP: &str = "GitHub refused the token. On a pull request from a fork, workflows get a read-only \
token: publish from a separate workflow triggered by `workflow_run` (README, \"Fork pull requests\"). \
Otherwise give the job `permissions: pull-requests: write` (comment) and `checks: write` (check run).";

/// Publishes `report` (read from, or written to, `path`); the exit code is the
/// verdict's once publishing worked, or was refused for want of permission.
#[allow(clippy::print_stderr)]
fn publish_report(
    global: &GlobalArgs,
    report: &Quoted,
    path: &Path,
    flags: &PublishFlags,
) -> Result<i32, Error> {
    let targets = if flags.to.is_empty() {
        vec![Target::Summary]
    } else {
        flags.to.clone()
    };
    let to_github = targets.contains(&Target::Comment) || targets.contains(&Target::CheckRun);
    // The secrets the report was quoted with, the token among them.
    let options = matrix_options(
        &flags.matrix,
        report,
        parent_dir(path),
        report.quoter().clone(),
    );
    let context = if to_github {
        Some(context(flags, report)?)
    } else {
        None
    };
    let settings = Settings {
        sites: if targets.contains(&Target::CheckRun) {
            check_sites(global, report)
        } else {
            HashMap::new()
        },
        targets,
        dry_run: flags.dry_run,
        check_name: flags.check_name.clone(),
        comment_author: flags.comment_author.clone(),
    };
    let files = ActionsFiles::from_env();
    let publication = publish::plan(report, path, &settings, &options, &files, context.as_ref())?;
    if flags.dry_run {
        print_stdout(&publication.describe())?;
        return Ok(report.exit_code());
    }
    // The token is checked before anything is written, so a missing one fails cleanly.
    let runtime_and_client = match &context {
        Some(context) if publication.comment.is_some() || publication.check_run.is_some() => {
            Some(connect(global, flags, context)?)
        }
        _ => None,
    };
    publication.apply()?;
    if !global.quiet {
        if let Some((file, _)) = &publication.summary {
            eprintln!("published: job summary ({})", file.display());
        }
        for note in &publication.notes {
            eprintln!("note: {note}");
        }
    }
    let Some(connected) = runtime_and_client else {
        return Ok(report.exit_code());
    };
    let sent = deliver(global, &publication, connected);
    if !sent.denied.is_empty() {
        eprintln!("warning: {DENIED_HELP}");
        if let Some(file) = publication.apply_fallback()? {
            eprintln!(
                "warning: the matrix was written to the job summary ({}) instead",
                file.display()
            );
        }
    }
    if sent.failed.is_empty() {
        Ok(report.exit_code())
    } else {
        Ok(exit_code::PUBLISH_FAILED)
    }
}

/// The runtime and the GitHub client publishing runs on (octocrab's client is made
/// inside the runtime it will run on).
fn connect(
    global: &GlobalArgs,
    flags: &PublishFlags,
    context: &Context,
) -> Result<(tokio::runtime::Runtime, GitHub), Error> {
    let runtime = runtime()?;
    let github = {
        let _entered = runtime.enter();
        client(global, flags, context)?
    };
    Ok((runtime, github))
}

/// Sends the comment and the check run of `publication`, when it has either.
fn send(
    global: &GlobalArgs,
    flags: &PublishFlags,
    publication: &Publication,
    context: &Context,
) -> Result<Option<Sent>, Error> {
    if publication.comment.is_none() && publication.check_run.is_none() {
        return Ok(None);
    }
    let connected = connect(global, flags, context)?;
    Ok(Some(deliver(global, publication, connected)))
}

/// Sends `publication` and says what happened: each target published, refused, failed.
#[allow(clippy::print_stderr)]
fn deliver(
    global: &GlobalArgs,
    publication: &Publication,
    (runtime, github): (tokio::runtime::Runtime, GitHub),
) -> Sent {
    let sent = runtime.block_on(publication.send(&github));
    if !global.quiet {
        for line in &sent.done {
            eprintln!("published: {line}");
        }
    }
    for denied in &sent.denied {
        eprintln!("warning: {denied}");
    }
    for failed in &sent.failed {
        eprintln!("error: publishing failed: {failed}");
    }
    sent
}

/// The GitHub client, with the token from `--token` or `$GITHUB_TOKEN`.
fn client(global: &GlobalArgs, flags: &PublishFlags, context: &Context) -> Result<GitHub, Error> {
    let raw = flags
        .token
        .clone()
        .or_else(|| std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty()))
        .ok_or_else(|| {
            Error::Usage(
                "publishing a comment or a check run needs a token: set GITHUB_TOKEN \
                 (in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}`) or pass --token"
                    .to_owned(),
            )
        })?;
    let token = Token::new(&raw).map_err(Error::Usage)?;
    let policy = RetryPolicy {
        retries: flags.retries,
        ..RetryPolicy::default()
    };
    let mut github = GitHub::new(&context.api_url, token, policy).map_err(Error::Usage)?;
    github.verbose = global.verbose > 0;
    Ok(github)
}

/// Each check's manifest line, when the manifest at hand is the one the results were
/// produced from; otherwise annotations go on line 1.
#[allow(clippy::print_stderr)]
fn check_sites(global: &GlobalArgs, report: &Report) -> HashMap<String, CheckSite> {
    let loaded = current_dir()
        .ok()
        .and_then(|dir| manifest::load(global.manifest.as_deref(), &dir).ok())
        .filter(|m| m.digest == report.manifest.digest);
    let Some(manifest) = loaded else {
        if !global.quiet {
            eprintln!(
                "note: the manifest the results were produced from is not at hand; annotations go on line 1 of {}",
                report.manifest.path
            );
        }
        return HashMap::new();
    };
    manifest
        .checks
        .iter()
        .map(|check| {
            (
                check.id.to_string(),
                CheckSite {
                    line: check.line.unwrap_or(1),
                    required: check.required,
                },
            )
        })
        .collect()
}
