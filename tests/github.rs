//! `publish --to comment,check-run` against a recording GitHub stand-in on 127.0.0.1
//! (wiremock). Each test asserts the exact method, path, headers and JSON body of every
//! request, and that the token never shows. Every recorded request is also checked
//! against GitHub's own OpenAPI description of the REST API (see `openapi.rs`).

mod common;
#[path = "common/coordinator.rs"]
mod coordinator;
#[path = "common/openapi.rs"]
mod openapi;
#[path = "common/stand_in.rs"]
mod stand_in;

use std::process::Output;

use common::Project;
use serde_json::{Value, json};
use stand_in::{
    COMMENTS, accept_check_run, accept_comment, accept_comment_update, check_runs_on, comment,
    comments_page, installation_token, pull_head,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const TOKEN: &str = "ghs_TestTokenThatMustNeverBeShown0123456789";
/// The pull request's head, which the runs verified.
const HEAD: &str = "1111111111111111111111111111111111111111";
/// The merge commit GitHub sets as GITHUB_SHA on pull_request events.
const MERGE: &str = "2222222222222222222222222222222222222222";
const MARKER: &str = "<!-- cargo-verify-matrix:verify-matrix.yml -->";

const MANIFEST: &str = "version: 1
environments: [{name: a}, {name: b}]
checks:
  - { id: unit, run: 'echo \"unit in $VERIFY_MATRIX_ENV\"; test \"$VERIFY_MATRIX_ENV\" != b' }
";

/// `manifest` run in each of `envs` as the matrix jobs of PR #12 would, merged into
/// `report.json`.
fn reported(manifest: &str, envs: &[&str]) -> Project {
    reported_with(manifest, envs, &[], &[])
}

/// [`reported`], with `files` written first and `vars` set for the runs (e.g. a
/// workflow's secrets).
fn reported_with(
    manifest: &str,
    envs: &[&str],
    files: &[(&str, &str)],
    vars: &[(&str, &str)],
) -> Project {
    let project = Project::new(manifest);
    for (name, text) in files {
        project.write(name, text);
    }
    let event = project.write(
        "pr-event.json",
        &json!({"pull_request": {"number": 12, "head": {"sha": HEAD}}}).to_string(),
    );
    for env in envs {
        let status = project
            .std_cmd()
            .args(["run", "--env", env, "--out", &format!("artifacts/{env}")])
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", &event)
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_SHA", MERGE)
            .env("GITHUB_RUN_ID", "77")
            .env("GITHUB_RUN_ATTEMPT", "1")
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        assert!(status.status.code().is_some(), "{status:?}");
    }
    let merge = project
        .std_cmd()
        .args(["merge", "--out", "report.json", "artifacts"])
        .output()
        .unwrap();
    assert!(project.path().join("report.json").exists(), "{merge:?}");
    project
}

/// The binary as the final job (run 78) of a `pull_request` workflow for PR #12,
/// publishing to `api` with the token.
fn final_job(project: &Project, api: &str) -> std::process::Command {
    let mut cmd = project.std_cmd();
    cmd.env("GITHUB_API_URL", api)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", project.path().join("pr-event.json"))
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_SHA", MERGE)
        .env("GITHUB_RUN_ID", "78")
        .env("GITHUB_RUN_ATTEMPT", "1");
    cmd
}

/// `publish ARGS report.json` as the final job of a `pull_request` workflow, against
/// `api`. Checks that the token shows nowhere in what it printed.
async fn publish(project: &Project, api: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = final_job(project, api);
    cmd.arg("publish").args(args).arg("report.json");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!shown.contains(TOKEN), "the token leaked:\n{shown}");
    assert!(
        !shown.contains("TestTokenThatMust"),
        "part of the token leaked:\n{shown}"
    );
    output
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The requests the stand-in received, each as (method, path?query, JSON body).
async fn requests(server: &MockServer) -> Vec<(String, String, Value)> {
    let received: Vec<Request> = server.received_requests().await.unwrap();
    received.iter().map(check_headers).collect()
}

/// Every request carries the headers GitHub's REST API documents.
fn check_headers(request: &Request) -> (String, String, Value) {
    let header = |name: &str| {
        request
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(header("authorization"), format!("Bearer {TOKEN}"));
    assert_eq!(header("accept"), "application/vnd.github+json");
    assert_eq!(header("x-github-api-version"), "2022-11-28");
    assert!(
        !header("user-agent").is_empty(),
        "GitHub requires a User-Agent"
    );
    let body = if request.body.is_empty() {
        Value::Null
    } else {
        assert_eq!(header("content-type"), "application/json");
        serde_json::from_slice(&request.body).expect("a JSON body")
    };
    let below_api = request
        .url
        .path()
        .strip_prefix("/api/v3")
        .unwrap_or(request.url.path());
    openapi::check_request(
        request.method.as_str(),
        below_api,
        request.url.query(),
        &body,
    );
    let target = match request.url.query() {
        Some(q) => format!("{}?{q}", request.url.path()),
        None => request.url.path().to_owned(),
    };
    (request.method.to_string(), target, body)
}

fn writes(all: &[(String, String, Value)]) -> Vec<(String, String, Value)> {
    all.iter().filter(|(m, ..)| m != "GET").cloned().collect()
}

fn listing(page: u32) -> String {
    format!("{COMMENTS}?per_page=100&page={page}")
}

/// The body the first post sends, with the job summary written alongside.
async fn first_post(project: &Project) -> String {
    let server = MockServer::start().await;
    pull_head(&server, HEAD).await;
    installation_token(&server).await;
    comments_page(&server, 1, json!([])).await;
    accept_comment(&server).await;
    let summary = project.write("summary.md", "");
    let out = publish(
        project,
        &server.uri(),
        &["--to", "comment,summary"],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let all = requests(&server).await;
    let body = all[3].2["body"].as_str().unwrap().to_owned();
    assert_eq!(
        all,
        vec![
            // The PR's head is the commit the results are about: the comment is ours to write.
            ("GET".into(), "/repos/o/r/pulls/12".into(), Value::Null),
            ("GET".into(), "/user".into(), Value::Null),
            ("GET".into(), listing(1), Value::Null),
            ("POST".into(), COMMENTS.into(), json!({ "body": body })),
        ]
    );
    body
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_post_creates_one_comment_with_the_matrix() {
    let project = reported(MANIFEST, &["a", "b"]);
    let body = first_post(&project).await;
    assert!(body.starts_with(&format!("{MARKER}\n")), "{body}");
    assert!(
        body.contains("\n| unit | a | 0 | PASS |\n| unit | b | 1 | FAIL |\n"),
        "{body}"
    );
    assert!(
        body.contains("\nAll Required Environments: NOT VERIFIED\n"),
        "{body}"
    );
    // The same rendering as the job summary written in the same run.
    assert_eq!(project.read("summary.md"), body);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unchanged_comment_is_not_rewritten() {
    let project = reported(MANIFEST, &["a", "b"]);
    let body = first_post(&project).await;
    let server = MockServer::start().await;
    installation_token(&server).await;
    // GitHub hands bodies back with CRLF line endings.
    let stored = body.replace('\n', "\r\n");
    comments_page(
        &server,
        1,
        json!([comment(
            5,
            "github-actions[bot]",
            &stored,
            "2026-11-20T10:00:00Z"
        )]),
    )
    .await;
    let out = publish(&project, &server.uri(), &["--to", "comment"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unchanged, not rewritten"),
        "{}",
        stderr(&out)
    );
    let all = requests(&server).await;
    assert_eq!(writes(&all), vec![], "no write at all");
    assert_eq!(all.len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_comment_is_updated_in_place_with_patch() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    installation_token(&server).await;
    let old = format!("{MARKER}\n## ✅ Environment Verification Matrix: VERIFIED\n");
    comments_page(
        &server,
        1,
        json!([
            comment(3, "octocat", "Looks good", "2026-11-20T09:00:00Z"),
            comment(5, "github-actions[bot]", &old, "2026-11-20T10:00:00Z"),
        ]),
    )
    .await;
    accept_comment_update(&server, 5).await;
    let out = publish(&project, &server.uri(), &["--to", "comment"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let all = writes(&requests(&server).await);
    assert_eq!(all.len(), 1, "{all:?}");
    let (verb, target, body) = &all[0];
    assert_eq!(
        (verb.as_str(), target.as_str()),
        ("PATCH", "/repos/o/r/issues/comments/5")
    );
    let body = body["body"].as_str().unwrap();
    assert!(
        body.starts_with(MARKER) && body.contains("| unit | b | 1 | FAIL |"),
        "{body}"
    );
    assert!(
        stderr(&out).contains(
            "published: PR comment on o/r#12 updated: https://github.com/o/r/pull/12#issuecomment-5"
        ),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicates_are_removed_keeping_the_oldest_and_others_comments_are_left_alone() {
    let project = reported(MANIFEST, &["a", "b"]);
    let body = first_post(&project).await;
    let server = MockServer::start().await;
    // A personal token: its user is who writes our comments.
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"login": "ci-bot"})))
        .mount(&server)
        .await;
    comments_page(
        &server,
        1,
        json!([
            // Someone else copied our marker: never edited, never deleted.
            comment(
                4,
                "mallory",
                &format!("{MARKER}\nAll Required Environments: VERIFIED"),
                "2026-11-20T09:00:00Z"
            ),
            comment(6, "ci-bot", &body, "2026-11-20T10:00:00Z"),
            comment(
                8,
                "ci-bot",
                &format!("{MARKER}\nstale"),
                "2026-11-20T10:00:01Z"
            ),
            comment(7, "ci-bot", &body, "2026-11-20T10:00:01Z"),
            // A different manifest's comment.
            comment(
                9,
                "ci-bot",
                "<!-- cargo-verify-matrix:other.yml -->\nx",
                "2026-11-20T10:00:02Z"
            ),
        ]),
    )
    .await;
    Mock::given(method("DELETE"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&server)
        .await;
    let out = publish(&project, &server.uri(), &["--to", "comment"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        writes(&requests(&server).await),
        vec![
            (
                "DELETE".into(),
                "/repos/o/r/issues/comments/7".into(),
                Value::Null
            ),
            (
                "DELETE".into(),
                "/repos/o/r/issues/comments/8".into(),
                Value::Null
            ),
        ]
    );
    assert!(stderr(&out).contains("unchanged, not rewritten: https://github.com/o/r/pull/12#issuecomment-6 (2 duplicates removed)"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn every_page_of_comments_is_read() {
    let project = reported(MANIFEST, &["a", "b"]);
    let body = first_post(&project).await;
    let server = MockServer::start().await;
    installation_token(&server).await;
    let others = |from: u64, n: u64| -> Vec<Value> {
        (from..from + n)
            .map(|id| comment(id, "octocat", "+1", "2026-11-19T00:00:00Z"))
            .collect()
    };
    comments_page(&server, 1, json!(others(1, 100))).await;
    let mut second = others(101, 30);
    second.push(comment(
        150,
        "github-actions[bot]",
        &body,
        "2026-11-20T00:00:00Z",
    ));
    comments_page(&server, 2, json!(second)).await;
    let out = publish(&project, &server.uri(), &["--to", "comment"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let all = requests(&server).await;
    let targets: Vec<&str> = all.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(
        targets,
        vec!["/repos/o/r/pulls/12", "/user", &listing(1), &listing(2)]
    );
    assert!(
        stderr(&out).contains("issuecomment-150"),
        "{}",
        stderr(&out)
    );
}

/// 60 checks, each failing in `a`; `b` never reports: 60 failed and 60 missing pairs.
fn sixty_checks() -> String {
    let mut manifest = String::from("version: 1\nenvironments: [{name: a}, {name: b}]\nchecks:\n");
    for i in 0..60 {
        manifest.push_str(&format!("  - id: c{i:02}\n    run: 'exit 3'\n"));
    }
    manifest
}

#[tokio::test(flavor = "multi_thread")]
async fn a_check_run_sends_120_annotations_in_three_requests() {
    let project = reported(&sixty_checks(), &["a"]);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/check-runs"))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(json!({"id": 4242, "html_url": "https://github.com/o/r/runs/4242"})),
        )
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/o/r/check-runs/4242"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 4242})))
        .mount(&server)
        .await;
    let out = publish(
        &project,
        &server.uri(),
        &["--to", "check-run", "--check-name", "Verify"],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let mut all = requests(&server).await;
    // First, whether this run's pending check run is there to complete (it is not).
    let (verb, target, _) = all.remove(0);
    assert_eq!(
        (verb.as_str(), target.as_str()),
        (
            "GET",
            format!(
                "/repos/o/r/commits/{HEAD}/check-runs?check_name=Verify&filter=all&per_page=100"
            )
            .as_str()
        )
    );
    assert_eq!(
        all.len(),
        3,
        "{:?}",
        all.iter().map(|r| &r.1).collect::<Vec<_>>()
    );
    let (verb, target, create) = &all[0];
    assert_eq!(
        (verb.as_str(), target.as_str()),
        ("POST", "/repos/o/r/check-runs")
    );
    assert_eq!(create["name"], "Verify");
    assert_eq!(
        create["head_sha"], HEAD,
        "the PR's head, not the merge commit"
    );
    assert_eq!(create["status"], "completed");
    assert_eq!(create["conclusion"], "failure");
    assert_eq!(
        create["external_id"],
        "cargo-verify-matrix:verify-matrix.yml:78.1"
    );
    let output = &create["output"];
    assert!(
        output["title"]
            .as_str()
            .unwrap()
            .starts_with("NOT VERIFIED: "),
        "{}",
        output["title"]
    );
    let summary = output["summary"].as_str().unwrap();
    assert!(
        summary.starts_with(MARKER) && summary.len() <= 65_535,
        "{summary}"
    );
    assert!(
        output["text"]
            .as_str()
            .unwrap()
            .contains("<details><summary>❌ c00 in a")
    );
    // The summary answers and shows the grid; the failure details are the text only.
    assert!(
        !summary.contains("<details><summary>❌ c00 in a"),
        "said twice: {summary}"
    );
    assert!(summary.contains("- ❌ **c00 failed in a"), "{summary}");
    let annotations = output["annotations"].as_array().unwrap();
    assert_eq!(annotations.len(), 50);
    // c00 is defined on line 4 of the manifest, c59 on line 122.
    assert_eq!(
        annotations[0],
        json!({
            "path": "verify-matrix.yml", "start_line": 4, "end_line": 4,
            "annotation_level": "failure", "title": "c00 failed in a",
            "message": annotations[0]["message"],
        })
    );
    // The exit code is said once (the summary gives it).
    let message = annotations[0]["message"].as_str().unwrap();
    assert!(message.starts_with("exit 3 (required 0)"), "{message}");
    assert_eq!(message.matches("exit 3").count(), 1, "{message}");
    for (i, (verb, target, update)) in all[1..].iter().enumerate() {
        assert_eq!(
            (verb.as_str(), target.as_str()),
            ("PATCH", "/repos/o/r/check-runs/4242")
        );
        assert_eq!(update["output"]["title"], output["title"]);
        assert_eq!(update["output"]["summary"], output["summary"]);
        let n = update["output"]["annotations"].as_array().unwrap().len();
        assert_eq!(n, [50, 20][i]);
    }
    let last = all[2].2["output"]["annotations"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["title"], "c59: no result in b");
    assert_eq!(last["start_line"], 122);
    assert!(
        stderr(&out).contains("https://github.com/o/r/runs/4242"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_502_is_retried_after_looking_for_what_the_create_may_have_made() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    installation_token(&server).await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(502).set_body_string("<html>Bad gateway</html>"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    accept_comment(&server).await;
    comments_page(&server, 1, json!([])).await;
    let out = publish(&project, &server.uri(), &["--to", "comment"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("502 Bad Gateway; retrying in 1.0 s (1/4)"),
        "{}",
        stderr(&out)
    );
    let all = requests(&server).await;
    let order: Vec<(&str, &str)> = all
        .iter()
        .map(|(m, t, _)| (m.as_str(), t.as_str()))
        .collect();
    let list = listing(1);
    assert_eq!(
        order,
        vec![
            ("GET", "/repos/o/r/pulls/12"),
            ("GET", "/user"),
            ("GET", list.as_str()),
            ("POST", COMMENTS),
            // Before sending the create again: did the first one happen after all?
            ("GET", list.as_str()),
            ("POST", COMMENTS),
        ]
    );
    assert_eq!(all[3].2, all[5].2, "the same body both times");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_create_that_happened_despite_a_502_is_not_sent_again() {
    let project = reported(MANIFEST, &["a", "b"]);
    let body = first_post(&project).await;
    let server = MockServer::start().await;
    installation_token(&server).await;
    Mock::given(method("POST"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(502))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    comments_page(
        &server,
        1,
        json!([comment(
            31,
            "github-actions[bot]",
            &body,
            "2026-11-21T15:00:00Z"
        )]),
    )
    .await;
    let out = publish(&project, &server.uri(), &["--to", "comment"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let posts = writes(&requests(&server).await);
    assert_eq!(posts.len(), 1, "exactly one create: {posts:?}");
    assert!(stderr(&out).contains("issuecomment-31"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rate_limit_waits_as_long_as_retry_after_says() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    installation_token(&server).await;
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("retry-after", "2")
                .set_body_json(json!({"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"message": "Too many requests"})),
        )
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&server)
        .await;
    comments_page(&server, 1, json!([])).await;
    accept_comment(&server).await;
    let started = std::time::Instant::now();
    let out = publish(&project, &server.uri(), &["--to", "comment"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("(rate limited); retrying in 2.0 s (1/4)"),
        "{err}"
    );
    assert!(
        err.contains("429 Too many requests (rate limited); retrying in 1.0 s (2/4)"),
        "{err}"
    );
    // A lower bound only: the waits happened (never an upper bound on a loaded machine).
    assert!(started.elapsed() >= std::time::Duration::from_secs(3));
    assert_eq!(writes(&requests(&server).await).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_token_falls_back_to_the_job_summary_and_the_verdicts_exit_code() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    installation_token(&server).await;
    comments_page(&server, 1, json!([])).await;
    for target in [COMMENTS, "/repos/o/r/check-runs"] {
        Mock::given(method("POST"))
            .and(path(target))
            .respond_with(ResponseTemplate::new(403).set_body_json(
                json!({"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest"}),
            ))
            .mount(&server)
            .await;
    }
    let summary = project.write("summary.md", "");
    let out = publish(
        &project,
        &server.uri(),
        &["--to", "comment,check-run"],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    )
    .await;
    // The verdict's code (1: a check failed), not 5.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "warning: creating the PR comment: 403 Resource not accessible by integration"
        ),
        "{err}"
    );
    assert!(
        err.contains("warning: creating the check run: 403 Resource not accessible by integration"),
        "{err}"
    );
    assert!(err.contains("`workflow_run`"), "{err}");
    assert!(err.contains("written to the job summary"), "{err}");
    let written = project.read("summary.md");
    assert!(
        written.starts_with(MARKER) && written.contains("| unit | b | 1 | FAIL |"),
        "{written}"
    );
    // Each create was tried once: a 403 is not retried.
    assert_eq!(writes(&requests(&server).await).len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn github_enterprise_requests_go_under_its_api_path() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    accept_check_run(&server, "/api/v3", 1).await;
    let api = format!("{}/api/v3", server.uri());
    let out = publish(&project, &api, &["--to", "check-run"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let all = requests(&server).await;
    assert_eq!(all.len(), 2);
    assert!(
        all[0]
            .1
            .starts_with(&format!("/api/v3/repos/o/r/commits/{HEAD}/check-runs?")),
        "{}",
        all[0].1
    );
    assert_eq!(all[1].1, "/api/v3/repos/o/r/check-runs");
    assert_eq!(all[1].2["head_sha"], HEAD);
}

/// The fork-safe set-up: a `workflow_run` workflow publishes what the PR's runs recorded.
#[tokio::test(flavor = "multi_thread")]
async fn a_workflow_run_takes_the_pr_and_commit_from_the_results_after_checking_them() {
    let project = reported(MANIFEST, &["a", "b"]);
    let event = project.write(
        "run-event.json",
        &json!({"workflow_run": {"head_sha": HEAD, "pull_requests": [], "event": "pull_request"}})
            .to_string(),
    );
    let server = MockServer::start().await;
    installation_token(&server).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/pulls/12"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"number": 12, "head": {"sha": HEAD}})),
        )
        .mount(&server)
        .await;
    comments_page(&server, 1, json!([])).await;
    accept_comment(&server).await;
    accept_check_run(&server, "", 2).await;
    let workflow_run = [
        ("GITHUB_EVENT_NAME", "workflow_run"),
        ("GITHUB_EVENT_PATH", event.to_str().unwrap()),
        // On workflow_run, GITHUB_SHA is the default branch's head.
        ("GITHUB_SHA", "3333333333333333333333333333333333333333"),
    ];
    let out = publish(
        &project,
        &server.uri(),
        &["--to", "comment,check-run"],
        &workflow_run,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let all = requests(&server).await;
    let order: Vec<(&str, &str)> = all
        .iter()
        .map(|(m, t, _)| (m.as_str(), t.as_str()))
        .collect();
    let list = listing(1);
    let find = format!(
        "/repos/o/r/commits/{HEAD}/check-runs?check_name=Environment%20Verification%20Matrix&filter=all&per_page=100"
    );
    assert_eq!(
        order,
        vec![
            ("GET", "/repos/o/r/pulls/12"),
            ("GET", "/user"),
            ("GET", list.as_str()),
            ("POST", COMMENTS),
            ("GET", find.as_str()),
            ("POST", "/repos/o/r/check-runs"),
        ]
    );
    assert_eq!(all[5].2["head_sha"], HEAD);

    // A PR whose head is not the verified commit gets no comment; the check run still
    // goes on the commit the results are about.
    server.reset().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/pulls/12"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"number": 12, "head": {"sha": "4444444444444444444444444444444444444444"}}),
        ))
        .mount(&server)
        .await;
    accept_check_run(&server, "", 3).await;
    let out = publish(
        &project,
        &server.uri(),
        &["--to", "comment,check-run"],
        &workflow_run,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "PR comment on o/r#12 not posted: the results name PR #12, whose head is 4444"
        ),
        "{}",
        stderr(&out)
    );
    let writes = writes(&requests(&server).await);
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].1, "/repos/o/r/check-runs");

    // Results for another commit than the workflow run's are refused outright.
    let other = project.write(
        "other-event.json",
        &json!({"workflow_run": {"head_sha": "5555555555555555555555555555555555555555", "pull_requests": []}}).to_string(),
    );
    let out = publish(
        &project,
        &server.uri(),
        &["--to", "check-run"],
        &[
            ("GITHUB_EVENT_NAME", "workflow_run"),
            ("GITHUB_EVENT_PATH", other.to_str().unwrap()),
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("the results are for commit {HEAD}")),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn other_failures_exit_5_with_the_apis_message_and_never_the_token() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/check-runs"))
        .respond_with(ResponseTemplate::new(500).set_body_json(json!({"message": "Server Error"})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/repos/o/r/commits/{HEAD}/check-runs")))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"total_count": 0, "check_runs": []})),
        )
        .mount(&server)
        .await;
    let out = publish(
        &project,
        &server.uri(),
        &["--to", "check-run", "--retries", "2"],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    // The backoff doubles: 1 s, then 2 s.
    assert!(
        err.contains("500 Server Error; retrying in 1.0 s (1/2)"),
        "{err}"
    );
    assert!(
        err.contains("500 Server Error; retrying in 2.0 s (2/2)"),
        "{err}"
    );
    assert!(
        err.contains("error: publishing failed: creating the check run: 500 Server Error (gave up after 3 attempts)"),
        "{err}"
    );
    let all = requests(&server).await;
    let find = format!(
        "GET /repos/o/r/commits/{HEAD}/check-runs?check_name=Environment%20Verification%20Matrix&filter=all&per_page=100"
    );
    let create = "POST /repos/o/r/check-runs".to_owned();
    assert_eq!(
        all.iter()
            .map(|(m, t, _)| format!("{m} {t}"))
            .collect::<Vec<_>>(),
        vec![
            find.clone(),
            create.clone(),
            find.clone(),
            create.clone(),
            find,
            create
        ]
    );

    // An API that echoes the token back: it is redacted, even from -v's request lines.
    server.reset().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(json!({"message": format!("Bad credentials: {TOKEN}")})),
        )
        .mount(&server)
        .await;
    let out = publish(&project, &server.uri(), &["-v", "--to", "check-run"], &[]).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("401 Bad credentials: ***"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_prints_the_requests_and_sends_nothing() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    let out = publish(
        &project,
        &server.uri(),
        &["--dry-run", "--to", "comment,check-run"],
        &[("GITHUB_TOKEN", "")],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("=== PR comment on o/r#12: POST /repos/o/r/issues/12/comments"),
        "{stdout}"
    );
    assert!(
        stdout.contains("=== check run: POST /repos/o/r/check-runs\n{"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("\"head_sha\": \"{HEAD}\"")),
        "{stdout}"
    );
    assert!(requests(&server).await.is_empty());

    // Without a token, a real publication is a usage error, before anything is sent.
    let out = publish(
        &project,
        &server.uri(),
        &["--to", "comment"],
        &[("GITHUB_TOKEN", "")],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("needs a token"), "{}", stderr(&out));
}

/// A failing check prints the workflow's secrets and the tool's own token (which it can
/// only read from a file: the token is not in its environment): neither the comment nor
/// the check run nor the job summary carries any of them.
#[tokio::test(flavor = "multi_thread")]
async fn secrets_and_the_token_never_reach_the_comment_or_the_check_run() {
    const NPM: &str = "npm-secret-value-4711";
    const API_KEY: &str = "api-key-value-0815";
    let manifest = "version: 1
environments: [{name: a}]
checks:
  - { id: leaky, run: 'env | sort; echo \"MY_API_KEY=$MY_API_KEY\"; echo \"NPM_TOKEN=$NPM_TOKEN\"; echo \"the token: $(cat token.txt)\"; exit 1' }
";
    let secrets = [("NPM_TOKEN", NPM), ("MY_API_KEY", API_KEY)];
    let mut run_vars = secrets.to_vec();
    run_vars.push(("GITHUB_TOKEN", TOKEN));
    // The runs see the secrets and the token, as a workflow's job would.
    let project = reported_with(manifest, &["a"], &[("token.txt", TOKEN)], &run_vars);
    // The log is the evidence, but for the secrets: masked as it was written.
    let log = project.read("artifacts/a/logs/a/leaky.log");
    assert!(
        !log.contains(NPM) && !log.contains(API_KEY) && log.contains("NPM_TOKEN=***"),
        "{log}"
    );
    assert!(log.contains("the token: ***"), "{log}");
    assert!(
        !log.contains("GITHUB_TOKEN="),
        "the tool's token never reaches a check:\n{log}"
    );

    let server = MockServer::start().await;
    installation_token(&server).await;
    comments_page(&server, 1, json!([])).await;
    accept_comment(&server).await;
    accept_check_run(&server, "", 7).await;
    let summary = project.write("summary.md", "");
    let out = publish(
        &project,
        &server.uri(),
        &["--to", "comment,check-run,summary"],
        &[
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            secrets[0],
            secrets[1],
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let sent = writes(&requests(&server).await);
    assert_eq!(sent.len(), 2, "{sent:?}");
    let published = format!("{sent:?}\n{}", project.read("summary.md"));
    for secret in [TOKEN, NPM, API_KEY] {
        assert!(
            !published.contains(secret),
            "{secret} was published:\n{published}"
        );
    }
    assert!(published.contains("MY_API_KEY=***"), "{published}");
    assert!(published.contains("NPM_TOKEN=***"), "{published}");
    assert!(published.contains("the token: ***"), "{published}");
}

/// `report ARGS…` as the final job of a `pull_request` workflow, against `api`.
async fn report(project: &Project, api: &str, args: &[&str]) -> Output {
    let mut cmd = final_job(project, api);
    cmd.arg("report").args(args);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// A push whose plan failed (an invalid manifest), or whose legs left no results: the
/// report job still publishes, for this head commit, a NOT VERIFIED comment and a
/// failing check run with the reason, replacing an earlier VERIFIED.
#[tokio::test(flavor = "multi_thread")]
async fn without_results_the_head_commit_gets_a_not_verified_with_the_reason() {
    for (manifest, reason) in [
        (MANIFEST, "no results to judge"),
        (
            "version: 1\nenvironments: [{name: a}]\nchecks:\n  - { id: unit, run: 'true', timout: 5 }\n",
            "no verdict: the manifest is invalid: unknown key \\`timout\\` (did you mean \\`timeout\\`?) \
             at line 4, column 30 (checks\\[0\\].timout)",
        ),
    ] {
        let project = Project::new(manifest);
        project.write(
            "pr-event.json",
            &json!({"pull_request": {"number": 12, "head": {"sha": HEAD}}}).to_string(),
        );
        let server = MockServer::start().await;
        installation_token(&server).await;
        let stale = format!("{MARKER}\n## ✅ Environment Verification Matrix: VERIFIED\n");
        comments_page(
            &server,
            1,
            json!([comment(
                5,
                "github-actions[bot]",
                &stale,
                "2026-11-20T10:00:00Z"
            )]),
        )
        .await;
        accept_comment_update(&server, 5).await;
        accept_check_run(&server, "", 9).await;
        let out = report(
            &project,
            &server.uri(),
            &["--to", "comment,check-run", "artifacts"],
        )
        .await;
        assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
        let sent = writes(&requests(&server).await);
        assert_eq!(sent.len(), 2, "{sent:?}");
        let body = sent[0].2["body"].as_str().unwrap();
        assert_eq!(sent[0].1, "/repos/o/r/issues/comments/5");
        assert!(body.starts_with(&format!("{MARKER}\n")), "{body}");
        assert!(
            body.contains("All Required Environments: NOT VERIFIED"),
            "{body}"
        );
        assert!(body.contains(reason), "{reason} missing from:\n{body}");
        let run = &sent[1].2;
        assert_eq!(run["head_sha"], HEAD);
        assert_eq!(run["conclusion"], "failure");
    }
}

/// The commit an earlier push verified.
const OLD: &str = "0123456789abcdef0123456789abcdef01234567";

/// Our comment with the VERIFIED result of the earlier commit `OLD`.
fn verified_for_old() -> String {
    format!(
        "{MARKER}\n## ✅ Environment Verification Matrix: VERIFIED\n\n\
         Commit [`0123456`](https://github.com/o/r/commit/{OLD}) · run [#70](https://github.com/o/r/actions/runs/70)\n\n\
         | Check | Environment | Exit Code | Result |\n|-------|-------------|-----------|--------|\n\
         | unit | a | 0 | PASS |\n| unit | b | 0 | PASS |\n\n\
         Environments Tested: a, b\nAll Required Environments: VERIFIED\n"
    )
}

/// `publish --pending` as the plan job of run 78 marks the head pending; then the run is
/// cancelled before any report: what stays is an in-progress check run on the head and
/// a comment that gives no verdict (the earlier commit's VERIFIED is kept, quoted).
#[tokio::test(flavor = "multi_thread")]
async fn a_run_cancelled_after_plan_leaves_an_in_progress_check_and_a_pending_comment() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    pull_head(&server, HEAD).await;
    installation_token(&server).await;
    comments_page(
        &server,
        1,
        json!([comment(
            5,
            "github-actions[bot]",
            &verified_for_old(),
            "2026-11-20T10:00:00Z"
        )]),
    )
    .await;
    accept_comment_update(&server, 5).await;
    accept_check_run(&server, "", 31).await;
    let mut cmd = final_job(&project, &server.uri());
    cmd.args(["publish", "--pending", "--to", "comment,check-run"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains(TOKEN));
    let sent = writes(&requests(&server).await);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].1, "/repos/o/r/issues/comments/5");
    let body = sent[0].2["body"].as_str().unwrap();
    assert!(
        body.starts_with(&format!(
            "{MARKER}\n## ⏳ Environment Verification Matrix: verifying `1111111`\n\n\
             Commit [`1111111`](https://github.com/o/r/commit/{HEAD}) · run [id 78](https://github.com/o/r/actions/runs/78): \
             the checks are running; no verdict yet.\n\
             The result below is for `0123456`, an earlier commit: it is not a verdict for `1111111`.\n"
        )),
        "{body}"
    );
    // The previous result stays for reviewers, but nothing in it reads as a verdict.
    assert!(body.contains("| unit | a | 0 | PASS |"), "{body}");
    assert!(
        body.contains("### Previous result, for `0123456`: VERIFIED"),
        "{body}"
    );
    assert!(
        !regex::Regex::new("All Required Environments: VERIFIED")
            .unwrap()
            .is_match(body),
        "{body}"
    );
    assert!(
        coordinator::coordinator_accepts(body, &[("unit", "a"), ("unit", "b")]).is_err(),
        "{body}"
    );
    let (_, target, run) = &sent[1];
    assert_eq!(target, "/repos/o/r/check-runs");
    assert_eq!(run["head_sha"], HEAD);
    assert_eq!(run["status"], "in_progress");
    assert_eq!(run.get("conclusion"), None, "{run}");
    assert_eq!(
        run["external_id"],
        "cargo-verify-matrix:verify-matrix.yml:78.1"
    );
    assert_eq!(run["output"]["title"], "Verifying 1111111: no verdict yet");
}

/// The report of run 78 completes the check run its plan job left in progress (no
/// second check run) and names the commit and the run it verified.
#[tokio::test(flavor = "multi_thread")]
async fn the_report_completes_the_pending_check_run_and_names_the_commit_and_run() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    check_runs_on(
        &server,
        HEAD,
        json!([
            // An earlier run's, completed: left alone.
            {"id": 20, "status": "completed", "conclusion": "failure",
             "external_id": "cargo-verify-matrix:verify-matrix.yml:70.1"},
            // This run's pending mark, from attempt 1's plan job.
            {"id": 31, "status": "in_progress", "conclusion": null,
             "external_id": "cargo-verify-matrix:verify-matrix.yml:78.1"},
        ]),
    )
    .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/o/r/check-runs/31"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": 31, "html_url": "https://github.com/o/r/runs/31"})),
        )
        .mount(&server)
        .await;
    let out = publish(
        &project,
        &server.uri(),
        &["--to", "check-run"],
        &[("GITHUB_RUN_ATTEMPT", "2")],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let sent = writes(&requests(&server).await);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (verb, target, body) = &sent[0];
    assert_eq!(
        (verb.as_str(), target.as_str()),
        ("PATCH", "/repos/o/r/check-runs/31")
    );
    assert_eq!(body["status"], "completed");
    assert_eq!(body["conclusion"], "failure");
    assert_eq!(
        body["external_id"],
        "cargo-verify-matrix:verify-matrix.yml:78.2"
    );
    assert_eq!(body.get("head_sha"), None);
    let summary = body["output"]["summary"].as_str().unwrap();
    assert!(
        summary.contains(&format!(
            "\nCommit [`1111111`](https://github.com/o/r/commit/{HEAD}) · run [id 77](https://github.com/o/r/actions/runs/77)\n"
        )),
        "{summary}"
    );
    assert!(
        stderr(&out).contains("https://github.com/o/r/runs/31"),
        "{}",
        stderr(&out)
    );
}

/// `report --cancelled` (the workflow passes whether a job was cancelled): NOT VERIFIED
/// with the reason, and a `cancelled` check run, even when the results that arrived pass.
#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_run_reports_cancelled_never_verified() {
    let project = reported(
        "version: 1\nenvironments: [{name: a}]\nchecks:\n  - { id: unit, run: 'true' }\n",
        &["a"],
    );
    let server = MockServer::start().await;
    pull_head(&server, HEAD).await;
    installation_token(&server).await;
    comments_page(&server, 1, json!([])).await;
    accept_comment(&server).await;
    accept_check_run(&server, "", 9).await;
    let out = report(
        &project,
        &server.uri(),
        &["--cancelled", "--to", "comment,check-run", "artifacts"],
    )
    .await;
    // Nothing failed: a cancelled run is incomplete (3).
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let sent = writes(&requests(&server).await);
    assert_eq!(sent.len(), 2, "{sent:?}");
    let body = sent[0].2["body"].as_str().unwrap();
    assert!(body.contains("| unit | a | 0 | PASS |"), "{body}");
    assert!(
        body.contains(
            "All Required Environments: NOT VERIFIED\n\n- cancelled: the workflow run was cancelled"
        ),
        "{body}"
    );
    assert_eq!(sent[1].2["conclusion"], "cancelled");
    assert_eq!(project.json("verify-matrix-report.json")["cancelled"], true);
}

/// An older run's report (its commit is no longer the PR's head) leaves the comment to
/// the newer push's run; its check run still goes on its own commit.
#[tokio::test(flavor = "multi_thread")]
async fn an_older_runs_report_does_not_overwrite_the_newer_heads_comment() {
    let project = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    pull_head(&server, OLD).await;
    accept_check_run(&server, "", 9).await;
    let out = publish(&project, &server.uri(), &["--to", "comment,check-run"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let sent = writes(&requests(&server).await);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].1, "/repos/o/r/check-runs");
    assert_eq!(sent[0].2["head_sha"], HEAD);
    assert!(
        stderr(&out).contains(&format!(
            "PR comment on o/r#12 not posted: PR #12's head is now {OLD}, not {HEAD}: a newer push's run writes the comment"
        )),
        "{}",
        stderr(&out)
    );
}

/// A pending mark needs a commit: a pull_request payload without one is a clear error;
/// a read-only token (a fork's) is a warning, and the plan goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_pending_mark_without_a_commit_fails_clearly_and_a_read_only_token_only_warns() {
    let project = Project::new(MANIFEST);
    project.write(
        "pr-event.json",
        &json!({"pull_request": {"number": 12, "head": {"ref": "topic"}}}).to_string(),
    );
    let server = MockServer::start().await;
    let mut cmd = final_job(&project, &server.uri());
    cmd.args(["publish", "--pending"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no commit to mark pending"),
        "{}",
        stderr(&out)
    );
    assert!(requests(&server).await.is_empty());

    project.write(
        "pr-event.json",
        &json!({"pull_request": {"number": 12, "head": {"sha": HEAD}}}).to_string(),
    );
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(403)
                .set_body_json(json!({"message": "Resource not accessible by integration"})),
        )
        .mount(&server)
        .await;
    installation_token(&server).await;
    comments_page(&server, 1, json!([])).await;
    let mut cmd = final_job(&project, &server.uri());
    cmd.args(["publish", "--pending"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: the pending mark was not published"),
        "{}",
        stderr(&out)
    );
}

/// A check with a JUnit report whose tests fail: one annotation per failing test at its
/// file and line (the manifest line when the report gave none), after the pair's own.
#[tokio::test(flavor = "multi_thread")]
async fn failing_tests_are_annotated_at_their_file_and_line() {
    let report = concat!(
        "<testsuite name=\"s\">",
        "<testcase classname=\"tests.test_a\" name=\"ok\"/>",
        "<testcase classname=\"tests.test_a\" name=\"wrong\"><failure message=\"AssertionError: 1 != 2\">",
        "tests/test_a.py:3: AssertionError</failure></testcase>",
        "<testcase classname=\"tests.test_a\" name=\"nowhere\"><failure message=\"lost\"/></testcase>",
        "</testsuite>"
    );
    let project = reported_with(
        concat!(
            "version: 1\nenvironments: [{name: a}]\nchecks:\n",
            "  - id: unit\n",
            "    test: cp fixture.xml junit.xml; exit 1\n",
            "    reports: junit.xml\n",
        ),
        &["a"],
        &[
            ("fixture.xml", report),
            (
                "tests/test_a.py",
                "def test_ok():\n    pass\ndef test_wrong(): assert 1 == 2\n",
            ),
        ],
        &[],
    );
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/check-runs"))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(json!({"id": 4243, "html_url": "https://github.com/o/r/runs/4243"})),
        )
        .mount(&server)
        .await;
    let out = publish(&project, &server.uri(), &["--to", "check-run"], &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let all = requests(&server).await;
    let create = &all.iter().find(|r| r.0 == "POST").unwrap().2;
    let annotations = create["output"]["annotations"].as_array().unwrap();
    let places: Vec<(String, i64, String)> = annotations
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_owned(),
                a["start_line"].as_i64().unwrap(),
                a["title"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        places,
        vec![
            ("verify-matrix.yml".into(), 4, "unit failed in a".into()),
            (
                "tests/test_a.py".into(),
                3,
                "tests.test_a › wrong failed in a (unit)".into()
            ),
            (
                "verify-matrix.yml".into(),
                4,
                "tests.test_a › nowhere failed in a (unit)".into()
            ),
        ]
    );
    assert!(
        annotations[1]["message"]
            .as_str()
            .unwrap()
            .starts_with("AssertionError: 1 != 2"),
        "{}",
        annotations[1]["message"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn comment_modes_decide_only_whether_a_comment_is_created() {
    // A VERIFIED report (only environment a, where unit passes).
    let verified = reported(
        "version: 1\nenvironments: [{name: a}]\nchecks:\n  - { id: unit, run: 'true' }\n",
        &["a"],
    );
    // `failures`, no comment yet: none is created; the pending mark creates none either.
    for args in [
        &["--to", "comment", "--comment", "failures"][..],
        &["--to", "comment", "--comment", "changes", "--pending"][..],
    ] {
        let server = MockServer::start().await;
        pull_head(&server, HEAD).await;
        installation_token(&server).await;
        comments_page(&server, 1, json!([])).await;
        accept_comment(&server).await;
        let mut cmd = final_job(&verified, &server.uri());
        cmd.arg("publish").args(args);
        if !args.contains(&"--pending") {
            cmd.arg("report.json");
        }
        let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(writes(&requests(&server).await), vec![], "{args:?}");
        assert!(
            stderr(&out).contains("no earlier comment to update")
                || stderr(&out).contains("a pending mark creates no comment"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // `failures` with an earlier comment of ours: it is updated, never left stale.
    let server = MockServer::start().await;
    pull_head(&server, HEAD).await;
    installation_token(&server).await;
    let old = format!("{MARKER}\n## ❌ Environment Verification Matrix: NOT VERIFIED\n");
    comments_page(
        &server,
        1,
        json!([comment(
            5,
            "github-actions[bot]",
            &old,
            "2026-11-20T10:00:00Z"
        )]),
    )
    .await;
    accept_comment_update(&server, 5).await;
    let out = publish(
        &verified,
        &server.uri(),
        &["--to", "comment", "--comment", "failures"],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = writes(&requests(&server).await);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].1, "/repos/o/r/issues/comments/5");
    assert!(all[0].2["body"].as_str().unwrap().contains("VERIFIED"));
    // `failures` with a failing report and no comment: created.
    let failing = reported(MANIFEST, &["a", "b"]);
    let server = MockServer::start().await;
    pull_head(&server, HEAD).await;
    installation_token(&server).await;
    comments_page(&server, 1, json!([])).await;
    accept_comment(&server).await;
    let out = publish(
        &failing,
        &server.uri(),
        &["--to", "comment", "--comment", "failures"],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let all = writes(&requests(&server).await);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].0, "POST");
    // `off`: not a single request.
    let server = MockServer::start().await;
    let out = publish(
        &failing,
        &server.uri(),
        &["--to", "comment", "--comment", "off"],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(requests(&server).await, vec![]);
    assert!(
        stderr(&out).contains("no PR comment: --comment off"),
        "{}",
        stderr(&out)
    );
}

/// A merge queue's run (`merge_group`): the legs record the queue's commit, and the
/// report publishes the check run on it — the commit the queue waits on — and no PR
/// comment (the queue holds several pull requests), saying why.
#[tokio::test(flavor = "multi_thread")]
async fn a_merge_queue_run_gets_its_check_run_on_the_queues_commit_and_no_comment() {
    const QUEUE: &str = "3333333333333333333333333333333333333333";
    let project = Project::new(MANIFEST);
    let event = project.write(
        "queue-event.json",
        &json!({"merge_group": {"head_sha": QUEUE, "head_ref": "refs/heads/gh-readonly-queue/main/pr-12-aaaa", "base_sha": MERGE, "base_ref": "refs/heads/main"}})
            .to_string(),
    );
    let queued = |cmd: &mut std::process::Command| {
        cmd.env("GITHUB_EVENT_NAME", "merge_group")
            .env("GITHUB_EVENT_PATH", &event)
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_SHA", QUEUE)
            .env("GITHUB_RUN_ID", "79")
            .env("GITHUB_RUN_ATTEMPT", "1");
    };
    for env in ["a", "b"] {
        let mut cmd = project.std_cmd();
        cmd.args(["run", "--env", env, "--out", &format!("artifacts/{env}")]);
        queued(&mut cmd);
        assert!(cmd.output().unwrap().status.code().is_some());
    }
    let result = project.json("artifacts/a/verify-matrix-a.json");
    assert_eq!(result["source"]["commit"], QUEUE);
    let server = MockServer::start().await;
    installation_token(&server).await;
    accept_check_run(&server, "", 5).await;
    let mut cmd = project.std_cmd();
    cmd.args([
        "report",
        "--to",
        "comment,check-run",
        "--out",
        "report.json",
        "artifacts",
    ])
    .env("GITHUB_API_URL", server.uri())
    .env("GITHUB_TOKEN", TOKEN);
    queued(&mut cmd);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no PR comment"),
        "the missing comment is said: {}",
        stderr(&out)
    );
    let writes = writes(&requests(&server).await);
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(
        (writes[0].0.as_str(), writes[0].1.as_str()),
        ("POST", "/repos/o/r/check-runs")
    );
    assert_eq!(writes[0].2["head_sha"], QUEUE);
    assert_eq!(writes[0].2["conclusion"], "failure");
}
