//! `history sync --from-github`: the report artifacts of a repository's last completed
//! workflow runs, downloaded through the REST API (octocrab, with publishing's retry
//! rules), unpacked in memory within bounds, and imported. Artifacts come from
//! pull-request code: each is bounded, a file that is not a report is skipped with a
//! note, and one run's failure never loses what the others brought.

use std::io::IsTerminal;
use std::path::Path;

use serde_json::Value;

use crate::actions_env::ActionsEnv;
use crate::cli::args::HistorySyncArgs;
use crate::cli::settings::Settings;
use crate::cli::{Error, judge, print_stdout, runtime};
use crate::exit_code;
use crate::history::unzip::{self, Limits};
use crate::history::{Added, History, Origin};
use crate::publish::client::{ApiError, GitHub, Notice, RetryPolicy, Token, query_value};
use crate::results::source::is_repository;

/// The largest artifact downloaded.
const MAX_ARTIFACT_BYTES: usize = 512 * 1024 * 1024;

/// One completed workflow run, as the API lists it.
struct Run {
    id: u64,
    attempt: u32,
    branch: Option<String>,
    commit: String,
    /// When it finished (RFC 3339): the time it is recorded at.
    updated_at: Option<String>,
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
    let env = ActionsEnv::from_process();
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
    let mut history = History::open(path)?;
    let runtime = runtime()?;
    let github = {
        let _entered = runtime.enter();
        let policy = RetryPolicy {
            retries: args.retries,
            ..RetryPolicy::default()
        };
        let mut github =
            GitHub::new(&api, token, policy).map_err(|e| Error::Usage(e.to_string()))?;
        github.notify = Box::new(|notice| {
            if let Notice::Retrying(line) = notice {
                eprintln!("warning: {line}");
            }
        });
        github
    };
    let failed = |e: ApiError| {
        eprintln!("error: history sync: {e}");
        Ok(exit_code::PUBLISH_FAILED)
    };
    let branch = match &args.branch {
        Some(branch) => branch.clone(),
        None => match runtime.block_on(default_branch(&github, &repo)) {
            Ok(branch) => branch,
            Err(e) => return failed(e),
        },
    };
    let runs = match runtime.block_on(completed_runs(&github, &repo, &branch, args.runs.into())) {
        Ok(runs) => runs,
        Err(e) => return failed(e),
    };
    let progress = Progress::new(runs.len());
    let mut tally = Tally::default();
    for (i, run) in runs.iter().enumerate() {
        progress.show(i, run);
        if history.has_run(&repo, &run.id.to_string(), run.attempt)? {
            tally.already += 1;
            continue;
        }
        let origin = Origin {
            branch: run.branch.clone().or_else(|| Some(branch.clone())),
            recorded_at: run.updated_at.clone(),
        };
        match runtime.block_on(reports_of(&github, &repo, run, &args.artifact)) {
            Ok((reports, notes)) => {
                for note in notes {
                    progress.note(&format!("run {}: {note}", run.id));
                }
                let mut found = false;
                for (name, bytes) in reports {
                    let shown = format!("run {} artifact `{}`: `{name}`", run.id, args.artifact);
                    match judge::checked_report(Path::new(&shown), &bytes) {
                        Ok(report) => {
                            found = true;
                            match history.add(&report, &origin)? {
                                Added::New { .. } => tally.recorded += 1,
                                Added::AlreadyRecorded => tally.already += 1,
                            }
                        }
                        Err(e) => progress.note(&format!("skipped {shown}: not a report ({e})")),
                    }
                }
                if !found {
                    tally.skipped += 1;
                }
            }
            Err(e) => {
                progress.note(&format!("warning: run {}: {e}", run.id));
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

/// The repository's default branch.
async fn default_branch(github: &GitHub, repo: &str) -> Result<String, ApiError> {
    let what = format!("reading repository {repo}");
    let value = github.get(&format!("/repos/{repo}"), &what).await?;
    value
        .get("default_branch")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or(ApiError::Failed {
            what,
            message: "the answer names no default branch".to_owned(),
        })
}

/// The latest `want` completed runs of `branch`, newest first.
async fn completed_runs(
    github: &GitHub,
    repo: &str,
    branch: &str,
    want: usize,
) -> Result<Vec<Run>, ApiError> {
    let per_page = want.min(100);
    let branch_q = query_value(branch);
    let mut runs = Vec::new();
    // GitHub lists at most 1,000 runs (10 pages of 100); a server that never ends is cut.
    for page in 1..=20 {
        let path = format!(
            "/repos/{repo}/actions/runs?branch={branch_q}&status=completed&exclude_pull_requests=true&per_page={per_page}&page={page}"
        );
        let value = github
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

/// Whether a listed run is the branch's own: a push or a schedule. GitHub's `branch`
/// filter matches a run's head branch, and a pull request from a fork's branch of the
/// same name would match too; a `workflow_run` run on the branch may carry a fork's
/// results. Their reports (a fork's code wrote them) must never become the base.
fn the_branchs_own(run: &Value, repo: &str) -> bool {
    let event = run.get("event").and_then(Value::as_str).unwrap_or("");
    let head_repo = run
        .pointer("/head_repository/full_name")
        .and_then(Value::as_str);
    matches!(event, "push" | "schedule") && head_repo.is_none_or(|r| r.eq_ignore_ascii_case(repo))
}

fn run_of(v: &Value) -> Option<Run> {
    Some(Run {
        id: v.get("id")?.as_u64()?,
        attempt: v
            .get("run_attempt")
            .and_then(Value::as_u64)
            .and_then(|a| u32::try_from(a).ok())
            .unwrap_or(1),
        branch: v
            .get("head_branch")
            .and_then(Value::as_str)
            .map(str::to_owned),
        commit: v
            .get("head_sha")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        updated_at: v
            .get("updated_at")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// The JSON files of `run`'s artifact `name`, and notes on what was skipped.
async fn reports_of(
    github: &GitHub,
    repo: &str,
    run: &Run,
    name: &str,
) -> Result<(Vec<(String, Vec<u8>)>, Vec<String>), ApiError> {
    let name_q = query_value(name);
    let listing = github
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
    let what = format!("downloading artifact `{name}` of run {}", run.id);
    let bytes = match github
        .download(
            &format!("/repos/{repo}/actions/artifacts/{id}/zip"),
            MAX_ARTIFACT_BYTES,
            &what,
        )
        .await
    {
        Ok(bytes) => bytes,
        // Listed a moment ago, gone now: it expired (or was deleted) in between.
        Err(ApiError::Denied { status: 404, .. }) => {
            notes.push(format!("artifact `{name}` is gone (expired or deleted)"));
            return Ok((Vec::new(), notes));
        }
        Err(e) => return Err(e),
    };
    let unzipped =
        unzip::json_files(&bytes, Limits::default()).map_err(|message| ApiError::Failed {
            what: format!("artifact `{name}` of run {}", run.id),
            message,
        })?;
    notes.extend(unzipped.notes);
    Ok((unzipped.files, notes))
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

    fn show(&self, i: usize, run: &Run) {
        let commit: String = run.commit.chars().take(7).collect();
        let line = format!(
            "[{}/{}] run {} attempt {} ({commit})",
            i + 1,
            self.total,
            run.id,
            run.attempt
        );
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
