//! GitHub stand-ins shared by the publishing tests: the answers the real API gives to
//! what `publish` asks, for repository o/r and pull request 12.

#![allow(dead_code)]

use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Pull request 12's comments.
pub const COMMENTS: &str = "/repos/o/r/issues/12/comments";

/// A comment as GitHub lists it.
pub fn comment(id: u64, login: &str, body: &str, created_at: &str) -> Value {
    json!({
        "id": id, "body": body, "user": {"login": login, "type": "Bot"},
        "created_at": created_at,
        "html_url": format!("https://github.com/o/r/pull/12#issuecomment-{id}"),
    })
}

/// GET /user as an installation token sees it.
pub async fn installation_token(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(
            ResponseTemplate::new(403)
                .set_body_json(json!({"message": "Resource not accessible by integration"})),
        )
        .mount(server)
        .await;
}

pub async fn comments_page(server: &MockServer, page: u32, comments: Value) {
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .and(query_param("page", page.to_string()))
        .respond_with(ResponseTemplate::new(200).set_body_json(comments))
        .mount(server)
        .await;
}

pub async fn accept_comment(server: &MockServer) {
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(201).set_body_json(comment(
            900,
            "github-actions[bot]",
            "",
            "2026-11-21T15:00:00Z",
        )))
        .mount(server)
        .await;
}

/// A check-run create that succeeds, under the API root `prefix`.
pub async fn accept_check_run(server: &MockServer, prefix: &str, id: u64) {
    Mock::given(method("POST"))
        .and(path(format!("{prefix}/repos/o/r/check-runs")))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({ "id": id })))
        .mount(server)
        .await;
}

/// An update (PATCH) of comment `id` that succeeds.
pub async fn accept_comment_update(server: &MockServer, id: u64) {
    Mock::given(method("PATCH"))
        .and(path(format!("/repos/o/r/issues/comments/{id}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(comment(
            id,
            "github-actions[bot]",
            "",
            "2026-11-20T10:00:00Z",
        )))
        .mount(server)
        .await;
}

/// GET pull request 12, whose head is `sha`.
pub async fn pull_head(server: &MockServer, sha: &str) {
    Mock::given(method("GET"))
        .and(path("/repos/o/r/pulls/12"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"number": 12, "head": {"sha": sha}, "state": "open"})),
        )
        .mount(server)
        .await;
}

/// The check runs GitHub lists on commit `sha`.
pub async fn check_runs_on(server: &MockServer, sha: &str, runs: Value) {
    Mock::given(method("GET"))
        .and(path(format!("/repos/o/r/commits/{sha}/check-runs")))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"total_count": runs.as_array().map_or(0, Vec::len), "check_runs": runs}),
        ))
        .mount(server)
        .await;
}

/// A job of a run as GitHub lists it (`…/attempts/N/jobs`): completed, of `attempt`,
/// labelled `labels`.
pub fn job(name: &str, labels: &[&str], attempt: u32) -> Value {
    json!({
        "id": 7000 + attempt, "run_id": 501, "name": name, "status": "completed",
        "conclusion": "success", "labels": labels, "run_attempt": attempt,
        "runner_name": format!("runner for {name}"), "runner_group_name": "GitHub Actions",
        "html_url": format!("https://github.com/o/r/actions/runs/501/job/{attempt}"),
    })
}

/// The jobs of attempt `attempt` of run `run`: `jobs`.
pub async fn run_jobs(server: &MockServer, run: u64, attempt: u32, jobs: Vec<Value>) {
    Mock::given(method("GET"))
        .and(path(format!(
            "/repos/o/r/actions/runs/{run}/attempts/{attempt}/jobs"
        )))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"total_count": jobs.len(), "jobs": jobs})),
        )
        .mount(server)
        .await;
}
