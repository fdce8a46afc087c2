//! `history sync --from-github` / `--from-gitlab`: the reports of a repository's last
//! finished runs of a branch — a workflow run's report artifact on GitHub, the report
//! job's artifacts of a pipeline on GitLab — downloaded through the REST API (with
//! publishing's retry rules), unpacked in memory within bounds, and imported. Artifacts
//! come from pull-request code: each is bounded, a file that is not a report is skipped
//! with a note, and one run's failure never loses what the others brought. The two
//! services are two implementations of [`Forge`]; the import is one.

use std::io::IsTerminal;
use std::path::Path;

use serde_json::Value;

use crate::cli::args::HistorySyncArgs;
use crate::cli::settings::Settings;
use crate::cli::{Error, judge, print_stdout, runtime};
use crate::exit_code;
use crate::history::unzip::{self, Limits};
use crate::history::{Added, History, Origin};
use crate::publish::client::{ApiError, GitHub, Notice, RetryPolicy, Token, query_value};
use crate::publish::gitlab::{check_project, project_path};
use crate::results::source::is_repository;

/// The largest artifact downloaded.
const MAX_ARTIFACT_BYTES: usize = 512 * 1024 * 1024;

/// The most reports one run's artifact may hold (one per manifest): an archive with
/// more is not taken at all, as its files could crowd real runs out of the history.
const MAX_REPORTS_PER_RUN: usize = 16;

/// One finished run (a workflow run, a pipeline), as the API lists it.
struct Run {
    id: u64,
    attempt: u32,
    branch: Option<String>,
    commit: String,
    /// When it finished (RFC 3339): the time it is recorded at.
    updated_at: Option<String>,
}

/// A run's report files, by their name in the archive, and notes on what was skipped.
type Fetched = (Vec<(String, Vec<u8>)>, Vec<String>);

/// Where past runs' reports come from: what the sync asks of a CI service.
trait Forge {
    /// The repository or project, as reports name it (`source.repository`).
    fn repository(&self) -> &str;
    /// Where a file of `run` came from, as notes show it.
    fn origin_of(&self, run: &Run, file: &str) -> String;
    /// `run`, as notes name it (`run 7`, `pipeline 7`).
    fn name_of(&self, run: &Run) -> String;
    /// Whether runs have attempts (the progress shows them).
    const ATTEMPTS: bool;
    /// `text` without the token.
    fn redact(&self, text: &str) -> String;
    /// The repository's default branch.
    async fn default_branch(&self) -> Result<String, ApiError>;
    /// The latest `want` finished runs of `branch` that are the branch's own (pushes and
    /// schedules, never a pull request's), newest first.
    async fn finished_runs(&self, branch: &str, want: usize) -> Result<Vec<Run>, ApiError>;
    /// The JSON files `run` left as its report.
    async fn reports_of(&self, run: &Run) -> Result<Fetched, ApiError>;
}

/// What the sync did, counted.
#[derive(Default)]
struct Tally {
    recorded: usize,
    already: usize,
    skipped: usize,
    failed: usize,
}

pub(super) fn run(settings: &Settings, path: &Path, args: &HistorySyncArgs) -> Result<i32, Error> {
    let policy = RetryPolicy {
        retries: args.retries,
        ..RetryPolicy::default()
    };
    let runtime = runtime()?;
    let notify = |client: &mut GitHub| {
        client.notify = Box::new(|notice| {
            if let Notice::Retrying(line) = notice {
                eprintln!("warning: {line}");
            }
        });
    };
    if args.from_gitlab {
        let mut forge = {
            let _entered = runtime.enter();
            GitLabForge::new(settings, args, policy)?
        };
        notify(&mut forge.client);
        return import(settings, path, args, &runtime, &forge);
    }
    let env = &settings.actions;
    let repo = args
        .repo
        .clone()
        .or_else(|| env.repository.clone())
        .ok_or_else(|| {
            Error::Usage("history sync: name the repository with --repo OWNER/NAME (or set GITHUB_REPOSITORY)".to_owned())
        })?;
    if !is_repository(&repo) {
        return Err(Error::Usage(format!(
            "history sync: `{repo}` is not a repository (OWNER/NAME)"
        )));
    }
    let raw = args.token.clone().or_else(|| env.token.clone()).ok_or_else(|| {
        Error::Usage(
            "history sync needs a token: set GITHUB_TOKEN (in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}`) or pass --token"
                .to_owned(),
        )
    })?;
    let token = Token::new(&raw).map_err(|e| Error::Usage(e.to_string()))?;
    let api = env
        .api_url
        .clone()
        .unwrap_or_else(|| "https://api.github.com".to_owned());
    let mut github = {
        let _entered = runtime.enter();
        GitHub::new(&api, token, policy).map_err(|e| Error::Usage(e.to_string()))?
    };
    notify(&mut github);
    let forge = GitHubForge {
        github,
        repo,
        artifact: args.artifact.clone(),
    };
    import(settings, path, args, &runtime, &forge)
}

/// Imports the latest runs `forge` lists into the history at `path`, then applies the
/// retention; the exit code.
fn import<F: Forge>(
    settings: &Settings,
    path: &Path,
    args: &HistorySyncArgs,
    runtime: &tokio::runtime::Runtime,
    forge: &F,
) -> Result<i32, Error> {
    let mut history = History::open(path)?;
    let failed = |e: ApiError| {
        eprintln!("error: history sync: {e}");
        Ok(exit_code::PUBLISH_FAILED)
    };
    let branch = match &args.branch {
        Some(branch) => branch.clone(),
        None => match runtime.block_on(forge.default_branch()) {
            Ok(branch) => branch,
            Err(e) => return failed(e),
        },
    };
    let runs = match runtime.block_on(forge.finished_runs(&branch, args.runs.into())) {
        Ok(runs) => runs,
        Err(e) => return failed(e),
    };
    // Known once the runs are listed (GitLab names a project's path then).
    let repo = forge.repository();
    let progress = Progress::new(runs.len());
    let mut tally = Tally::default();
    // What the notes say comes partly from the archives (names, reports' fields,
    // parse errors): one line each, without the token, escapes or a verdict's words.
    let say = |text: &str| {
        let redacted = forge.redact(text);
        let clean = crate::untrusted::neutralise::clean(&redacted).replace('\n', " ");
        progress.note(&crate::untrusted::neutralise::neutralise(&clean));
    };
    for (i, run) in runs.iter().enumerate() {
        let label = forge.name_of(run);
        let commit: String = run.commit.chars().take(7).collect();
        progress.show(
            i,
            &if F::ATTEMPTS {
                format!("{label} attempt {} ({commit})", run.attempt)
            } else {
                format!("{label} ({commit})")
            },
        );
        if history.has_run(repo, &run.id.to_string(), run.attempt)? {
            tally.already += 1;
            continue;
        }
        let origin = Origin {
            branch: run.branch.clone().or_else(|| Some(branch.clone())),
            recorded_at: run.updated_at.clone(),
        };
        match runtime.block_on(forge.reports_of(run)) {
            Ok((reports, notes)) => {
                for note in notes {
                    say(&format!("{label}: {note}"));
                }
                let mut taken = Vec::new();
                for (name, bytes) in reports {
                    let shown = forge.origin_of(run, &name);
                    match judge::checked_report(Path::new(&shown), &bytes) {
                        Ok(report) => {
                            match of_another_run(&report, repo, run, &|t| forge.redact(t)) {
                                None => taken.push(report),
                                Some(why) => say(&format!("skipped {shown}: {why}")),
                            }
                        }
                        Err(e) => say(&format!("skipped {shown}: not a report ({e})")),
                    }
                }
                if taken.len() > MAX_REPORTS_PER_RUN {
                    say(&format!(
                        "{label}: {} reports, more than the {MAX_REPORTS_PER_RUN} a run's artifact may hold: none taken",
                        taken.len()
                    ));
                    taken.clear();
                }
                if let Some(why) = disagreeing(&taken) {
                    say(&format!("{label}: {why}: none taken"));
                    taken.clear();
                }
                if taken.is_empty() {
                    tally.skipped += 1;
                }
                for report in &taken {
                    match history.add(report, &origin)? {
                        Added::New { .. } => tally.recorded += 1,
                        Added::AlreadyRecorded => tally.already += 1,
                    }
                }
            }
            Err(e) => {
                say(&format!("warning: {label}: {e}"));
                tally.failed += 1;
            }
        }
    }
    progress.done();
    // The history's retention, after the import.
    let retention = super::retention(settings, &args.keep, None);
    let pruned = history.prune(&retention)?;
    if pruned.runs_removed > 0 {
        print_stdout(&format!(
            "{}\n",
            super::pruned_line(path, &retention, &pruned)
        ))?;
    }
    print_stdout(&format!(
        "synced {} run{} of `{branch}` from {repo}: {} report{} recorded, {} already recorded, {} without a report, {} failed\n{}: {} runs\n",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        tally.recorded,
        if tally.recorded == 1 { "" } else { "s" },
        tally.already,
        tally.skipped,
        tally.failed,
        history.path().display(),
        history.run_count()?
    ))?;
    Ok(if tally.failed > 0 {
        exit_code::PUBLISH_FAILED
    } else {
        exit_code::OK
    })
}

/// Why `report` is not `run`'s own, if it is not: a report names the repository, run
/// and commit it is of, and an artifact's report that names others (a copy, or a file
/// made to look like another run's) would be recorded as that run, ahead of its own.
/// `redact` takes the token out of a field before it is cut short to be shown.
fn of_another_run(
    report: &crate::results::Report,
    repo: &str,
    run: &Run,
    redact: &dyn Fn(&str) -> String,
) -> Option<String> {
    let source = &report.source;
    let shown = |v: Option<&str>| crate::untrusted::cut(&redact(v.unwrap_or("none")), 80);
    if !source
        .repository
        .as_deref()
        .is_some_and(|r| r.eq_ignore_ascii_case(repo))
    {
        return Some(format!(
            "the report of another repository (`{}`), not of {repo}",
            shown(source.repository.as_deref())
        ));
    }
    if source.run_id.as_deref() != Some(run.id.to_string().as_str()) {
        return Some(format!(
            "the report of another run (`{}`), not of {}",
            shown(source.run_id.as_deref()),
            run.id
        ));
    }
    if run.commit.is_empty() {
        return Some("the run names no commit that its report could be held to".to_owned());
    }
    if !source
        .commit
        .as_deref()
        .is_some_and(|c| c.eq_ignore_ascii_case(&run.commit))
    {
        return Some(format!(
            "the report of another commit (`{}`), not of {}",
            shown(source.commit.as_deref()),
            run.commit
        ));
    }
    // The branch's own runs are pushes and schedules: a report of a pull request's run
    // is not one of them, whatever run it names.
    if source.pr.is_some()
        || !source
            .event
            .as_deref()
            .is_none_or(|e| matches!(e, "push" | "schedule"))
    {
        return Some(format!(
            "the report of a pull request's run (event `{}`), not of the branch's own",
            shown(source.event.as_deref())
        ));
    }
    None
}

/// Why the reports one run brought cannot all be its own, if they cannot: they must
/// spell the repository alike, name one attempt, and be of distinct manifests (else one
/// run would be recorded as several).
fn disagreeing(reports: &[crate::results::Report]) -> Option<&'static str> {
    let first = reports.first()?;
    let mut manifests = std::collections::HashSet::new();
    for report in reports {
        if report.source.repository != first.source.repository
            || report.source.run_attempt != first.source.run_attempt
        {
            return Some("its reports name the repository or the attempt differently");
        }
        if !manifests.insert(report.manifest.path.as_str()) {
            return Some("two of its reports are of one manifest");
        }
    }
    None
}

/// GitHub: a workflow run's report artifact.
struct GitHubForge {
    github: GitHub,
    repo: String,
    /// The artifact's name.
    artifact: String,
}

impl Forge for GitHubForge {
    fn repository(&self) -> &str {
        &self.repo
    }

    fn origin_of(&self, run: &Run, file: &str) -> String {
        format!("run {} artifact `{}`: `{file}`", run.id, self.artifact)
    }

    fn name_of(&self, run: &Run) -> String {
        format!("run {}", run.id)
    }

    const ATTEMPTS: bool = true;

    fn redact(&self, text: &str) -> String {
        self.github.redact(text)
    }

    async fn default_branch(&self) -> Result<String, ApiError> {
        let what = format!("reading repository {}", self.repo);
        let value = self
            .github
            .get(&format!("/repos/{}", self.repo), &what)
            .await?;
        named_default_branch(&value, what)
    }

    async fn finished_runs(&self, branch: &str, want: usize) -> Result<Vec<Run>, ApiError> {
        let repo = &self.repo;
        let per_page = want.min(100);
        let branch_q = query_value(branch);
        let mut runs = Vec::new();
        // GitHub lists at most 1,000 runs (10 pages of 100); a server that never ends is
        // cut.
        for page in 1..=20 {
            let path = format!(
                "/repos/{repo}/actions/runs?branch={branch_q}&status=completed&exclude_pull_requests=true&per_page={per_page}&page={page}"
            );
            let value = self
                .github
                .get(&path, &format!("listing the workflow runs of `{branch}`"))
                .await?;
            let listed = value
                .get("workflow_runs")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let count = listed.len();
            runs.extend(
                listed
                    .iter()
                    .filter(|run| the_branchs_own(run, repo))
                    .filter_map(run_of)
                    .take(want - runs.len()),
            );
            if runs.len() >= want || count < per_page {
                break;
            }
        }
        Ok(runs)
    }

    async fn reports_of(&self, run: &Run) -> Result<Fetched, ApiError> {
        let (repo, name) = (&self.repo, &self.artifact);
        let name_q = query_value(name);
        let listing = self
            .github
            .get(
                &format!(
                    "/repos/{repo}/actions/runs/{}/artifacts?name={name_q}&per_page=100",
                    run.id
                ),
                &format!("listing the artifacts of run {}", run.id),
            )
            .await?;
        let artifacts = listing
            .get("artifacts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut notes = Vec::new();
        // The newest first: a re-run's artifact replaces the earlier attempt's.
        let Some(artifact) = artifacts
            .iter()
            .filter(|a| a.get("name").and_then(Value::as_str) == Some(name))
            .max_by_key(|a| a.get("id").and_then(Value::as_u64).unwrap_or(0))
        else {
            notes.push(format!(
                "no artifact `{name}` (a run from before reports were uploaded, or of another workflow)"
            ));
            return Ok((Vec::new(), notes));
        };
        if artifact.get("expired").and_then(Value::as_bool) == Some(true) {
            notes.push(format!("artifact `{name}` has expired"));
            return Ok((Vec::new(), notes));
        }
        let size = artifact
            .get("size_in_bytes")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if size > MAX_ARTIFACT_BYTES as u64 {
            return Err(ApiError::Failed {
                what: format!("artifact `{name}`"),
                message: format!("{size} bytes, more than the {MAX_ARTIFACT_BYTES} downloaded"),
            });
        }
        let id = artifact.get("id").and_then(Value::as_u64).unwrap_or(0);
        match downloaded(
            &self.github,
            &format!("/repos/{repo}/actions/artifacts/{id}/zip"),
            &format!("artifact `{name}` of run {}", run.id),
        )
        .await
        {
            Ok((files, more)) => {
                notes.extend(more);
                Ok((files, notes))
            }
            // Listed a moment ago, gone now: it expired (or was deleted) in between.
            Err(ApiError::Denied { status: 404, .. }) => {
                notes.push(format!("artifact `{name}` is gone (expired or deleted)"));
                Ok((Vec::new(), notes))
            }
            Err(e) => Err(e),
        }
    }
}

/// GitLab: the report job's artifacts of a pipeline.
struct GitLabForge {
    client: GitHub,
    /// The project as requests name it (its number, or its path).
    project: String,
    /// Its path (`group/name`), as reports name it; learnt from GitLab when `project`
    /// is a number.
    path: std::sync::OnceLock<String>,
    /// The report job's name.
    job: String,
}

impl GitLabForge {
    fn new(
        settings: &Settings,
        args: &HistorySyncArgs,
        policy: RetryPolicy,
    ) -> Result<GitLabForge, Error> {
        let env = &settings.actions;
        let gitlab = env.gitlab.as_ref();
        let project = args
            .repo
            .clone()
            .or_else(|| gitlab.and_then(|g| g.project_path.clone()))
            .ok_or_else(|| {
                Error::Usage(
                    "history sync: name the project with --repo ID-OR-PATH (or run in GitLab CI, which sets CI_PROJECT_PATH)"
                        .to_owned(),
                )
            })?;
        check_project(&project).map_err(|e| Error::Usage(format!("history sync: {e}")))?;
        let Some((raw, header)) = env.gitlab_credentials(args.token.as_deref()) else {
            return Err(Error::Usage(
                "history sync needs a token: set GITLAB_TOKEN (an access token with the `read_api` scope) or pass --token"
                    .to_owned(),
            ));
        };
        let token = Token::new(&raw).map_err(|e| Error::Usage(e.to_string()))?;
        let api = gitlab
            .and_then(|g| g.api_url.clone())
            .or_else(|| env.gitlab_api_url.clone())
            .unwrap_or_else(|| crate::gitlab_env::DEFAULT_API_URL.to_owned());
        let client =
            GitHub::gitlab(&api, token, header, policy).map_err(|e| Error::Usage(e.to_string()))?;
        let path = std::sync::OnceLock::new();
        if project.contains('/') {
            let _ = path.set(project.clone());
        }
        Ok(GitLabForge {
            client,
            project,
            path,
            job: args.job.clone(),
        })
    }

    fn api_project(&self) -> String {
        project_path(&self.project)
    }
}

/// The most pages of pipelines read: a server that never ends is cut.
const MAX_PIPELINE_PAGES: usize = 20;

impl Forge for GitLabForge {
    fn repository(&self) -> &str {
        self.path
            .get()
            .map_or(self.project.as_str(), String::as_str)
    }

    fn origin_of(&self, run: &Run, file: &str) -> String {
        format!("pipeline {} job `{}`: `{file}`", run.id, self.job)
    }

    fn name_of(&self, run: &Run) -> String {
        format!("pipeline {}", run.id)
    }

    const ATTEMPTS: bool = false;

    fn redact(&self, text: &str) -> String {
        self.client.redact(text)
    }

    async fn default_branch(&self) -> Result<String, ApiError> {
        let what = format!("reading project {}", self.project);
        let value = self
            .client
            .get(&format!("/projects/{}", self.api_project()), &what)
            .await?;
        if let Some(path) = value
            .get("path_with_namespace")
            .and_then(Value::as_str)
            .filter(|p| check_project(p).is_ok() && p.contains('/'))
        {
            let _ = self.path.set(path.to_owned());
        }
        named_default_branch(&value, what)
    }

    async fn finished_runs(&self, branch: &str, want: usize) -> Result<Vec<Run>, ApiError> {
        if self.path.get().is_none() {
            // A project named by its number: its path is what reports carry.
            self.default_branch().await?;
        }
        let per_page = want.min(100);
        let branch_q = query_value(branch);
        let what = format!("listing the pipelines of `{branch}`");
        let mut runs = Vec::new();
        for page in 1..=MAX_PIPELINE_PAGES {
            let path = format!(
                "/projects/{}/pipelines?ref={branch_q}&scope=finished&order_by=id&sort=desc&per_page={per_page}&page={page}",
                self.api_project()
            );
            let value = self.client.get(&path, &what).await?;
            let listed = value.as_array().ok_or_else(|| ApiError::Failed {
                what: what.clone(),
                message: format!("page {page} is not a list of pipelines"),
            })?;
            runs.extend(
                listed
                    .iter()
                    .filter(|p| pipeline_is_the_branchs_own(p, branch))
                    .filter_map(pipeline_of)
                    .take(want - runs.len()),
            );
            if runs.len() >= want || listed.len() < per_page {
                break;
            }
        }
        Ok(runs)
    }

    async fn reports_of(&self, run: &Run) -> Result<Fetched, ApiError> {
        let jobs =
            crate::publish::gitlab::pipeline_jobs(&self.client, &self.project, &run.id.to_string())
                .await?;
        // The latest job of that name that finished: a retried job's artifacts replace
        // the earlier's (a job still running, or cancelled, has none of its own yet).
        let Some(job) = jobs
            .iter()
            .filter(|j| j.name == self.job && j.status == "completed")
            .max_by_key(|j| j.run_attempt)
        else {
            return Ok((
                Vec::new(),
                vec![format!(
                    "no job `{}` (a pipeline from before the report job, or of another pipeline)",
                    self.job
                )],
            ));
        };
        let what = format!("the artifacts of job {} (`{}`)", job.run_attempt, self.job);
        match downloaded(
            &self.client,
            &format!(
                "/projects/{}/jobs/{}/artifacts",
                self.api_project(),
                job.run_attempt
            ),
            &what,
        )
        .await
        {
            // GitLab answers 404 for a job that kept no artifacts, or whose expired.
            Err(ApiError::Denied { status: 404, .. }) => Ok((
                Vec::new(),
                vec![format!(
                    "job `{}` has no artifacts (it kept none, or they expired)",
                    self.job
                )],
            )),
            other => other,
        }
    }
}

/// The default branch a repository's or project's description names.
fn named_default_branch(value: &Value, what: String) -> Result<String, ApiError> {
    branch_name(value.get("default_branch")).ok_or(ApiError::Failed {
        what,
        message: "the answer names no default branch that a branch can be".to_owned(),
    })
}

/// The JSON files of the archive at `path` (`what`), unpacked in memory within bounds,
/// and notes on what was skipped.
async fn downloaded(client: &GitHub, path: &str, what: &str) -> Result<Fetched, ApiError> {
    let bytes = client
        .download(path, MAX_ARTIFACT_BYTES, &format!("downloading {what}"))
        .await?;
    let unzipped =
        unzip::json_files(&bytes, Limits::default()).map_err(|message| ApiError::Failed {
            what: what.to_owned(),
            message,
        })?;
    Ok((unzipped.files, unzipped.notes))
}

/// Whether a listed run is the branch's own: a push or a schedule. GitHub's `branch`
/// filter matches a run's head branch, and a pull request from a fork's branch of the
/// same name would match too; a `workflow_run` run on the branch may carry a fork's
/// results. Their reports (a fork's code wrote them) must never become the base.
fn the_branchs_own(run: &Value, repo: &str) -> bool {
    let event = run.get("event").and_then(Value::as_str).unwrap_or("");
    let head_repo = run
        .pointer("/head_repository/full_name")
        .and_then(Value::as_str);
    matches!(event, "push" | "schedule")
        && head_repo.is_none_or(|r| r.eq_ignore_ascii_case(repo))
        && run.get("status").and_then(Value::as_str) == Some("completed")
}

/// A commit id as listed, if it is one (it is shown and compared).
fn commit_id(v: Option<&Value>) -> String {
    v.and_then(Value::as_str)
        .filter(|c| matches!(c.len(), 40 | 64) && c.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap_or_default()
        .to_owned()
}

/// A branch as listed, if it can be one (it is recorded and shown).
fn branch_name(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|b| {
            !b.is_empty()
                && b.len() <= 255
                && crate::untrusted::neutralise::clean(b) == *b
                && !b.contains(char::is_whitespace)
        })
        .map(str::to_owned)
}

/// Whether a listed pipeline is the branch's own: a push or a schedule, on the branch
/// itself. Merge-request pipelines (a fork's among them) run on
/// `refs/merge-requests/…` with the source `merge_request_event`, and are never the
/// base.
fn pipeline_is_the_branchs_own(pipeline: &Value, branch: &str) -> bool {
    let text = |k: &str| pipeline.get(k).and_then(Value::as_str).unwrap_or("");
    // GitLab's `ref` filter matches a tag of the branch's name too: a tag is not the
    // branch. A pipeline still running has no report yet.
    matches!(text("source"), "push" | "schedule")
        && text("ref") == branch
        && pipeline.get("tag").is_none_or(|t| *t == Value::Bool(false))
        && matches!(text("status"), "success" | "failed" | "canceled")
}

fn run_of(v: &Value) -> Option<Run> {
    Some(Run {
        id: v.get("id")?.as_u64()?,
        attempt: v
            .get("run_attempt")
            .and_then(Value::as_u64)
            .and_then(|a| u32::try_from(a).ok())
            .unwrap_or(1),
        branch: branch_name(v.get("head_branch")),
        commit: commit_id(v.get("head_sha")),
        updated_at: v
            .get("updated_at")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// A pipeline as a run: GitLab has no attempts (a retried job is a new job of the same
/// pipeline), so each pipeline is attempt 1.
fn pipeline_of(v: &Value) -> Option<Run> {
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    Some(Run {
        id: v.get("id")?.as_u64()?,
        attempt: 1,
        branch: branch_name(v.get("ref")),
        commit: commit_id(v.get("sha")),
        updated_at: text("updated_at"),
    })
}

/// Where the sync is: one line rewritten in place on a terminal, a line per run
/// otherwise (a workflow log).
struct Progress {
    total: usize,
    terminal: bool,
}

impl Progress {
    fn new(total: usize) -> Progress {
        Progress {
            total,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn show(&self, i: usize, label: &str) {
        let line = format!("[{}/{}] {label}", i + 1, self.total);
        if self.terminal {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("{line}");
        }
    }

    fn note(&self, line: &str) {
        if self.terminal {
            eprint!("\r\x1b[2K");
        }
        eprintln!("{line}");
    }

    fn done(&self) {
        if self.terminal {
            eprint!("\r\x1b[2K");
        }
    }
}
