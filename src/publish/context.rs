//! Which repository, pull request and commit a publication is about (DESIGN.md §6).
//!
//! Under GitHub Actions the variables and the event payload say it. On `pull_request`
//! events the commit is `pull_request.head.sha`: `GITHUB_SHA` is a merge commit there.
//! On `workflow_run` events (the fork-safe set-up) the commit is the triggering run's
//! `head_sha`; the pull request comes from the event when GitHub lists it, and otherwise
//! (always, for forks) from the partial results, which pull-request code wrote, so that
//! number is checked against the pull request's head before anything is posted on it.

use std::path::Path;

use crate::actions_env::ActionsEnv;
use crate::results::Report;
use crate::results::source::is_repository;

/// The GitHub API when `GITHUB_API_URL` is not set.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// What the command line says about the target, over what the environment says.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--repo OWNER/NAME`.
    pub repository: Option<String>,
    /// `--pr N`.
    pub pr: Option<u64>,
    /// `--sha SHA`.
    pub sha: Option<String>,
}

/// Where a pull request number came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrOrigin {
    /// The event payload or `--pr`: GitHub or the user said it.
    Trusted,
    /// The partial results: checked against the pull request's head before use.
    Results,
}

/// The publication's target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The API root, without a trailing slash (`GITHUB_API_URL`; GitHub Enterprise
    /// Server's is `https://HOST/api/v3`).
    pub api_url: String,
    /// `owner/name`.
    pub repository: Option<String>,
    /// `GITHUB_EVENT_NAME`.
    pub event_name: Option<String>,
    /// The pull request, and where its number came from.
    pub pr: Option<(u64, PrOrigin)>,
    /// The commit the results are about.
    pub head_sha: Option<String>,
    /// `GITHUB_RUN_ID` and `GITHUB_RUN_ATTEMPT`, which name this publication's check run.
    pub run: Option<(String, String)>,
}

/// Why the context cannot be worked out.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("cannot read the event payload `{}` ($GITHUB_EVENT_PATH): {reason}", path.display())]
    Payload {
        path: std::path::PathBuf,
        reason: String,
    },
    /// A value that is wrong (a malformed name, results for another commit).
    #[error("{0}")]
    Invalid(String),
    /// Something the publication needs that nothing says.
    #[error("{0}")]
    Missing(String),
}

impl Context {
    /// Works out the context from the Actions context, the report and the command line.
    pub fn resolve(
        env: &ActionsEnv,
        report: &Report,
        overrides: &Overrides,
    ) -> Result<Context, ContextError> {
        let event_name = env.event_name.clone();
        let payload = match &env.event_path {
            Some(path) => Some(read_payload(path)?),
            None => None,
        };
        let from_results = report.source.pr.map(|n| (n, PrOrigin::Results));
        let (pr, head_sha) = match (event_name.as_deref(), &payload) {
            (Some("workflow_run"), Some(payload)) => {
                let run = payload.get("workflow_run");
                let head = run
                    .and_then(|r| r.get("head_sha"))
                    .and_then(|s| s.as_str())
                    .map(str::to_owned);
                let listed = run
                    .and_then(|r| r.get("pull_requests"))
                    .and_then(|l| l.as_array())
                    .and_then(|l| l.first())
                    .and_then(|pr| pr.get("number"))
                    .and_then(serde_json::Value::as_u64)
                    .map(|n| (n, PrOrigin::Trusted));
                (listed.or(from_results), head)
            }
            (_, Some(payload)) if payload.get("pull_request").is_some() => {
                let pr = &payload["pull_request"];
                (
                    pr.get("number")
                        .and_then(serde_json::Value::as_u64)
                        .map(|n| (n, PrOrigin::Trusted)),
                    pr.pointer("/head/sha")
                        .and_then(|s| s.as_str())
                        .map(str::to_owned),
                )
            }
            // A merge queue's run: the queue's commit, and no pull request to comment
            // on (the queue holds several).
            (Some("merge_group"), Some(payload)) => (
                None,
                payload
                    .pointer("/merge_group/head_sha")
                    .and_then(|s| s.as_str())
                    .map(str::to_owned)
                    .or_else(|| env.sha.clone()),
            ),
            // Under Actions, another event (push, schedule, …): no pull request.
            (Some(_), _) => (None, env.sha.clone()),
            // Outside Actions: what `run` recorded.
            (None, _) => (from_results, report.source.commit.clone()),
        };
        let pr = overrides.pr.map(|n| (n, PrOrigin::Trusted)).or(pr);
        let head_sha = overrides.sha.clone().or(head_sha);
        if let Some(sha) = &head_sha {
            check_sha(sha)?;
            if let Some(recorded) = &report.source.commit
                && !recorded.eq_ignore_ascii_case(sha)
            {
                return Err(ContextError::Invalid(format!(
                    "the results are for commit {recorded}, but this publication is for commit {sha}; \
                     publishing them there would report on code that was not verified"
                )));
            }
        }
        let repository = overrides
            .repository
            .clone()
            .or_else(|| env.repository.clone())
            .or_else(|| report.source.repository.clone());
        if let Some(repository) = &repository {
            check_repository(repository)?;
        }
        let api_url = env.api_url.as_deref().unwrap_or(DEFAULT_API_URL);
        Ok(Context {
            api_url: api_url.trim_end_matches('/').to_owned(),
            repository,
            event_name,
            pr,
            head_sha,
            run: env
                .run_id
                .clone()
                .map(|id| (id, env.run_attempt.clone().unwrap_or_default())),
        })
    }

    /// The repository, or why a publication to GitHub cannot name it.
    pub fn require_repository(&self) -> Result<&str, ContextError> {
        self.repository.as_deref().ok_or_else(|| {
            ContextError::Missing(
                "no repository to publish to: set GITHUB_REPOSITORY or pass --repo OWNER/NAME"
                    .to_owned(),
            )
        })
    }
}

fn read_payload(path: &Path) -> Result<serde_json::Value, ContextError> {
    let error = |reason: String| ContextError::Payload {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = crate::results::io::read_bounded(path).map_err(|e| error(e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| error(e.to_string()))
}

/// A commit id: 40 (SHA-1) or 64 (SHA-256) hex digits.
fn check_sha(sha: &str) -> Result<(), ContextError> {
    if matches!(sha.len(), 40 | 64) && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(ContextError::Invalid(format!(
            "`{sha}` is not a commit id (40 or 64 hex digits)"
        )))
    }
}

/// `owner/name`, in the characters GitHub allows; it goes into request paths.
fn check_repository(repository: &str) -> Result<(), ContextError> {
    if is_repository(repository) {
        Ok(())
    } else {
        Err(ContextError::Invalid(format!(
            "`{repository}` is not a repository (OWNER/NAME)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Source;
    use std::collections::HashMap;

    const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";
    const MERGE: &str = "fedcba9876543210fedcba9876543210fedcba98";

    fn report(pr: Option<u64>, commit: Option<&str>) -> Report {
        let mut report: Report = serde_json::from_value(serde_json::json!({
            "format_version": 1,
            "manifest": {"path": "verify-matrix.yml", "digest": "sha256:00"},
            "source": {},
            "environments": [], "environments_tested": [], "rows": [], "missing": [],
            "infra_blocked": [], "disagreements": [], "manual": [],
            "verdict": "VERIFIED", "reasons": []
        }))
        .unwrap();
        report.source = Source {
            repository: Some("o/r".to_owned()),
            commit: commit.map(str::to_owned),
            pr,
            ..Source::default()
        };
        report
    }

    fn resolve(
        vars: &[(&str, &str)],
        payload: Option<serde_json::Value>,
        report: &Report,
    ) -> Result<Context, ContextError> {
        let dir = tempfile::tempdir().unwrap();
        let mut vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        if let Some(payload) = payload {
            let path = dir.path().join("event.json");
            std::fs::write(&path, payload.to_string()).unwrap();
            vars.insert("GITHUB_EVENT_PATH".to_owned(), path.display().to_string());
        }
        let env = ActionsEnv::from_vars(&|k| vars.get(k).cloned());
        Context::resolve(&env, report, &Overrides::default())
    }

    #[test]
    fn a_pull_request_event_uses_the_head_not_the_merge_commit() {
        let payload = serde_json::json!({"pull_request": {"number": 12, "head": {"sha": HEAD}}});
        let vars = [("GITHUB_EVENT_NAME", "pull_request"), ("GITHUB_SHA", MERGE)];
        let ctx = resolve(&vars, Some(payload), &report(Some(12), Some(HEAD))).unwrap();
        assert_eq!(ctx.pr, Some((12, PrOrigin::Trusted)));
        assert_eq!(ctx.head_sha.as_deref(), Some(HEAD));
        assert_eq!(ctx.api_url, DEFAULT_API_URL);
    }

    #[test]
    fn a_fork_workflow_run_takes_the_pr_from_the_results_as_untrusted() {
        let payload = serde_json::json!({"workflow_run": {"head_sha": HEAD, "pull_requests": []}});
        let vars = [
            ("GITHUB_EVENT_NAME", "workflow_run"),
            ("GITHUB_SHA", MERGE),
            ("GITHUB_API_URL", "https://ghe.example/api/v3/"),
        ];
        let ctx = resolve(&vars, Some(payload), &report(Some(7), Some(HEAD))).unwrap();
        assert_eq!(ctx.pr, Some((7, PrOrigin::Results)));
        assert_eq!(ctx.head_sha.as_deref(), Some(HEAD));
        assert_eq!(ctx.api_url, "https://ghe.example/api/v3");
    }

    #[test]
    fn results_for_another_commit_are_refused() {
        let payload = serde_json::json!({"workflow_run": {"head_sha": HEAD, "pull_requests": []}});
        let vars = [("GITHUB_EVENT_NAME", "workflow_run")];
        let err = resolve(&vars, Some(payload), &report(Some(7), Some(MERGE))).unwrap_err();
        assert!(
            err.to_string().contains("the results are for commit"),
            "{err}"
        );
    }

    #[test]
    fn a_push_has_no_pull_request_and_bad_names_are_refused() {
        let vars = [("GITHUB_EVENT_NAME", "push"), ("GITHUB_SHA", HEAD)];
        let ctx = resolve(&vars, None, &report(Some(7), Some(HEAD))).unwrap();
        assert_eq!(ctx.pr, None);
        let vars = [("GITHUB_REPOSITORY", "o/../x")];
        assert!(resolve(&vars, None, &report(None, None)).is_err());
        let vars = [("GITHUB_EVENT_NAME", "push"), ("GITHUB_SHA", "HEAD~1")];
        assert!(resolve(&vars, None, &report(None, None)).is_err());
    }
}
