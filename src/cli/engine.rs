//! One seam for CI services: what the pipeline asks of the service it runs under —
//! the jobs of the run the legs were part of (the cross-check that holds each leg's
//! results to the job that ran it), this run's jobs (`--environments-from-job`),
//! publishing a report, and the pending mark. GitHub Actions and GitLab CI are two
//! implementations; the next service (Buildkite, Forgejo or Gitea Actions) is one more,
//! not a fork of the pipeline. What a leg records of its job is read with each
//! service's variables in one place (`actions_env`, `gitlab_env`) by `run`; past runs'
//! reports are downloaded through `history_sync`'s `Forge` (a workflow run's artifact,
//! a pipeline's report job's artifacts), which each service implements too.

use std::path::Path;

use super::Error;
use super::flags::{Ci, PublishFlags};
use super::settings::Settings;
use crate::render::Quoted;
use crate::results::jobs::{Jobs, RunJob};
use crate::results::{PartialResult, Report};
use crate::untrusted::Quoter;

/// A CI service.
pub(crate) trait Engine: Sync {
    /// The jobs of the run whose legs `partials` are, as the service lists them;
    /// [`Jobs::NotChecked`] when not running under the service.
    fn leg_jobs(&self, settings: &Settings, partials: &[PartialResult]) -> Jobs;
    /// This run's jobs, as the service lists them, or why they cannot be read.
    fn this_run_jobs(&self, settings: &Settings) -> Result<Vec<RunJob>, String>;
    /// Publishes `report` (read from, or written to, `path`) where `flags` say; the
    /// exit code. `shown`: the matrix was printed already.
    fn publish_report(
        &self,
        settings: &Settings,
        report: &Quoted,
        path: &Path,
        flags: &PublishFlags,
        shown: bool,
    ) -> Result<i32, Error>;
    /// Publishes the pending mark of the commit `report.source` names.
    fn publish_pending(
        &self,
        settings: &Settings,
        flags: &PublishFlags,
        report: Report,
        quoter: Quoter,
    ) -> Result<i32, Error>;
}

/// GitHub Actions: check runs, pull-request comments, job summaries.
pub(crate) struct GitHubActions;

/// GitLab CI: commit statuses, merge-request notes, job logs.
pub(crate) struct GitLabCi;

/// The service `ci` names (`--ci`), else the one this process runs under: GitLab CI
/// when `GITLAB_CI=true` (and not under GitHub Actions), else GitHub Actions (which
/// is also what a machine of one's own publishes to by default).
pub(crate) fn of(settings: &Settings, ci: Option<Ci>) -> &'static dyn Engine {
    let ci = ci.unwrap_or(
        if settings.actions.gitlab.is_some() && !settings.actions.actions {
            Ci::Gitlab
        } else {
            Ci::Github
        },
    );
    match ci {
        Ci::Github => &GitHubActions,
        Ci::Gitlab => &GitLabCi,
    }
}

impl Engine for GitHubActions {
    fn leg_jobs(&self, settings: &Settings, partials: &[PartialResult]) -> Jobs {
        super::judge::actions_run_jobs(settings, partials)
    }

    fn this_run_jobs(&self, settings: &Settings) -> Result<Vec<RunJob>, String> {
        let actions = &settings.actions;
        let (Some(repo), Some(run_id)) = (&actions.repository, &actions.run_id) else {
            return Err(
                "the run is not known (GITHUB_REPOSITORY, GITHUB_RUN_ID): it reads a GitHub Actions run's jobs"
                    .to_owned(),
            );
        };
        if !crate::results::source::is_repository(repo)
            || !run_id.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(format!("`{repo}` run `{run_id}` cannot be asked for"));
        }
        let attempt = actions
            .run_attempt
            .as_deref()
            .and_then(|a| a.parse().ok())
            .unwrap_or(1);
        super::judge::list_jobs(settings, repo, run_id, &[attempt])
            .map_err(|why| format!("the run's jobs: {why}"))
    }

    fn publish_report(
        &self,
        settings: &Settings,
        report: &Quoted,
        path: &Path,
        flags: &PublishFlags,
        _shown: bool,
    ) -> Result<i32, Error> {
        super::publishing::publish_report(settings, report, path, flags)
    }

    fn publish_pending(
        &self,
        settings: &Settings,
        flags: &PublishFlags,
        report: Report,
        quoter: Quoter,
    ) -> Result<i32, Error> {
        super::publishing::publish_pending(settings, flags, report, quoter)
    }
}

impl Engine for GitLabCi {
    fn leg_jobs(&self, settings: &Settings, _partials: &[PartialResult]) -> Jobs {
        match &settings.actions.gitlab {
            Some(gitlab) => match super::judge::gitlab_pipeline_jobs(gitlab) {
                Ok((pipeline, jobs)) => Jobs::Listed {
                    run_id: pipeline,
                    jobs,
                    gitlab: true,
                },
                Err(why) => Jobs::Unavailable(why),
            },
            None => Jobs::NotChecked,
        }
    }

    fn this_run_jobs(&self, settings: &Settings) -> Result<Vec<RunJob>, String> {
        match &settings.actions.gitlab {
            Some(gitlab) => super::judge::gitlab_pipeline_jobs(gitlab).map(|(_, jobs)| jobs),
            None => Err(
                "the pipeline is not known (GITLAB_CI, CI_PROJECT_ID, CI_PIPELINE_ID): it reads a GitLab pipeline's jobs"
                    .to_owned(),
            ),
        }
    }

    fn publish_report(
        &self,
        settings: &Settings,
        report: &Quoted,
        path: &Path,
        flags: &PublishFlags,
        shown: bool,
    ) -> Result<i32, Error> {
        super::gitlab_publishing::publish_report(settings, report, path, flags, shown)
    }

    fn publish_pending(
        &self,
        settings: &Settings,
        flags: &PublishFlags,
        report: Report,
        quoter: Quoter,
    ) -> Result<i32, Error> {
        super::gitlab_publishing::pending(settings, flags, report, quoter)
    }
}
