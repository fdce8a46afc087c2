//! Putting a report on GitLab, shared by `publish` and `report` through
//! [`super::engine`] (`--ci gitlab`, the default under GitLab CI): the merge-request
//! note, the commit status, the job log.

use std::path::PathBuf;

use super::flags::PublishFlags;
use super::publishing::{publish_settings, targets};
use super::settings::{Settings, parent_dir};
use super::{Error, print_stdout, runtime};
use crate::exit_code;
use crate::publish::gitlab::{self, GitLabContext, GitLabPublication};
use crate::publish::{GitHub, Notice, Overrides, RetryPolicy, Sent, Target, Token};
use crate::render::Quoted;
use crate::results::Report;

/// Explains a refused token: the job's own token cannot write; an access token may
/// lack the role or the scope.
fn denied_help(header: &str) -> &'static str {
    if header == "JOB-TOKEN" {
        "GitLab refused the token. CI_JOB_TOKEN cannot write notes or statuses: give the job \
         a project access token with the `api` scope and the Developer role as a masked CI/CD \
         variable GITLAB_TOKEN (docs/gitlab-ci.md, \"Tokens\"). A merge request from a fork \
         runs in the fork, without the parent's variables (docs/gitlab-ci.md, \"Forks\")."
    } else {
        "GitLab refused the token: it needs the `api` scope and the Developer role in the \
         project (a note needs Reporter, a commit status Developer), and the merge request \
         must be one the token's user can see (docs/gitlab-ci.md, \"Tokens\")."
    }
}

fn context(
    settings: &Settings,
    flags: &PublishFlags,
    report: &Report,
) -> Result<GitLabContext, Error> {
    let overrides = Overrides {
        repository: flags.repo.clone(),
        pr: flags.pr,
        sha: flags.sha.clone(),
    };
    let mut context = GitLabContext::resolve(
        settings.actions.gitlab.as_ref(),
        settings.actions.gitlab_api_url.as_deref(),
        report,
        &overrides,
    )
    .map_err(crate::publish::PublishError::from)?;
    if flags.dry_run {
        context
            .project
            .get_or_insert_with(|| "GROUP/PROJECT".to_owned());
        context
            .head_sha
            .get_or_insert_with(|| "HEAD-SHA".to_owned());
    }
    Ok(context)
}

/// Publishes `report` (read from, or written to, `path`) to GitLab; the exit code is
/// the verdict's once publishing worked or was refused for want of permission. `shown`:
/// the matrix is in the job's log already.
pub(crate) fn publish_report(
    settings: &Settings,
    report: &Quoted,
    path: &std::path::Path,
    flags: &PublishFlags,
    shown: bool,
) -> Result<i32, Error> {
    let mut targets = targets(flags, &[Target::Summary]);
    // The job log has the matrix already when `report` printed it.
    if shown {
        targets.retain(|t| *t != Target::Summary);
    }
    let options = gitlab_links(
        settings,
        settings.matrix_options(
            &flags.matrix,
            report,
            parent_dir(path),
            report.quoter().clone(),
        ),
    );
    let context = context(settings, flags, report)?;
    let publish_settings = publish_settings(flags, targets, Default::default());
    let publication = gitlab::plan(report, &publish_settings, &options, &context)?;
    finish(
        settings,
        flags,
        &publication,
        &context,
        report.exit_code(),
        false,
    )
}

/// `publish --pending` to GitLab: the status `running` and the pending note.
pub(crate) fn pending(
    settings: &Settings,
    flags: &PublishFlags,
    mut report: Report,
    quoter: crate::untrusted::Quoter,
) -> Result<i32, Error> {
    let context = context(settings, flags, &report)?;
    report.source.commit = context.head_sha.clone();
    let report = Quoted::from_report(report, &quoter);
    let options = gitlab_links(
        settings,
        settings.matrix_options(&flags.matrix, &report, PathBuf::from("."), quoter),
    );
    let targets = targets(flags, &[Target::Comment, Target::CheckRun]);
    let publish_settings = publish_settings(flags, targets, Default::default());
    let publication = gitlab::plan_pending(&report, &publish_settings, &options, &context)?;
    finish(settings, flags, &publication, &context, exit_code::OK, true)
}

/// `options` with links to GitLab's pages (`CI_SERVER_URL`, else gitlab.com).
fn gitlab_links(
    settings: &Settings,
    options: crate::render::RenderOptions,
) -> crate::render::RenderOptions {
    crate::render::RenderOptions {
        web: settings
            .actions
            .gitlab
            .as_ref()
            .and_then(|g| g.server_url.clone()),
        forge: crate::render::provenance::Forge::GitLab,
        ..options
    }
}

/// Prints or sends `publication`; `verdict` is the exit code when publishing worked.
fn finish(
    settings: &Settings,
    flags: &PublishFlags,
    publication: &GitLabPublication,
    context: &GitLabContext,
    verdict: i32,
    pending: bool,
) -> Result<i32, Error> {
    if flags.dry_run {
        print_stdout(&publication.describe())?;
        return Ok(verdict);
    }
    // The token is checked before anything is written, so a missing one fails cleanly.
    let connected = if publication.note.is_some() || publication.status.is_some() {
        Some(connect(settings, flags, context)?)
    } else {
        None
    };
    if let Some(log) = &publication.log {
        print_stdout(log)?;
    }
    if !settings.quiet {
        for note in &publication.notes {
            eprintln!("note: {note}");
        }
    }
    let Some((runtime, client, header)) = connected else {
        return Ok(verdict);
    };
    let sent: Sent = runtime.block_on(publication.send(&client));
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
    if !sent.denied.is_empty() {
        eprintln!("warning: {}", denied_help(header));
        if pending {
            eprintln!(
                "warning: the pending mark was not published; the report job still publishes the verdict"
            );
        }
    }
    Ok(if sent.failed.is_empty() {
        verdict
    } else {
        exit_code::PUBLISH_FAILED
    })
}

/// The runtime and the client: the token from `--token`, else GITLAB_TOKEN (sent as
/// `PRIVATE-TOKEN`), else CI_JOB_TOKEN (sent as `JOB-TOKEN`, which GitLab lets read but
/// not write notes or statuses).
fn connect(
    settings: &Settings,
    flags: &PublishFlags,
    context: &GitLabContext,
) -> Result<(tokio::runtime::Runtime, GitHub, &'static str), Error> {
    let Some((raw, header)) = settings.actions.gitlab_credentials(flags.token.as_deref()) else {
        return Err(Error::Usage(
            "publishing a note or a status to GitLab needs a token: set GITLAB_TOKEN \
             (a project access token with the `api` scope, as a masked CI/CD variable) \
             or pass --token"
                .to_owned(),
        ));
    };
    let token = Token::new(&raw).map_err(|e| Error::Usage(e.to_string()))?;
    let policy = RetryPolicy {
        retries: flags.retries,
        ..RetryPolicy::default()
    };
    let runtime = runtime()?;
    let mut client = {
        let _entered = runtime.enter();
        GitHub::gitlab(&context.api_url, token, header, policy)
            .map_err(|e| Error::Usage(e.to_string()))?
    };
    let verbose = settings.verbose > 0;
    client.notify = Box::new(move |notice| match notice {
        Notice::Retrying(line) => eprintln!("warning: {line}"),
        Notice::Request(line) if verbose => eprintln!("gitlab: {line}"),
        Notice::Request(_) => {}
    });
    Ok((runtime, client, header))
}
