//! `history sync --from-github` against a GitHub stand-in on 127.0.0.1 (wiremock)
//! serving real zip artifacts (written by Python's zipfile): the default branch, the
//! runs, expired artifacts, a retried download, the redirect to storage (which never
//! gets the token), files that are not reports, and a second sync that downloads
//! nothing.

mod common;
#[path = "common/openapi.rs"]
mod openapi;

use common::{Project, zip_of};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const TOKEN: &str = "ghs_SyncTokenThatMustNeverBeShown0123456789";

/// A real report of a two-environment project, as attempt `attempt` of run `run` of
/// `o/r` made it.
fn report_of_run(project: &Project, run: u64, attempt: u32) -> String {
    let mut report = project.json("report.json");
    report["source"]["repository"] = "o/r".into();
    report["source"]["run_id"] = run.to_string().into();
    report["source"]["run_attempt"] = attempt.into();
    report["source"]["commit"] = format!("{run:040x}").into();
    report.to_string()
}

fn run_json(id: u64, attempt: u32, updated_at: &str) -> Value {
    json!({"id": id, "run_attempt": attempt, "event": "push", "head_branch": "main",
           "head_sha": format!("{id:040x}"), "status": "completed",
           "conclusion": "success", "updated_at": updated_at})
}

fn artifact(id: u64, expired: bool) -> Value {
    json!({"artifacts": [{"id": id, "name": "verify-matrix_report", "size_in_bytes": 1000,
                          "expired": expired}]})
}

/// `history sync --from-github --repo o/r --history h.sqlite ARGS` against `api`, checked
/// for leaked secrets.
async fn sync(project: &Project, api: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = project.std_cmd();
    cmd.env("GITHUB_API_URL", api)
        .env("GITHUB_TOKEN", TOKEN)
        .env_remove("GITHUB_REPOSITORY")
        .args(["history", "sync", "--from-github", "--repo", "o/r"])
        .args(["--history", "h.sqlite"])
        .args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !shown.contains("SyncTokenThatMust"),
        "the token leaked:\n{shown}"
    );
    assert!(
        !shown.contains("sig=secret"),
        "the storage signature leaked:\n{shown}"
    );
    out
}

/// The archives `api` was asked for so far.
async fn downloads(api: &MockServer) -> usize {
    api.received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path().ends_with("/zip"))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_latest_runs_report_artifacts_are_imported_once() {
    let project = Project::new(concat!(
        "version: 1\n",
        "environments: [{name: linux}, {name: macos}]\n",
        "checks:\n",
        "  - { id: unit, run: 'test $VERIFY_MATRIX_ENV = linux' }\n",
    ));
    project.run_envs(&["linux", "macos"]);
    project.merge_into("results", "report.json");
    let zip_103 = zip_of(
        project.path(),
        &[
            (
                "verify-matrix-report.json",
                &report_of_run(&project, 103, 2),
            ),
            ("notes.json", "{\"hello\": 1}"),
            ("../../escape.json", "{}"),
        ],
    );
    let zip_101 = zip_of(
        project.path(),
        &[(
            "verify-matrix-report.json",
            &report_of_run(&project, 101, 1),
        )],
    );

    let api = MockServer::start().await;
    let storage = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"default_branch": "main"})))
        .mount(&api)
        .await;
    let mut fork_run = run_json(99, 1, "2026-11-21T10:00:00Z");
    fork_run["event"] = "pull_request".into();
    fork_run["head_repository"] = json!({"full_name": "evil/r"});
    // A `workflow_run` run on main: it may carry a fork's results.
    let mut relayed_run = run_json(98, 1, "2026-11-21T09:00:00Z");
    relayed_run["event"] = "workflow_run".into();
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/runs"))
        .and(query_param("branch", "main"))
        .and(query_param("status", "completed"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "total_count": 6,
            "workflow_runs": [
                // A fork's pull request from its own `main`: never the base branch's.
                fork_run,
                relayed_run,
                run_json(103, 2, "2026-11-20T10:00:00Z"),
                run_json(102, 1, "2026-11-19T10:00:00Z"),
                run_json(101, 1, "2026-11-18T10:00:00Z"),
                run_json(100, 1, "2026-11-17T10:00:00Z"),
            ]
        })))
        .mount(&api)
        .await;
    for (run, artifact_json) in [
        (103, artifact(503, false)),
        (102, artifact(502, true)),
        (101, artifact(501, false)),
        (100, artifact(500, false)),
    ] {
        Mock::given(method("GET"))
            .and(path(format!("/repos/o/r/actions/runs/{run}/artifacts")))
            .and(query_param("name", "verify-matrix_report"))
            .respond_with(ResponseTemplate::new(200).set_body_json(artifact_json))
            .mount(&api)
            .await;
    }
    // Run 103's archive: a redirect to storage on another host.
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/artifacts/503/zip"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!("{}/blobs/503.zip?sig=secret", storage.uri()).as_str(),
        ))
        .mount(&api)
        .await;
    Mock::given(method("GET"))
        .and(path("/blobs/503.zip"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(zip_103))
        .mount(&storage)
        .await;
    // Run 100's expired between the listing and the download.
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/artifacts/500/zip"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
        .mount(&api)
        .await;
    // Run 101's: GitHub fails once, then serves it.
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/artifacts/501/zip"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&api)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/artifacts/501/zip"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(zip_101))
        .with_priority(2)
        .mount(&api)
        .await;

    let out = sync(&project, &api.uri(), &["--runs", "4"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "synced 4 runs of `main` from o/r: 2 reports recorded, 0 already recorded, 2 without a report, 0 failed"
        ),
        "{stdout}"
    );
    for expected in [
        "[1/4] run 103 attempt 2",
        "run 100: artifact `verify-matrix_report` is gone (expired or deleted)",
        "artifact `verify-matrix_report` has expired",
        "`notes.json`: not a report",
        "`../../escape.json`: its path leaves the archive",
        "retrying",
    ] {
        assert!(stderr.contains(expected), "{expected}:\n{stderr}");
    }
    // Storage got no token; the API got it on every request.
    let blob_requests: Vec<Request> = storage.received_requests().await.unwrap();
    assert_eq!(blob_requests.len(), 1);
    assert!(blob_requests[0].headers.get("authorization").is_none());
    let api_requests: Vec<Request> = api.received_requests().await.unwrap();
    // Each request is one GitHub's REST API documents, query parameters included.
    for r in &api_requests {
        openapi::check_request(r.method.as_str(), r.url.path(), r.url.query(), &Value::Null);
    }
    assert!(api_requests.iter().all(|r| {
        r.headers
            .get("authorization")
            .is_some_and(|v| v.to_str().unwrap().ends_with(TOKEN))
    }));

    // Recorded at the runs' own times, on their branch.
    let db = rusqlite::Connection::open(project.path().join("h.sqlite")).unwrap();
    let mut rows = db
        .prepare("SELECT run_id, branch, recorded_at FROM runs ORDER BY run_id")
        .unwrap();
    let runs: Vec<(String, String, String)> = rows
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        runs,
        [
            (
                "101".to_owned(),
                "main".to_owned(),
                "2026-11-18T10:00:00Z".to_owned()
            ),
            (
                "103".to_owned(),
                "main".to_owned(),
                "2026-11-20T10:00:00Z".to_owned()
            ),
        ]
    );
    drop(rows);
    drop(db);

    // Again: the recorded run attempts are not downloaded twice.
    let downloads_before = downloads(&api).await;
    let again = sync(&project, &api.uri(), &["--runs", "4"]).await;
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    let downloads_after = downloads(&api).await;
    // Only run 100's, never recorded, is asked for again.
    assert_eq!(downloads_after, downloads_before + 1);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("0 reports recorded, 2 already recorded"),
        "{again:?}"
    );

    // The retention applies after a sync: the newest run is kept (and is main's latest a
    // baseline can be); run 101 goes.
    let pruned = sync(&project, &api.uri(), &["--runs", "4", "--keep-runs", "1"]).await;
    let stdout = String::from_utf8_lossy(&pruned.stdout);
    assert_eq!(pruned.status.code(), Some(0), "{pruned:?}");
    assert!(
        stdout.contains("pruned h.sqlite: removed 1 run ("),
        "{stdout}"
    );
    let db = rusqlite::Connection::open(project.path().join("h.sqlite")).unwrap();
    let left: String = db
        .query_row("SELECT group_concat(run_id) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, "103");
}

#[tokio::test(flavor = "multi_thread")]
async fn github_refusing_the_listing_is_exit_5() {
    let project = Project::empty();
    let api = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/runs"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
        .mount(&api)
        .await;
    let out = sync(&project, &api.uri(), &["--branch", "main"]).await;
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("listing the workflow runs of `main`: 404"),
        "{out:?}"
    );
    // A repository that is not one never reaches the network.
    let bad = project
        .std_cmd()
        .env("GITHUB_TOKEN", TOKEN)
        .args(["history", "sync", "--from-github", "--repo", "o/../r"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}
