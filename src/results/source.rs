//! Where a run happened: repository, head commit, PR, CI run (GitHub Actions' or GitLab
//! CI's); and the machine.

use std::path::Path;

use super::schema::Source;
use crate::actions_env::ActionsEnv;

/// `owner/name` in the characters GitHub allows (never `.` or `..`): safe in request
/// paths and links.
pub fn is_repository(text: &str) -> bool {
    let part_ok = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    matches!(text.split_once('/'), Some((owner, name)) if part_ok(owner) && part_ok(name))
}

/// The run's place from the GitHub Actions context and its event payload; outside
/// Actions, the commit is the repository's `HEAD`.
pub fn detect_source(repo_dir: &Path, env: &ActionsEnv) -> Source {
    if !env.actions
        && let Some(gitlab) = &env.gitlab
    {
        return gitlab_source(repo_dir, gitlab);
    }
    let event = env.event_payload();
    let pull_request = event.as_ref().and_then(|e| e.get("pull_request"));
    // On pull_request events GITHUB_SHA is a merge commit; the PR's head is what is verified.
    let head_sha = pull_request
        .and_then(|pr| pr.pointer("/head/sha"))
        .and_then(|s| s.as_str())
        .map(str::to_owned);
    let pr = pull_request
        .and_then(|pr| pr.get("number"))
        .and_then(serde_json::Value::as_u64);
    // A merge queue verifies the commit it made of the queue (GITHUB_SHA names it too).
    let queued = event
        .as_ref()
        .and_then(|e| e.pointer("/merge_group/head_sha"))
        .and_then(|s| s.as_str())
        .map(str::to_owned);
    Source {
        repository: env.repository.clone(),
        commit: head_sha
            .or(queued)
            .or_else(|| env.sha.clone())
            .or_else(|| git_head(repo_dir)),
        pr,
        run_id: env.run_id.clone(),
        run_number: env.run_number.as_ref().and_then(|n| n.parse().ok()),
        run_attempt: env.run_attempt.as_ref().and_then(|a| a.parse().ok()),
        job: env.job.clone(),
        event: env.event_name.clone(),
        branch: env.ref_name.clone(),
    }
}

/// The run's place under GitLab CI: the project, the merge request's head (or the
/// pipeline's commit), the pipeline and job, and what started the pipeline (`push`,
/// `schedule`, `merge_request_event`, …).
fn gitlab_source(repo_dir: &Path, env: &crate::actions_env::GitLabEnv) -> Source {
    Source {
        repository: env.project_path.clone(),
        commit: env
            .head_sha()
            .map(str::to_owned)
            .or_else(|| git_head(repo_dir)),
        pr: env.mr(),
        run_id: env.pipeline_id.clone(),
        run_number: None,
        run_attempt: None,
        job: env.job_name.clone(),
        event: env.pipeline_source.clone(),
        branch: env.ref_name.clone(),
    }
}

fn git_head(dir: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}

/// Now, as RFC 3339 UTC with seconds (`2026-11-21T15:00:00Z`).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Whether `text` is an RFC 3339 time in UTC as results write it
/// (`2026-11-21T15:00:00Z`, with or without fractions of a second): a time from a
/// result is shown and stored only when it is one.
pub fn is_rfc3339_utc(text: &str) -> bool {
    text.len() <= 40 && text.ends_with('Z') && humantime::parse_rfc3339_weak(text).is_ok()
}
