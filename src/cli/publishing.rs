//! Putting a report where reviewers look on GitHub, shared by `publish` and `report`
//! through [`super::engine`]: the target from the Actions context and the flags, the
//! GitHub client, and what was sent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::args::PublishFlags;
use super::settings::{Settings, current_dir, parent_dir};
use super::{Error, print_stdout, runtime};
use crate::exit_code;
use crate::manifest;
use crate::publish::{
    self, ActionsFiles, CheckSite, Context, GitHub, Notice, Overrides, Publication, RetryPolicy,
    Sent, Settings as PublishSettings, Target, Token,
};
use crate::render::Quoted;
use crate::results::Report;

/// The publication's target, from the environment, the report and the command line.
pub(crate) fn context(
    settings: &Settings,
    flags: &PublishFlags,
    report: &Report,
) -> Result<Context, Error> {
    let overrides = Overrides {
        repository: flags.repo.clone(),
        pr: flags.pr,
        sha: flags.sha.clone(),
    };
    let mut context = Context::resolve(&settings.actions, report, &overrides)
        .map_err(publish::PublishError::from)?;
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

/// The sticky comment's key when the manifest cannot be read: `--manifest`, else the
/// file the search finds, else the first name searched for.
pub(crate) fn manifest_key(settings: &Settings) -> Result<String, Error> {
    if let Some(path) = &settings.manifest {
        return Ok(path.display().to_string());
    }
    Ok(match manifest::discover(&current_dir()?) {
        Ok(manifest::Found::Yaml(path) | manifest::Found::Cargo(path)) => {
            path.display().to_string()
        }
        Err(_) => manifest::FILE_NAMES[0].to_owned(),
    })
}

/// The targets `--to` names, else `default`.
pub(crate) fn targets(flags: &PublishFlags, default: &[Target]) -> Vec<Target> {
    if flags.to.is_empty() {
        default.to_vec()
    } else {
        flags.to.clone()
    }
}

/// What the publish stage is told: the targets, and the flags that shape a publication.
pub(crate) fn publish_settings(
    flags: &PublishFlags,
    targets: Vec<Target>,
    sites: HashMap<String, CheckSite>,
) -> PublishSettings {
    PublishSettings {
        targets,
        dry_run: flags.dry_run,
        check_name: flags.check_name.clone(),
        comment_author: flags.comment_author.clone(),
        comment_mode: flags.comment_mode,
        sites,
    }
}

/// Explains a refused token, the usual case being a pull request from a fork.
const DENIED_HELP: &str = "GitHub refused the token. On a pull request from a fork, workflows get a read-only \
token: publish from a separate workflow triggered by `workflow_run` (docs/github-actions.md, \"Fork pull requests\"). \
Otherwise give the job `permissions: pull-requests: write` (comment) and `checks: write` (check run).";

/// Publishes `report` (read from, or written to, `path`); the exit code is the
/// verdict's once publishing worked, or was refused for want of permission.
pub(crate) fn publish_report(
    settings: &Settings,
    report: &Quoted,
    path: &Path,
    flags: &PublishFlags,
) -> Result<i32, Error> {
    let targets = targets(flags, &[Target::Summary]);
    let to_github = targets.contains(&Target::Comment) || targets.contains(&Target::CheckRun);
    // The secrets the report was quoted with, the token among them.
    let options = settings.matrix_options(
        &flags.matrix,
        report,
        parent_dir(path),
        report.quoter().clone(),
    );
    let context = if to_github {
        Some(context(settings, flags, report)?)
    } else {
        None
    };
    let sites = if targets.contains(&Target::CheckRun) {
        check_sites(settings, report)
    } else {
        HashMap::new()
    };
    let publish_settings = publish_settings(flags, targets, sites);
    let files = ActionsFiles::from_env(&settings.actions);
    let publication = publish::plan(
        report,
        path,
        &publish_settings,
        &options,
        &files,
        context.as_ref(),
    )?;
    if flags.dry_run {
        print_stdout(&publication.describe())?;
        return Ok(report.exit_code());
    }
    // The token is checked before anything is written, so a missing one fails cleanly.
    let runtime_and_client = match &context {
        Some(context) if publication.comment.is_some() || publication.check_run.is_some() => {
            Some(connect(settings, flags, context)?)
        }
        _ => None,
    };
    publication.apply()?;
    if !settings.quiet {
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
    let sent = deliver(settings, &publication, connected);
    sent.write_outputs(publication.output_file.as_deref())?;
    if !sent.denied.is_empty() {
        eprintln!("warning: {DENIED_HELP}");
        if let Some(file) = publication.apply_fallback()? {
            eprintln!(
                "warning: the matrix was written to the job summary ({}) instead",
                file.display()
            );
        }
        // What the check run would have marked on the files, as the step's own
        // annotations (which need no permission).
        if settings.actions.actions
            && let Some(check_run) = &publication.check_run
        {
            annotate_instead(&check_run.annotations)?;
        }
    }
    if sent.failed.is_empty() {
        Ok(report.exit_code())
    } else {
        Ok(exit_code::PUBLISH_FAILED)
    }
}

/// The most annotations GitHub shows of one step, per level.
const STEP_ANNOTATIONS: usize = 10;

/// Writes a check run's annotations as workflow commands (`::error file=…,line=…::`),
/// at most [`STEP_ANNOTATIONS`] of each level, the rest counted in one notice.
fn annotate_instead(annotations: &[serde_json::Value]) -> Result<(), Error> {
    use crate::cli::live::{escape_data, escape_property};
    let text = |a: &serde_json::Value, key: &str| {
        a.get(key)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut shown: HashMap<&'static str, usize> = HashMap::new();
    let mut left = 0;
    let mut out = String::new();
    for a in annotations {
        let level = match a
            .get("annotation_level")
            .and_then(serde_json::Value::as_str)
        {
            Some("failure") => "error",
            Some("warning") => "warning",
            _ => "notice",
        };
        let count = shown.entry(level).or_default();
        if *count == STEP_ANNOTATIONS {
            left += 1;
            continue;
        }
        *count += 1;
        let line = a
            .get("start_line")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(1);
        out.push_str(&format!(
            "::{level} file={},line={line},title={}::{}\n",
            escape_property(&text(a, "path")),
            escape_property(&text(a, "title")),
            escape_data(&text(a, "message"))
        ));
    }
    if left > 0 {
        out.push_str(&format!(
            "::notice title=cargo verify-matrix::{left} more annotations: see the job summary\n"
        ));
    }
    print_stdout(&out)
}

/// The runtime and the GitHub client publishing runs on (octocrab's client is made
/// inside the runtime it will run on).
fn connect(
    settings: &Settings,
    flags: &PublishFlags,
    context: &Context,
) -> Result<(tokio::runtime::Runtime, GitHub), Error> {
    let runtime = runtime()?;
    let github = {
        let _entered = runtime.enter();
        client(settings, flags, context)?
    };
    Ok((runtime, github))
}

/// `publish --pending` on GitHub: the `in_progress` check run and the pending comment
/// of the commit `report.source` names.
pub(crate) fn publish_pending(
    settings: &Settings,
    flags: &PublishFlags,
    mut report: Report,
    quoter: crate::untrusted::Quoter,
) -> Result<i32, Error> {
    let context = context(settings, flags, &report)?;
    // The commit and repository being marked, as the publication names them.
    report.source.commit = context.head_sha.clone();
    report.source.repository = context.repository.clone();
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

/// Sends the comment and the check run of `publication`, when it has either.
fn send(
    settings: &Settings,
    flags: &PublishFlags,
    publication: &Publication,
    context: &Context,
) -> Result<Option<Sent>, Error> {
    if publication.comment.is_none() && publication.check_run.is_none() {
        return Ok(None);
    }
    let connected = connect(settings, flags, context)?;
    Ok(Some(deliver(settings, publication, connected)))
}

/// Sends `publication` and says what happened: each target published, refused, failed.
fn deliver(
    settings: &Settings,
    publication: &Publication,
    (runtime, github): (tokio::runtime::Runtime, GitHub),
) -> Sent {
    let sent = runtime.block_on(publication.send(&github));
    if !settings.quiet {
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
fn client(settings: &Settings, flags: &PublishFlags, context: &Context) -> Result<GitHub, Error> {
    let raw = flags
        .token
        .clone()
        .or_else(|| settings.actions.token.clone())
        .ok_or_else(|| {
            Error::Usage(
                "publishing a comment or a check run needs a token: set GITHUB_TOKEN \
                 (in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}`) or pass --token"
                    .to_owned(),
            )
        })?;
    let token = Token::new(&raw).map_err(|e| Error::Usage(e.to_string()))?;
    let policy = RetryPolicy {
        retries: flags.retries,
        ..RetryPolicy::default()
    };
    let mut github =
        GitHub::new(&context.api_url, token, policy).map_err(|e| Error::Usage(e.to_string()))?;
    let verbose = settings.verbose > 0;
    github.notify = Box::new(move |notice| match notice {
        Notice::Retrying(line) => eprintln!("warning: {line}"),
        Notice::Request(line) if verbose => eprintln!("github: {line}"),
        Notice::Request(_) => {}
    });
    Ok(github)
}

/// Each check's manifest line, when the manifest at hand is the one the results were
/// produced from; otherwise annotations go on line 1.
fn check_sites(settings: &Settings, report: &Report) -> HashMap<String, CheckSite> {
    let loaded = current_dir()
        .ok()
        .and_then(|dir| {
            settings
                .load_manifest_from(settings.manifest.as_deref(), &dir)
                .ok()
        })
        .filter(|m| m.digest == report.manifest.digest);
    let Some(manifest) = loaded else {
        if !settings.quiet {
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
