//! GitLab CI: what `run` records of a GitLab job, and `publish` to a stand-in of
//! GitLab's API on 127.0.0.1 (`common/gitlab_stand_in.rs`, which keeps notes and
//! statuses as GitLab does): the sticky merge-request note, the commit status, the
//! pending mark, refused and failing requests, and the token never shown.

mod common;
#[path = "common/gitlab_stand_in.rs"]
mod gitlab_stand_in;

use std::process::Output;

use common::Project;
use gitlab_stand_in::{BOT, GitLab, JOB_TOKEN, PROJECT_ID, PROJECT_PATH, TOKEN};
use serde_json::Value;

/// The merge request's head, which the legs verified.
const HEAD: &str = "1111111111111111111111111111111111111111";
const MARKER: &str = "<!-- cargo-verify-matrix:verify-matrix.yml -->";

const MANIFEST: &str = "version: 1
environments: [{name: a}, {name: b}]
checks:
  - { id: unit, run: 'echo \"unit in $VERIFY_MATRIX_ENV\"; test \"$VERIFY_MATRIX_ENV\" != b' }
";

const GREEN: &str = "version: 1
environments: [{name: a}, {name: b}]
checks:
  - { id: unit, run: 'echo ok' }
";

/// GitLab's variables in a job of merge-request pipeline 501 for !12.
fn job_vars(job: &str, job_id: u64) -> Vec<(&'static str, String)> {
    vec![
        ("GITLAB_CI", "true".to_owned()),
        ("CI_PROJECT_ID", PROJECT_ID.to_string()),
        ("CI_PROJECT_PATH", PROJECT_PATH.to_owned()),
        ("CI_SERVER_URL", "https://gitlab.example".to_owned()),
        ("CI_PIPELINE_ID", "501".to_owned()),
        (
            "CI_PIPELINE_URL",
            "https://gitlab.example/group/project/-/pipelines/501".to_owned(),
        ),
        ("CI_PIPELINE_SOURCE", "merge_request_event".to_owned()),
        ("CI_JOB_ID", job_id.to_string()),
        ("CI_JOB_NAME", job.to_owned()),
        ("CI_RUNNER_ID", "9".to_owned()),
        ("CI_RUNNER_TAGS", r#"["linux", "docker"]"#.to_owned()),
        ("CI_RUNNER_DESCRIPTION", "shared runner 9".to_owned()),
        ("CI_JOB_IMAGE", "rust:1.90".to_owned()),
        ("CI_COMMIT_SHA", HEAD.to_owned()),
        ("CI_COMMIT_REF_NAME", "feature".to_owned()),
        ("CI_MERGE_REQUEST_IID", "12".to_owned()),
        ("CI_MERGE_REQUEST_PROJECT_ID", PROJECT_ID.to_string()),
    ]
}

/// `manifest` run in environments a and b as the legs of pipeline 501 would run it,
/// merged into `report.json`.
fn reported(manifest: &str) -> Project {
    reported_with(manifest, &[])
}

/// [`reported`], with `extra` variables in the legs' jobs.
fn reported_with(manifest: &str, extra: &[(&str, &str)]) -> Project {
    let project = Project::new(manifest);
    for (i, env) in ["a", "b"].iter().enumerate() {
        let out = project
            .std_cmd()
            .args(["run", "--env", env, "--out", &format!("artifacts/{env}")])
            .envs(job_vars(&format!("leg: [{env}]"), 7000 + i as u64))
            .envs(extra.iter().copied())
            .output()
            .unwrap();
        assert!(out.status.code().is_some(), "{out:?}");
    }
    let merge = project
        .std_cmd()
        .args(["merge", "--out", "report.json", "artifacts"])
        .output()
        .unwrap();
    assert!(project.path().join("report.json").exists(), "{merge:?}");
    project
}

/// The binary as the report job (7100) of pipeline 501, publishing to `gitlab`.
fn report_job(project: &Project, gitlab: &GitLab) -> std::process::Command {
    let mut cmd = project.std_cmd();
    cmd.envs(job_vars("report", 7100))
        .env("CI_API_V4_URL", gitlab.api_url())
        .env("GITLAB_TOKEN", TOKEN);
    cmd
}

/// Runs `cmd` off the async runtime; the tokens show nowhere in what it printed.
async fn output(mut cmd: std::process::Command) -> Output {
    let output = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    for secret in [TOKEN, JOB_TOKEN, "TokenThatMustNever"] {
        assert!(!shown.contains(secret), "a token leaked:\n{shown}");
    }
    output
}

async fn publish(project: &Project, gitlab: &GitLab, args: &[&str]) -> Output {
    let mut cmd = report_job(project, gitlab);
    cmd.arg("publish").args(args).arg("report.json");
    output(cmd).await
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_leg_under_gitlab_records_its_job_runner_and_merge_request() {
    let project = reported(MANIFEST);
    let result = project.json("artifacts/a/verify-matrix-a.json");
    let gitlab = &result["runner"]["gitlab"];
    assert_eq!(gitlab["job_id"], 7000);
    assert_eq!(gitlab["job_name"], "leg: [a]");
    assert_eq!(gitlab["pipeline_id"], 501);
    assert_eq!(gitlab["runner_id"], 9);
    assert_eq!(
        gitlab["runner_tags"],
        serde_json::json!(["linux", "docker"])
    );
    assert_eq!(gitlab["runner_description"], "shared runner 9");
    assert_eq!(gitlab["image"], "rust:1.90");
    assert_eq!(gitlab["commit"], HEAD);
    assert!(result["runner"].get("actions").is_none(), "{result}");
    let source = &result["source"];
    assert_eq!(source["repository"], PROJECT_PATH);
    assert_eq!(source["commit"], HEAD);
    assert_eq!(source["pr"], 12);
    assert_eq!(source["run_id"], "501");
    assert_eq!(source["job"], "leg: [a]");
    assert_eq!(source["event"], "merge_request_event");
    assert_eq!(source["branch"], "feature");
    // The report carries the merge request through.
    assert_eq!(project.json("report.json")["source"]["pr"], 12);
}

#[tokio::test]
async fn one_sticky_note_and_the_status_then_unchanged_on_a_second_run() {
    let project = reported(MANIFEST);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    let out = publish(&project, &gitlab, &["--to", "comment,check-run,summary"]).await;
    assert_eq!(out.status.code(), Some(1), "NOT VERIFIED: {}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("published: merge-request note on !12 created"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "published: commit status \"Environment Verification Matrix\" on {HEAD} (failed)"
        )),
        "{err}"
    );
    // The job log shows the matrix in a section.
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(
        log.contains("section_start:") && log.contains("section_end:"),
        "{log}"
    );
    assert!(log.contains("unit"), "{log}");
    let notes = gitlab.notes(12);
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].author, BOT);
    assert!(
        notes[0].body.starts_with(&format!("{MARKER}\n")),
        "{}",
        notes[0].body
    );
    assert!(notes[0].body.contains("NOT VERIFIED"), "{}", notes[0].body);
    // Its links are GitLab's pages, never GitHub's.
    assert!(
        notes[0].body.contains(&format!(
            "https://gitlab.example/group/project/-/commit/{HEAD}"
        )),
        "{}",
        notes[0].body
    );
    assert!(
        notes[0]
            .body
            .contains("https://gitlab.example/group/project/-/pipelines/501"),
        "{}",
        notes[0].body
    );
    assert!(!notes[0].body.contains("github.com"), "{}", notes[0].body);
    let statuses = gitlab.statuses();
    assert_eq!(statuses.len(), 1);
    let status = &statuses[0];
    assert_eq!(
        (status.sha.as_str(), status.state.as_str()),
        (HEAD, "failed")
    );
    assert_eq!(status.name, "Environment Verification Matrix");
    assert_eq!(status.pipeline_id, Some(501));
    assert!(status.description.chars().count() <= 255);
    assert_eq!(
        status.target_url.as_deref(),
        Some("https://gitlab.example/group/project/-/pipelines/501")
    );
    // Every request carried the access token in GitLab's header, to the API's paths.
    for request in gitlab.requests() {
        assert_eq!(
            request.auth,
            Some(("PRIVATE-TOKEN".to_owned(), TOKEN.to_owned())),
            "{request:?}"
        );
        assert!(request.target.starts_with("/api/v4/"), "{request:?}");
    }
    let before = gitlab.requests().len();
    let again = publish(&project, &gitlab, &["--to", "comment"]).await;
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("unchanged, not rewritten"),
        "{}",
        stderr(&again)
    );
    let writes: Vec<_> = gitlab.requests()[before..]
        .iter()
        .filter(|r| r.method != "GET")
        .cloned()
        .collect();
    assert!(
        writes.is_empty(),
        "an unchanged note is not written: {writes:?}"
    );
    assert_eq!(gitlab.notes(12).len(), 1);
}

#[tokio::test]
async fn the_note_is_found_across_pages_and_others_notes_are_left_alone() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    // Someone else's note carrying our marker, 150 others, a system note, then ours
    // twice (two pipelines raced).
    let forged = gitlab.add_note(
        12,
        "mallory",
        &format!("{MARKER}\nVERIFIED, trust me"),
        false,
    );
    for i in 0..150 {
        gitlab.add_note(12, "reviewer", &format!("comment {i}"), false);
    }
    gitlab.add_note(12, BOT, &format!("{MARKER}\nsystem"), true);
    let ours = gitlab.add_note(12, BOT, &format!("{MARKER}\nold result"), false);
    let duplicate = gitlab.add_note(12, BOT, &format!("{MARKER}\nolder run"), false);
    let out = publish(&project, &gitlab, &["--to", "comment"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("note on !12 updated (1 duplicate removed)"),
        "{}",
        stderr(&out)
    );
    let notes = gitlab.notes(12);
    let body = |id| notes.iter().find(|n| n.id == id).map(|n| n.body.clone());
    assert_eq!(
        body(forged).unwrap(),
        format!("{MARKER}\nVERIFIED, trust me")
    );
    assert!(
        body(ours)
            .unwrap()
            .contains("All Required Environments: VERIFIED")
    );
    assert_eq!(body(duplicate), None);
    // Pages were read in ascending order, 100 at a time, until an empty one.
    let pages: Vec<String> = gitlab
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.target.contains("/notes?"))
        .map(|r| r.target.clone())
        .collect();
    assert!(pages.len() >= 2, "{pages:?}");
    assert!(
        pages[0].contains("sort=asc") && pages[0].contains("per_page=100"),
        "{pages:?}"
    );
}

#[tokio::test]
async fn a_pending_mark_sets_running_once_and_the_report_replaces_it() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    for _ in 0..2 {
        let mut cmd = report_job(&project, &gitlab);
        cmd.args(["publish", "--pending"]);
        let out = output(cmd).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let statuses = gitlab.statuses();
    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0].state, "running");
    let note = &gitlab.notes(12)[0];
    assert!(note.body.contains("verifying `1111111`"), "{}", note.body);
    assert!(
        !note.body.contains("VERIFIED"),
        "a pending note gives no verdict: {}",
        note.body
    );
    let out = publish(&project, &gitlab, &["--to", "comment,check-run"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let statuses = gitlab.statuses();
    assert_eq!(
        statuses.len(),
        1,
        "the running status is finished, not another made"
    );
    assert_eq!(statuses[0].state, "success");
    let notes = gitlab.notes(12);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]
            .body
            .contains("All Required Environments: VERIFIED"),
        "{}",
        notes[0].body
    );
}

#[tokio::test]
async fn a_newer_push_keeps_the_note() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, "2222222222222222222222222222222222222222");
    let out = publish(&project, &gitlab, &["--to", "comment"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("!12's head is now 2222222222222222222222222222222222222222"),
        "{}",
        stderr(&out)
    );
    assert!(gitlab.notes(12).is_empty());
}

#[tokio::test]
async fn a_job_token_is_refused_and_the_verdict_still_decides_the_exit() {
    let project = reported(MANIFEST);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    let mut cmd = report_job(&project, &gitlab);
    cmd.env_remove("GITLAB_TOKEN")
        .env("CI_JOB_TOKEN", JOB_TOKEN)
        .args(["publish", "--to", "comment,check-run", "report.json"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("403"), "{err}");
    assert!(err.contains("GitLab refused the token"), "{err}");
    assert!(err.contains("GITLAB_TOKEN"), "{err}");
    assert!(gitlab.notes(12).is_empty() && gitlab.statuses().is_empty());
    assert!(
        gitlab
            .requests()
            .iter()
            .all(|r| r.auth == Some(("JOB-TOKEN".to_owned(), JOB_TOKEN.to_owned()))),
        "{:?}",
        gitlab.requests()
    );
}

#[tokio::test]
async fn passing_failures_are_retried_and_lasting_ones_fail_with_exit_5() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    let statuses = format!("/api/v4/projects/{PROJECT_ID}/statuses/");
    gitlab.fault(
        "POST",
        &statuses,
        429,
        serde_json::json!({"message": "Retry later"}),
        &[("retry-after", "1")],
    );
    let out = publish(&project, &gitlab, &["--to", "check-run"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("rate limited"), "{}", stderr(&out));
    assert_eq!(gitlab.statuses().len(), 1);
    // A 500 on create is an unknown outcome: retried; a lasting one fails the step.
    for _ in 0..3 {
        gitlab.fault(
            "POST",
            &statuses,
            500,
            serde_json::json!({"message": "500 Internal Server Error"}),
            &[],
        );
    }
    let out = publish(&project, &gitlab, &["--to", "check-run", "--retries", "2"]).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("gave up after 3 attempts"),
        "{}",
        stderr(&out)
    );
    // A bad token: 401, never VERIFIED from a failed write.
    let mut cmd = report_job(&project, &gitlab);
    cmd.env("GITLAB_TOKEN", "glpat-wrong")
        .args(["publish", "--to", "check-run", "report.json"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(stderr(&out).contains("401"), "{}", stderr(&out));
}

#[tokio::test]
async fn a_dry_run_prints_the_requests_and_sends_nothing() {
    let project = reported(MANIFEST);
    let gitlab = GitLab::start().await;
    let out = publish(
        &project,
        &gitlab,
        &["--to", "comment,check-run", "--dry-run"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains(&format!(
            "=== merge-request note on !12: POST /projects/{PROJECT_ID}/merge_requests/12/notes"
        )),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "=== commit status: POST /projects/{PROJECT_ID}/statuses/{HEAD}"
        )),
        "{shown}"
    );
    assert!(shown.contains("\"state\": \"failed\""), "{shown}");
    assert!(gitlab.requests().is_empty());
}

#[tokio::test]
async fn outside_gitlab_ci_the_flags_name_the_target() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    // No GitLab job: --ci gitlab and the flags name the target, CI_API_V4_URL the
    // instance.
    let mut cmd = project.std_cmd();
    cmd.args([
        "publish",
        "--ci",
        "gitlab",
        "--repo",
        PROJECT_PATH,
        "--pr",
        "12",
        "--to",
        "comment",
        "--token",
        TOKEN,
        "report.json",
    ])
    .env("CI_API_V4_URL", gitlab.api_url());
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let notes = gitlab.notes(12);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]
            .body
            .contains("All Required Environments: VERIFIED")
    );
    // The project's path went into the request path encoded.
    assert!(
        gitlab
            .requests()
            .iter()
            .any(|r| r.target == "/api/v4/projects/group%2Fproject/merge_requests/12/notes"),
        "{:?}",
        gitlab.requests()
    );
}

/// `init --ci gitlab` in `project`; the pipeline it wrote, parsed.
fn init_gitlab(project: &Project) -> serde_yaml::Value {
    project
        .cmd()
        .args(["init", "--ci", "gitlab"])
        .assert()
        .success();
    serde_yaml::from_str(&project.read(".gitlab-ci.yml")).expect("the pipeline is YAML")
}

fn strings(value: &serde_yaml::Value) -> Vec<String> {
    value
        .as_sequence()
        .map(|s| {
            s.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn init_writes_a_pipeline_from_the_manifest_and_keeps_the_manifest() {
    let manifest = "version: 1
environments:
  - { name: linux, runs-on: ubuntu-latest }
  - { name: alpine, container: 'alpine:3.20' }
  - { name: mac, runs-on: macos-14 }
  - { name: big, shards: 2 }
checks:
  - { id: unit, run: 'echo ok' }
  - { id: split, run: 'echo {shard} of {shards}', environment: big }
";
    let project = Project::new(manifest);
    let pipeline = init_gitlab(&project);
    assert_eq!(
        project.read("verify-matrix.yml"),
        manifest,
        "kept as it was"
    );
    assert_eq!(
        strings(&pipeline["stages"]),
        [
            "verify-matrix-plan",
            "verify-matrix-run",
            "verify-matrix-report"
        ]
    );
    // The legs: one job per runner kind, each environment (and shard) an entry of its
    // matrix.
    let run = &pipeline["verify-matrix:run"];
    let entries = run["parallel"]["matrix"].as_sequence().unwrap();
    assert_eq!(entries.len(), 2, "{run:?}");
    assert_eq!(entries[0]["VERIFY_MATRIX_ENV"], "linux");
    assert_eq!(entries[1]["VERIFY_MATRIX_ENV"], "big");
    assert_eq!(strings(&entries[1]["VERIFY_MATRIX_SHARD"]), ["1/2", "2/2"]);
    assert_eq!(
        pipeline["verify-matrix:run:alpine"]["image"].as_str(),
        Some("alpine:3.20")
    );
    assert_eq!(
        strings(&pipeline["verify-matrix:run:mac"]["tags"]),
        ["saas-macos-medium-m1"]
    );
    for job in [
        "verify-matrix:run",
        "verify-matrix:run:alpine",
        "verify-matrix:run:mac",
    ] {
        assert_eq!(pipeline[job]["artifacts"]["when"], "always", "{job}");
        assert_eq!(
            strings(&pipeline[job]["artifacts"]["paths"]),
            ["verify-matrix-results/"]
        );
    }
    // The report needs every leg, runs whatever became of them, and hands GitLab the
    // JUnit.
    let report = &pipeline["verify-matrix:report"];
    assert_eq!(report["when"], "always");
    let needs: Vec<&str> = report["needs"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|n| n["job"].as_str().unwrap())
        .collect();
    assert_eq!(
        needs,
        [
            "verify-matrix:run",
            "verify-matrix:run:alpine",
            "verify-matrix:run:mac"
        ]
    );
    assert_eq!(
        report["artifacts"]["reports"]["junit"],
        "verify-matrix-junit.xml"
    );
    let script = strings(&report["script"]).concat();
    assert!(
        script.contains("report \"$@\" verify-matrix-results"),
        "{script}"
    );
    assert!(script.contains("--base-manifest"), "{script}");
}

#[test]
fn init_writes_the_manifest_only_where_there_is_none_and_never_overwrites_the_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    common::bin()
        .current_dir(dir.path())
        .args(["init", "--ci", "gitlab"])
        .assert()
        .success()
        .stderr(predicates::str::contains("wrote ./verify-matrix.yml"));
    let pipeline: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(dir.path().join(".gitlab-ci.yml")).unwrap())
            .unwrap();
    assert_eq!(pipeline["verify-matrix:run"]["image"], "rust:latest");
    assert!(
        !dir.path().join(".github").exists(),
        "no GitHub workflow under --ci gitlab"
    );
    std::fs::write(dir.path().join(".gitlab-ci.yml"), "mine: {}\n").unwrap();
    common::bin()
        .current_dir(dir.path())
        .args(["init", "--ci", "gitlab"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "already exists; nothing was written",
        ));
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".gitlab-ci.yml")).unwrap(),
        "mine: {}\n"
    );
}

/// gitlab-ci-local, which scripts/test.sh installs (with Debian's rsync).
fn gitlab_ci_local() -> String {
    std::env::var("VERIFY_MATRIX_GITLAB_CI_LOCAL").expect(
        "VERIFY_MATRIX_GITLAB_CI_LOCAL names gitlab-ci-local: run the tests through scripts/test.sh",
    )
}

/// A git repository (remote `origin` on gitlab.example.com, as GitLab names projects)
/// with `manifest` and the pipeline `init --ci gitlab` writes for it, committed.
fn pipeline_repo(manifest: &str) -> Project {
    let project = Project::new(manifest);
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(project.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    git(&["init", "-q", "-b", "main"]);
    git(&[
        "remote",
        "add",
        "origin",
        "https://gitlab.example.com/group/project.git",
    ]);
    project
        .cmd()
        .args(["init", "--ci", "gitlab", "-q"])
        .assert()
        .success();
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-qm",
        "the pipeline",
    ]);
    project
}

fn head_of(project: &Project) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(project.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// gitlab-ci-local running `jobs` (all, when empty) of the repository's pipeline as a
/// merge-request pipeline of !12, every job on the shell with this build's binary,
/// publishing to `gitlab`; `flags` is where the checks look for their flag files.
async fn pipeline(
    project: &Project,
    gitlab: &GitLab,
    flags: &std::path::Path,
    jobs: &[&str],
) -> Output {
    let home = project.path().join(".gcl-home");
    std::fs::create_dir_all(&home).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("cargo-verify-matrix");
    let mut cmd = std::process::Command::new(gitlab_ci_local());
    cmd.current_dir(project.path())
        .args([
            "--force-shell-executor",
            "--shell-isolation",
            "--no-artifacts-to-source",
            "--no-color",
            "--home",
        ])
        .arg(&home)
        .args([
            "--ignore-predefined-vars",
            "GITLAB_CI,CI_API_V4_URL,CI_PIPELINE_SOURCE,CI_PROJECT_ID,CI_PIPELINE_ID",
        ])
        .args(["--variable", "GITLAB_CI=true"])
        .arg("--variable")
        .arg(format!("VERIFY_MATRIX={}", bin.display()))
        .arg("--variable")
        .arg(format!("CI_API_V4_URL={}", gitlab.api_url()))
        .arg("--variable")
        .arg(format!("GITLAB_TOKEN={TOKEN}"))
        .arg("--variable")
        .arg(format!("CI_PROJECT_ID={PROJECT_ID}"))
        .arg("--variable")
        .arg(format!("FLAGS={}", flags.display()))
        .args([
            "--variable",
            "CI_PIPELINE_SOURCE=merge_request_event",
            "--variable",
            "CI_MERGE_REQUEST_IID=12",
            // What GitLab sets and gitlab-ci-local does not: the runner, and one
            // pipeline id for every invocation.
            "--variable",
            "CI_RUNNER_ID=3",
            "--variable",
            "CI_RUNNER_DESCRIPTION=shell runner 3",
            "--variable",
            "CI_PIPELINE_ID=501",
        ])
        .args(jobs)
        .env_remove("GITLAB_CI")
        .env_remove("GITLAB_TOKEN")
        .env_remove("CI_JOB_TOKEN");
    output(cmd).await
}

const FLAGGED: &str = "version: 1
environments: [{name: a}, {name: b}]
checks:
  - { id: unit, run: 'echo \"unit in $VERIFY_MATRIX_ENV\"; test -e \"$FLAGS/$VERIFY_MATRIX_ENV\"' }
";

/// GitLab's record of pipeline 501's jobs, which gitlab-ci-local does not keep: each
/// leg that ran (its artifacts), with the job id and name GitLab gave it, on runner 3;
/// a job that ran again keeps its earlier run, retried.
fn record_jobs(project: &Project, gitlab: &GitLab) {
    let artifacts = project.path().join(".gitlab-ci-local/artifacts");
    let mut jobs: Vec<Value> = Vec::new();
    for dir in std::fs::read_dir(&artifacts).unwrap() {
        let results = dir.unwrap().path().join("verify-matrix-results");
        let Ok(files) = std::fs::read_dir(&results) else {
            continue;
        };
        for file in files {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !(name.starts_with("verify-matrix-") && name.ends_with(".json")) {
                continue;
            }
            let mut result: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            common::checks_as_objects(&mut result);
            let job = &result["runner"]["gitlab"];
            // The job failed when its run did.
            let passed = result["checks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["status"] == "PASS");
            jobs.push(serde_json::json!({
                "id": job["job_id"], "name": job["job_name"],
                "status": if passed { "success" } else { "failed" },
                "stage": "verify-matrix-run", "tag_list": [],
                "runner": { "id": 3, "description": "shell runner 3" },
                "web_url": format!("https://gitlab.example.com/group/project/-/jobs/{}", job["job_id"]),
            }));
        }
    }
    let mut state = gitlab.state.lock().unwrap();
    let listed = state.jobs.entry(501).or_default();
    for job in jobs {
        if listed.iter().any(|j| j["id"] == job["id"]) {
            continue;
        }
        for earlier in listed.iter_mut().filter(|j| j["name"] == job["name"]) {
            earlier["retried"] = Value::Bool(true);
        }
        listed.push(job);
    }
}

#[tokio::test]
async fn the_generated_pipeline_runs_for_real_and_a_rerun_or_a_lost_leg_changes_the_verdict() {
    let project = pipeline_repo(FLAGGED);
    let flags = tempfile::tempdir().unwrap();
    std::fs::write(flags.path().join("a"), "").unwrap();
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, &head_of(&project));
    gitlab.state.lock().unwrap().jobs.insert(501, Vec::new());
    // The plan and the legs; b fails.
    for stage in ["verify-matrix-plan", "verify-matrix-run"] {
        let out = pipeline(&project, &gitlab, flags.path(), &["--stage", stage]).await;
        assert!(out.status.code().is_some(), "{out:?}");
    }
    // Until GitLab lists the legs' jobs, none is taken: NOT VERIFIED, each named.
    let out = pipeline(&project, &gitlab, flags.path(), &["verify-matrix:report"]).await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("no job of pipeline 501 with id"), "{log}");
    record_jobs(&project, &gitlab);
    // The report job prints the verdict, writes the note and fails the status.
    let out = pipeline(&project, &gitlab, flags.path(), &["verify-matrix:report"]).await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{log}{}", stderr(&out));
    assert!(
        log.contains("All Required Environments: NOT VERIFIED"),
        "{log}"
    );
    assert!(log.contains("unit failed in b"), "{log}");
    assert!(!log.contains("no job of pipeline"), "{log}");
    let notes = gitlab.notes(12);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].body.contains("NOT VERIFIED"), "{}", notes[0].body);
    // The plan's running status was finished by the first report; each report since
    // sets its own.
    let statuses = gitlab.statuses();
    assert_eq!(statuses.len(), 2, "{statuses:?}");
    assert!(statuses.iter().all(|s| s.state == "failed"), "{statuses:?}");
    // The plan job marked the commit first.
    let first_status = gitlab
        .requests()
        .into_iter()
        .find(|r| r.target.contains("/statuses/"))
        .unwrap();
    assert_eq!(first_status.body["state"], "running");
    // The jobs were read as GitLab documents, retried ones included.
    assert!(
        gitlab.requests().iter().any(|r| r.target
            == format!("/api/v4/projects/{PROJECT_ID}/pipelines/501/jobs?include_retried=true&per_page=100&page=1")),
        "{:?}",
        gitlab.requests()
    );
    // b's job run again, now passing, then the report: VERIFIED, the same note.
    std::fs::write(flags.path().join("b"), "").unwrap();
    let out = pipeline(&project, &gitlab, flags.path(), &["verify-matrix:run: [b]"]).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    record_jobs(&project, &gitlab);
    let out = pipeline(&project, &gitlab, flags.path(), &["verify-matrix:report"]).await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{log}{}", stderr(&out));
    assert!(log.contains("All Required Environments: VERIFIED"), "{log}");
    // The report job left each check's tests as JUnit for GitLab's own test report.
    let builds = project.path().join(".gitlab-ci-local/builds");
    let junit = std::fs::read_dir(&builds)
        .unwrap()
        .map(|e| e.unwrap().path().join("verify-matrix-junit.xml"))
        .find(|p| p.exists())
        .expect("the report job's verify-matrix-junit.xml");
    let junit = std::fs::read_to_string(junit).unwrap();
    assert!(
        junit.contains("<testsuites") && junit.contains("unit"),
        "{junit}"
    );
    let notes = gitlab.notes(12);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]
            .body
            .contains("All Required Environments: VERIFIED")
    );
    assert_eq!(gitlab.statuses().last().unwrap().state, "success");
    // a's leg lost (cancelled, its artifacts gone): NOT VERIFIED, naming it.
    let artifacts = project.path().join(".gitlab-ci-local/artifacts");
    let lost = std::fs::read_dir(&artifacts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|dir| {
            dir.join("verify-matrix-results/verify-matrix-a.json")
                .exists()
        })
        .expect("a's artifacts");
    std::fs::remove_dir_all(&lost).unwrap();
    let out = pipeline(&project, &gitlab, flags.path(), &["verify-matrix:report"]).await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(
        log.contains("All Required Environments: NOT VERIFIED"),
        "{log}"
    );
    assert!(log.contains("- a: no results"), "{log}");
    assert_eq!(gitlab.statuses().last().unwrap().state, "failed");
    assert_eq!(gitlab.notes(12).len(), 1);
}

/// A job of pipeline 501 as GitLab lists it.
fn listed_job(id: u64, name: &str, status: &str, runner: &str) -> Value {
    serde_json::json!({
        "id": id, "name": name, "status": status, "stage": "verify-matrix-run",
        "tag_list": ["linux"], "allow_failure": false,
        "runner": { "id": 9, "description": runner },
        "web_url": format!("https://gitlab.example/group/project/-/jobs/{id}"),
    })
}

/// `report artifacts` as the report job of pipeline 501 would run it, the pipeline's
/// jobs being `jobs`.
async fn report_with_jobs(project: &Project, jobs: Vec<Value>) -> (Output, GitLab) {
    let gitlab = GitLab::start().await;
    gitlab.state.lock().unwrap().jobs.insert(501, jobs);
    let mut cmd = report_job(project, &gitlab);
    cmd.args(["report", "artifacts"]);
    (output(cmd).await, gitlab)
}

#[tokio::test]
async fn the_report_holds_each_leg_to_the_pipeline_job_that_ran_it() {
    let project = reported(GREEN);
    // Both legs' jobs ran, on the runner their results name: VERIFIED.
    let (out, gitlab) = report_with_jobs(
        &project,
        vec![
            listed_job(7000, "verify-matrix:run: [a]", "success", "shared runner 9"),
            listed_job(7001, "verify-matrix:run: [b]", "success", "shared runner 9"),
        ],
    )
    .await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{log}{}", stderr(&out));
    assert!(log.contains("All Required Environments: VERIFIED"), "{log}");
    assert!(
        gitlab.requests().iter().all(|r| r.method == "GET"),
        "reading the jobs writes nothing: {:?}",
        gitlab.requests()
    );
    // b's job was cancelled, never created, renamed, run elsewhere, or is a's: b's
    // results are not taken, whatever they say.
    let cases: Vec<(&str, Vec<Value>)> = vec![
        (
            "cancelled",
            vec![listed_job(
                7001,
                "verify-matrix:run: [b]",
                "canceled",
                "shared runner 9",
            )],
        ),
        ("never created", vec![]),
        (
            "another leg's name",
            vec![listed_job(
                7001,
                "verify-matrix:run: [c]",
                "success",
                "shared runner 9",
            )],
        ),
        (
            "another runner",
            vec![listed_job(
                7001,
                "verify-matrix:run: [b]",
                "success",
                "laptop",
            )],
        ),
        (
            "another job's id",
            vec![listed_job(
                7002,
                "verify-matrix:run: [b]",
                "success",
                "shared runner 9",
            )],
        ),
        (
            "manual, never run",
            vec![listed_job(
                7001,
                "verify-matrix:run: [b]",
                "manual",
                "shared runner 9",
            )],
        ),
    ];
    // A job that failed cannot have written results in which every check passed.
    let jobs = vec![
        listed_job(7000, "verify-matrix:run: [a]", "success", "shared runner 9"),
        listed_job(7001, "verify-matrix:run: [b]", "failed", "shared runner 9"),
    ];
    let (out, _) = report_with_jobs(&project, jobs).await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(3), "{log}");
    assert!(
        log.contains("GitLab says its job `verify-matrix:run: [b]` (id 7001) failed, but its results say every check passed"),
        "{log}"
    );
    for (case, b_jobs) in cases {
        let mut jobs = vec![listed_job(
            7000,
            "verify-matrix:run: [a]",
            "success",
            "shared runner 9",
        )];
        jobs.extend(b_jobs);
        let (out, _) = report_with_jobs(&project, jobs).await;
        let log = String::from_utf8_lossy(&out.stdout).into_owned();
        // A leg not taken is a leg missing: incomplete (3).
        assert_eq!(out.status.code(), Some(3), "{case}: {log}");
        assert!(
            log.contains("All Required Environments: NOT VERIFIED"),
            "{case}: {log}"
        );
        assert!(
            log.contains("b: not verified: its results were not taken: no job of pipeline 501 with id 7001 that GitLab lists ran it"),
            "{case}: {log}"
        );
    }
    // One job cannot stand for two legs: b's results claiming a's job.
    let forged = project.path().join("artifacts/b/verify-matrix-b.json");
    let mut result: Value =
        serde_json::from_str(&std::fs::read_to_string(&forged).unwrap()).unwrap();
    result["runner"]["gitlab"]["job_id"] = 7000.into();
    result["runner"]["gitlab"]["job_name"] = "verify-matrix:run: [a]".into();
    std::fs::write(&forged, result.to_string()).unwrap();
    let (out, _) = report_with_jobs(
        &project,
        vec![listed_job(
            7000,
            "verify-matrix:run: [a]",
            "success",
            "shared runner 9",
        )],
    )
    .await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(3), "{log}");
    assert!(
        log.contains("b: not verified: its results were not taken"),
        "{log}"
    );
}

#[tokio::test]
async fn a_pipeline_whose_jobs_cannot_be_read_takes_no_leg() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    // 404: the pipeline is not there.
    let mut cmd = report_job(&project, &gitlab);
    cmd.args(["report", "artifacts"]);
    let out = output(cmd).await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(3), "{log}");
    assert!(log.contains("the run's jobs could not be read"), "{log}");
    assert!(log.contains("404 Not found"), "{log}");
    // A page that is not a list of jobs.
    gitlab.state.lock().unwrap().jobs.insert(501, Vec::new());
    gitlab.fault(
        "GET",
        &format!("/api/v4/projects/{PROJECT_ID}/pipelines/501/jobs"),
        200,
        serde_json::json!({"jobs": []}),
        &[],
    );
    let mut cmd = report_job(&project, &gitlab);
    cmd.args(["report", "artifacts"]);
    let out = output(cmd).await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(3), "{log}");
    assert!(log.contains("page 1 is not a list of jobs"), "{log}");
    // No token at all: not read, not taken.
    let mut cmd = report_job(&project, &gitlab);
    cmd.env_remove("GITLAB_TOKEN").args(["report", "artifacts"]);
    let out = output(cmd).await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(3), "{log}");
    assert!(log.contains("no token to read them with"), "{log}");
}

#[tokio::test]
async fn a_merge_request_that_weakens_the_manifest_is_not_verified_until_the_label_allows_it() {
    let project = pipeline_repo(FLAGGED);
    let base = head_of(&project);
    // The merge request makes the failing check optional.
    project.write(
        "verify-matrix.yml",
        &FLAGGED.replace("' }\n", "', required: false }\n"),
    );
    assert!(
        project
            .read("verify-matrix.yml")
            .contains("required: false")
    );
    let commit = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qam",
            "optional",
        ])
        .current_dir(project.path())
        .output()
        .unwrap();
    assert!(commit.status.success(), "{commit:?}");
    let flags = tempfile::tempdir().unwrap();
    std::fs::write(flags.path().join("a"), "").unwrap();
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, &head_of(&project));
    gitlab.state.lock().unwrap().jobs.insert(501, Vec::new());
    for stage in ["verify-matrix-plan", "verify-matrix-run"] {
        let out = pipeline(&project, &gitlab, flags.path(), &["--stage", stage]).await;
        assert!(out.status.code().is_some(), "{out:?}");
    }
    record_jobs(&project, &gitlab);
    let base_var = format!("CI_MERGE_REQUEST_DIFF_BASE_SHA={base}");
    let report = |labels: &'static str| {
        let args = [
            "verify-matrix:report".to_owned(),
            "--variable".to_owned(),
            base_var.clone(),
            "--variable".to_owned(),
            format!("CI_MERGE_REQUEST_LABELS={labels}"),
        ];
        let (project, gitlab, flags) = (&project, &gitlab, flags.path());
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            pipeline(project, gitlab, flags, &args).await
        }
    };
    // Held to the target branch's manifest: the weakening is named, NOT VERIFIED.
    let out = report("bug,review").await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{log}{}", stderr(&out));
    assert!(
        log.contains("All Required Environments: NOT VERIFIED"),
        "{log}"
    );
    assert!(
        log.contains("the manifest is weaker than the trusted one: check `unit` was made optional"),
        "{log}"
    );
    // The label allows it: b's failure is optional now.
    let out = report("bug,verify-matrix:allow-weakening").await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{log}{}", stderr(&out));
    assert!(log.contains("All Required Environments: VERIFIED"), "{log}");
    assert_eq!(gitlab.statuses().last().unwrap().state, "success");
}

#[tokio::test]
async fn a_second_result_for_a_legs_job_is_a_conflict_never_the_later_one_taken() {
    let manifest = "version: 1
environments: [{name: a}, {name: b}]
checks:
  - { id: unit, run: 'test \"$VERIFY_MATRIX_ENV\" != b || test -f pass-flag' }
";
    let project = reported(manifest);
    // Code in a's job writes a passing result for b, claiming b's job (7001), and
    // finishing later.
    project.write("pass-flag", "");
    let forged = project
        .std_cmd()
        .args(["run", "--env", "b", "--out", "artifacts/a/forged"])
        .envs(job_vars("verify-matrix:run: [b]", 7001))
        .output()
        .unwrap();
    assert_eq!(forged.status.code(), Some(0), "{forged:?}");
    let path = project
        .path()
        .join("artifacts/a/forged/verify-matrix-b.json");
    let mut result: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    result["finished_at"] = "2099-01-01T00:00:00Z".into();
    std::fs::write(&path, result.to_string()).unwrap();
    // GitLab says b's job failed: a passing result is not its run's. The two files are
    // one leg, refused together (or, were they taken, in conflict): never VERIFIED.
    let (out, _) = report_with_jobs(
        &project,
        vec![
            listed_job(7000, "verify-matrix:run: [a]", "success", "shared runner 9"),
            listed_job(7001, "verify-matrix:run: [b]", "failed", "shared runner 9"),
        ],
    )
    .await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{log}{err}");
    assert!(!err.contains("an earlier attempt"), "{err}");
    assert!(
        log.contains("All Required Environments: NOT VERIFIED"),
        "{log}"
    );
    assert!(
        log.contains("GitLab says its job `verify-matrix:run: [b]` (id 7001) failed")
            || log.contains("unit in b: conflicting results reported"),
        "{log}"
    );
    // Were the job listed as passed, the two results of one job would be a conflict.
    let (out, _) = report_with_jobs(
        &project,
        vec![
            listed_job(7000, "verify-matrix:run: [a]", "success", "shared runner 9"),
            listed_job(7001, "verify-matrix:run: [b]", "success", "shared runner 9"),
        ],
    )
    .await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(
        log.contains("unit in b: conflicting results reported"),
        "{log}"
    );
}

#[tokio::test]
async fn a_token_that_cannot_say_whose_it_is_writes_and_deletes_nothing() {
    let project = reported(MANIFEST);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    let forged = gitlab.add_note(
        12,
        "mallory",
        &format!("{MARKER}\nVERIFIED (forged)"),
        false,
    );
    let ours = gitlab.add_note(12, BOT, &format!("{MARKER}\nan earlier result"), false);
    gitlab.fault(
        "GET",
        "/api/v4/user",
        403,
        serde_json::json!({"message": "403 Forbidden"}),
        &[],
    );
    let out = publish(&project, &gitlab, &["--to", "comment"]).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "the verdict's: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("reading the token's user: 403"),
        "{}",
        stderr(&out)
    );
    let writes: Vec<_> = gitlab
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    let notes = gitlab.notes(12);
    assert_eq!(notes.len(), 2);
    assert!(notes.iter().any(|n| n.id == forged) && notes.iter().any(|n| n.id == ours));
    // `--comment-author` says whose our notes are: ours is updated, mallory's left.
    gitlab.fault(
        "GET",
        "/api/v4/user",
        403,
        serde_json::json!({"message": "403 Forbidden"}),
        &[],
    );
    let out = publish(
        &project,
        &gitlab,
        &["--to", "comment", "--comment-author", BOT],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("note on !12 updated"),
        "{}",
        stderr(&out)
    );
    let notes = gitlab.notes(12);
    let body = |id| notes.iter().find(|n| n.id == id).unwrap().body.clone();
    assert_eq!(body(forged), format!("{MARKER}\nVERIFIED (forged)"));
    assert!(body(ours).contains("NOT VERIFIED"), "{}", body(ours));
}

#[tokio::test]
async fn a_merge_request_whose_head_cannot_be_read_gets_no_note() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    let mr = format!("/api/v4/projects/{PROJECT_ID}/merge_requests/12");
    // Refused: a warning, the verdict's exit code, and no note.
    gitlab.fault(
        "GET",
        &mr,
        404,
        serde_json::json!({"message": "404 Not found"}),
        &[],
    );
    let out = publish(&project, &gitlab, &["--to", "comment"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reading the merge request: 404"),
        "{}",
        stderr(&out)
    );
    assert!(gitlab.notes(12).is_empty());
    // An answer without the head: publishing failed (5), no note.
    gitlab.fault(
        "GET",
        &mr,
        200,
        serde_json::json!({"iid": 12, "sha": null}),
        &[],
    );
    let out = publish(&project, &gitlab, &["--to", "comment"]).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(stderr(&out).contains("names no head"), "{}", stderr(&out));
    assert!(gitlab.notes(12).is_empty());
}

#[tokio::test]
async fn repeated_pages_and_a_note_deleted_meanwhile_lose_no_result() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    let ours = gitlab.add_note(12, BOT, &format!("{MARKER}\nan earlier result"), false);
    // A proxy that answers every page as the first: read once, nothing deleted.
    gitlab.state.lock().unwrap().ignore_page = true;
    let out = publish(&project, &gitlab, &["--to", "comment"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("note on !12 updated"),
        "{}",
        stderr(&out)
    );
    assert!(gitlab.requests().iter().all(|r| r.method != "DELETE"));
    let notes = gitlab.notes(12);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]
            .body
            .contains("All Required Environments: VERIFIED")
    );
    // The note deleted between the listing and the update: written anew.
    gitlab.state.lock().unwrap().ignore_page = false;
    let notes_path = format!("/api/v4/projects/{PROJECT_ID}/merge_requests/12/notes/{ours}");
    gitlab.fault(
        "PUT",
        &notes_path,
        404,
        serde_json::json!({"message": "404 Note Not Found"}),
        &[],
    );
    gitlab.state.lock().unwrap().mrs.get_mut(&12).unwrap().1[0].body = format!("{MARKER}\nstale");
    let out = publish(&project, &gitlab, &["--to", "comment"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("created (the earlier one was gone)"),
        "{}",
        stderr(&out)
    );
    assert!(
        gitlab
            .notes(12)
            .iter()
            .any(|n| n.id != ours && n.body.contains("VERIFIED"))
    );
}

#[test]
fn init_names_the_manifest_by_its_path_in_the_repository() {
    // Run from elsewhere with --dir: no path of this machine in the pipeline.
    let project = Project::new(GREEN);
    common::bin()
        .args(["init", "--ci", "gitlab", "--dir"])
        .arg(project.path())
        .assert()
        .success();
    let text = project.read(".gitlab-ci.yml");
    let here = project.path().display().to_string();
    assert!(!text.contains(&here), "{text}");
    assert!(
        text.contains("\"$CI_MERGE_REQUEST_DIFF_BASE_SHA:verify-matrix.yml\" > .verify-matrix-base/verify-matrix.yml"),
        "{text}"
    );
    // A manifest in Cargo.toml is compared as a Cargo.toml.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [package.metadata.verify-matrix]\nversion = 1\nenvironments = [{ name = \"linux\" }]\n\
         checks = [{ id = \"unit\", run = \"true\" }]\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    common::bin()
        .current_dir(dir.path())
        .args(["init", "--ci", "gitlab"])
        .assert()
        .success()
        .stderr(predicates::str::contains("kept"));
    let text = std::fs::read_to_string(dir.path().join(".gitlab-ci.yml")).unwrap();
    assert!(
        text.contains("--base-manifest .verify-matrix-base/Cargo.toml"),
        "{text}"
    );
    assert!(!dir.path().join("verify-matrix.yml").exists());
    // An image GitLab would expand a variable in is refused, naming it.
    let odd = Project::new(
        "version: 1\nenvironments: [{name: c, container: '$CI_JOB_TOKEN@evil.example/x'}]\nchecks:\n  - { id: unit, run: 'true' }\n",
    );
    odd.cmd()
        .args(["init", "--ci", "gitlab"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("the container image of `c`"));
    assert!(!odd.path().join(".gitlab-ci.yml").exists());
}

#[tokio::test]
async fn a_leg_allowed_to_fail_by_gitlab_still_fails_here() {
    // b's check fails; its job is `allow_failure: true`, so GitLab's pipeline is green.
    let project = reported(MANIFEST);
    let mut b = listed_job(7001, "verify-matrix:run: [b]", "failed", "shared runner 9");
    b["allow_failure"] = true.into();
    let (out, _) = report_with_jobs(
        &project,
        vec![
            listed_job(7000, "verify-matrix:run: [a]", "success", "shared runner 9"),
            b,
        ],
    )
    .await;
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(
        log.contains("All Required Environments: NOT VERIFIED"),
        "{log}"
    );
    assert!(log.contains("unit failed in b"), "{log}");
}

#[test]
fn a_token_a_check_prints_under_gitlab_is_masked_and_the_publishing_token_is_withheld() {
    let project = Project::new(
        "version: 1
environments: [{name: a}]
checks:
  - { id: leak, run: 'echo \"job $CI_JOB_TOKEN access $GITLAB_TOKEN\"; false' }
",
    );
    let out = project
        .std_cmd()
        .args(["run", "--env", "a", "--out", "out"])
        .envs(job_vars("verify-matrix:run: [a]", 7000))
        .env("CI_JOB_TOKEN", JOB_TOKEN)
        .env("GITLAB_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let log = project.read("out/logs/a/leak.log");
    let result = project.read("out/verify-matrix-a.json");
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for text in [&log, &result, &shown] {
        assert!(!text.contains(JOB_TOKEN) && !text.contains(TOKEN), "{text}");
    }
    assert!(log.contains("job ***"), "{log}");
    // The token the tool publishes with is not handed to checks at all.
    assert!(!log.contains("access ***"), "{log}");
    assert!(log.contains("job *** access"), "{log}");
}

/// The report of pipeline `pipeline` on main, as its report job made it.
fn report_of_pipeline(project: &Project, pipeline: u64, note: &str) -> String {
    let mut report = project.json("report.json");
    report["source"]["repository"] = PROJECT_PATH.into();
    report["source"]["run_id"] = pipeline.to_string().into();
    report["source"]["commit"] = format!("{pipeline:040x}").into();
    report["source"]["event"] = "push".into();
    report["source"]["pr"] = Value::Null;
    report["source"]["job"] = note.into();
    report.to_string()
}

/// `history sync --from-gitlab --history h.sqlite ARGS` against `gitlab`, from a
/// machine of one's own (GITLAB_TOKEN, CI_API_V4_URL).
async fn sync_gitlab(project: &Project, gitlab: &GitLab, args: &[&str]) -> Output {
    let mut cmd = project.std_cmd();
    cmd.env("CI_API_V4_URL", gitlab.api_url())
        .env("GITLAB_TOKEN", TOKEN)
        .args(["history", "sync", "--from-gitlab", "--history", "h.sqlite"])
        .args(args);
    let out = output(cmd).await;
    let shown = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        !shown.contains("sig-secret"),
        "the storage signature leaked:\n{shown}"
    );
    out
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The pipelines (run ids) and jobs the history file holds.
fn recorded_runs(project: &Project) -> Vec<(String, String, Option<String>)> {
    let db = rusqlite::Connection::open(project.path().join("h.sqlite")).unwrap();
    let mut statement = db
        .prepare("SELECT repository, run_id, branch FROM runs ORDER BY run_id")
        .unwrap();
    statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn history_sync_from_gitlab_imports_the_branchs_own_pipelines_once() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    let zip = |entries: &[(&str, &str)]| common::zip_of(project.path(), entries);
    // 505: a push to main whose report job kept the report, a file that is not one,
    // and an entry that climbs out of the archive.
    gitlab.pipeline(505, "main", "push", "failed");
    gitlab.job_with_artifacts(
        505,
        9050,
        "leg: [a]",
        Some(zip(&[("verify-matrix-results/a.json", "{}")])),
    );
    gitlab.job_with_artifacts(
        505,
        9051,
        "verify-matrix:report",
        Some(zip(&[
            (
                "verify-matrix-report.json",
                &report_of_pipeline(&project, 505, "first"),
            ),
            ("notes.json", "{\"hello\": 1}"),
            ("../../escape.json", "{}"),
        ])),
    );
    // 504: a merge request's pipeline (a fork's code): never the base, even on `main`.
    gitlab.pipeline(504, "main", "merge_request_event", "success");
    gitlab.job_with_artifacts(
        504,
        9040,
        "verify-matrix:report",
        Some(zip(&[(
            "verify-matrix-report.json",
            &report_of_pipeline(&project, 504, "fork"),
        )])),
    );
    // 503: a schedule whose report job was retried: the later job's report is taken.
    gitlab.pipeline(503, "main", "schedule", "success");
    gitlab.job_with_artifacts(
        503,
        9030,
        "verify-matrix:report",
        Some(zip(&[(
            "verify-matrix-report.json",
            &report_of_pipeline(&project, 503, "first try"),
        )])),
    );
    gitlab.job_with_artifacts(
        503,
        9031,
        "verify-matrix:report",
        Some(zip(&[(
            "verify-matrix-report.json",
            &report_of_pipeline(&project, 503, "retried"),
        )])),
    );
    // 502: another branch; 501: still running; 500: its artifacts expired.
    gitlab.pipeline(502, "feature", "push", "success");
    gitlab.job_with_artifacts(
        502,
        9020,
        "verify-matrix:report",
        Some(zip(&[(
            "verify-matrix-report.json",
            &report_of_pipeline(&project, 502, "feature"),
        )])),
    );
    gitlab.pipeline(501, "main", "push", "running");
    gitlab.pipeline(500, "main", "push", "success");
    gitlab.job_with_artifacts(500, 9000, "verify-matrix:report", None);
    gitlab.state.lock().unwrap().artifacts_in_storage = true;

    // The project by its number: its path, which the reports carry, is asked for.
    let out = sync_gitlab(&project, &gitlab, &["--repo", "42", "--runs", "5"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (said, log) = (stdout(&out), stderr(&out));
    assert!(
        said.contains("synced 3 runs of `main` from group/project: 2 reports recorded, 0 already recorded, 1 without a report, 0 failed"),
        "{said}\n{log}"
    );
    assert!(log.contains("[1/3] pipeline 505 (0000000)"), "{log}");
    assert!(
        log.contains("skipped pipeline 505 job `verify-matrix:report`: `notes.json`: not a report"),
        "{log}"
    );
    assert!(log.contains("its path leaves the archive"), "{log}");
    assert!(
        log.contains("pipeline 500: job `verify-matrix:report` has no artifacts"),
        "{log}"
    );
    assert_eq!(
        recorded_runs(&project),
        vec![
            (
                PROJECT_PATH.to_owned(),
                "503".to_owned(),
                Some("main".to_owned())
            ),
            (
                PROJECT_PATH.to_owned(),
                "505".to_owned(),
                Some("main".to_owned())
            ),
        ]
    );
    let db = rusqlite::Connection::open(project.path().join("h.sqlite")).unwrap();
    let job: String = db
        .query_row(
            "SELECT recorded_at FROM runs WHERE run_id = '503'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        job, "2026-11-20T10:23:00.000Z",
        "recorded at the pipeline's own time"
    );
    let requests = gitlab.requests();
    // The retried job's artifacts, never the first try's; nothing of the merge
    // request's pipeline; the storage never got the token.
    let asked = |part: &str| requests.iter().any(|r| r.target.contains(part));
    assert!(asked("/jobs/9031/artifacts") && !asked("/jobs/9030/artifacts"));
    assert!(!asked("/pipelines/504/jobs") && !asked("/jobs/9040/"));
    for r in requests
        .iter()
        .filter(|r| r.target.starts_with("/storage/"))
    {
        assert_eq!(r.auth, None, "the storage got a token: {r:?}");
    }
    assert!(
        requests
            .iter()
            .any(|r| r.target.starts_with("/storage/9051"))
    );
    for r in requests.iter().filter(|r| r.target.starts_with("/api/v4")) {
        assert_eq!(
            r.auth,
            Some(("PRIVATE-TOKEN".to_owned(), TOKEN.to_owned())),
            "{r:?}"
        );
    }

    // A second sync downloads nothing it has.
    let before = gitlab.requests().len();
    let out = sync_gitlab(&project, &gitlab, &["--repo", PROJECT_PATH, "--runs", "5"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("0 reports recorded, 2 already recorded, 1 without a report"),
        "{}",
        stdout(&out)
    );
    let again = &gitlab.requests()[before..];
    assert!(
        !again
            .iter()
            .any(|r| r.target.contains("/artifacts") && !r.target.contains("/jobs/9000/")),
        "downloaded again: {again:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn history_sync_from_gitlab_fails_with_5_and_keeps_what_it_had() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    gitlab.pipeline(505, "main", "push", "success");
    gitlab.job_with_artifacts(
        505,
        9051,
        "verify-matrix:report",
        Some(common::zip_of(
            project.path(),
            &[(
                "verify-matrix-report.json",
                &report_of_pipeline(&project, 505, "x"),
            )],
        )),
    );
    gitlab.pipeline(506, "main", "push", "success");
    gitlab.job_with_artifacts(
        506,
        9061,
        "verify-matrix:report",
        Some(b"not a zip".to_vec()),
    );
    let out = sync_gitlab(
        &project,
        &gitlab,
        &["--repo", PROJECT_PATH, "--branch", "main"],
    )
    .await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: pipeline 506: the artifacts of job 9061"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("not a zip archive"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out)
            .contains("1 report recorded, 0 already recorded, 0 without a report, 1 failed"),
        "{}",
        stdout(&out)
    );

    // The job's own token cannot list pipelines: exit 5, naming what to give it.
    let mut cmd = project.std_cmd();
    cmd.envs(job_vars("history", 7200))
        .env("CI_API_V4_URL", gitlab.api_url())
        .env("CI_JOB_TOKEN", JOB_TOKEN)
        .env_remove("GITLAB_TOKEN")
        .args(["history", "sync", "--from-gitlab", "--history", "h.sqlite"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(stderr(&out).contains("403"), "{}", stderr(&out));
    assert_eq!(recorded_runs(&project).len(), 1, "what was recorded stays");

    // A project GitLab could never name, and --artifact (GitHub's) with --from-gitlab.
    for (args, says) in [
        (&["--repo", "../x"][..], "not a GitLab project"),
        (&["--artifact", "r"][..], "cannot be used with"),
    ] {
        let mut cmd = project.std_cmd();
        cmd.env("GITLAB_TOKEN", TOKEN)
            .args(["history", "sync", "--from-gitlab", "--history", "h.sqlite"])
            .args(args);
        let out = output(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[tokio::test]
async fn a_merge_trains_pipeline_verifies_the_trains_commit_and_writes_no_note() {
    // The train's commit: the merge request (head HEAD) merged with those ahead of it.
    const TRAIN: &str = "3333333333333333333333333333333333333333";
    let train = [
        ("CI_MERGE_REQUEST_EVENT_TYPE", "merge_train"),
        ("CI_COMMIT_SHA", TRAIN),
        ("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", HEAD),
        ("CI_COMMIT_REF_NAME", "refs/merge-requests/12/train"),
    ];
    let project = reported_with(MANIFEST, &train);
    let report = project.json("report.json");
    assert_eq!(report["source"]["commit"], TRAIN, "{}", report["source"]);
    let gitlab = GitLab::start().await;
    gitlab.merge_request(12, HEAD);
    let mut cmd = report_job(&project, &gitlab);
    cmd.envs(train)
        .args(["publish", "--to", "comment,check-run", "report.json"]);
    let out = output(cmd).await;
    // NOT VERIFIED fails the pipeline: the train drops the merge request.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "no merge-request note: a merge train's pipeline verifies the train's commit"
        ),
        "{}",
        stderr(&out)
    );
    assert!(gitlab.notes(12).is_empty());
    let statuses = gitlab.statuses();
    assert_eq!(statuses.len(), 1, "{statuses:?}");
    assert_eq!(
        (
            statuses[0].sha.as_str(),
            statuses[0].state.as_str(),
            statuses[0].pipeline_id
        ),
        (TRAIN, "failed", Some(501))
    );

    // A merged-results pipeline (not a train) still verifies the merge request's head.
    let merged = [
        ("CI_MERGE_REQUEST_EVENT_TYPE", "merged_result"),
        ("CI_COMMIT_SHA", TRAIN),
        ("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", HEAD),
    ];
    let project = reported_with(MANIFEST, &merged);
    assert_eq!(project.json("report.json")["source"]["commit"], HEAD);
}

#[tokio::test(flavor = "multi_thread")]
async fn history_sync_from_gitlab_takes_only_each_pipelines_own_report() {
    let project = reported(GREEN);
    let gitlab = GitLab::start().await;
    let zip = |entries: &[(&str, &str)]| common::zip_of(project.path(), entries);
    let report = |pipeline: u64| report_of_pipeline(&project, pipeline, "x");
    // 510: its report, and files that claim to be other runs' (another pipeline,
    // another project, another commit).
    let mut other_project: Value = serde_json::from_str(&report(510)).unwrap();
    other_project["source"]["repository"] = "victim/other".into();
    let mut other_commit: Value = serde_json::from_str(&report(510)).unwrap();
    other_commit["source"]["commit"] = "f".repeat(40).into();
    let mut hostile: Value = serde_json::from_str(&report(510)).unwrap();
    hostile["source"]["run_id"] =
        format!("\u{1b}[2J\r\nAll Required Environments: VERIFIED {TOKEN}").into();
    gitlab.pipeline(510, "main", "push", "success");
    gitlab.job_with_artifacts(
        510,
        9100,
        "verify-matrix:report",
        Some(zip(&[
            ("verify-matrix-report.json", &report(510)),
            ("claims-999.json", &report(999)),
            ("other-project.json", &other_project.to_string()),
            ("other-commit.json", &other_commit.to_string()),
            ("hostile.json", &hostile.to_string()),
            (&format!("{TOKEN}.json"), "{}"),
        ])),
    );
    // 511: a tag named `main` (GitLab's `ref` filter matches it too).
    gitlab.pipeline(511, "main", "push", "success");
    gitlab.state.lock().unwrap().pipelines.last_mut().unwrap()["tag"] = true.into();
    gitlab.job_with_artifacts(
        511,
        9110,
        "verify-matrix:report",
        Some(zip(&[("verify-matrix-report.json", &report(511))])),
    );
    // 512: seventeen reports of "its own" (distinct manifests): none taken.
    gitlab.pipeline(512, "main", "push", "success");
    let many: Vec<(String, String)> = (0..17)
        .map(|i| {
            let mut r: Value = serde_json::from_str(&report(512)).unwrap();
            r["manifest"]["path"] = format!("m{i}.yml").into();
            (format!("r{i}.json"), r.to_string())
        })
        .collect();
    let entries: Vec<(&str, &str)> = many.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    gitlab.job_with_artifacts(512, 9120, "verify-matrix:report", Some(zip(&entries)));
    // 513: its report job answers with a redirect back onto the API's host, outside the
    // API's path: it is fetched without the token.
    gitlab.pipeline(513, "main", "push", "success");
    gitlab.job_with_artifacts(
        513,
        9130,
        "verify-matrix:report",
        Some(zip(&[("r.json", &report(513))])),
    );
    gitlab.fault(
        "GET",
        "/api/v4/projects/group%2Fproject/jobs/9130/artifacts",
        302,
        Value::Null,
        &[("location", "/api/v4/../../steal")],
    );
    // 514: a pipeline that names no commit its report could be held to; 515: reports
    // spelling the project three ways (one run recorded thrice, else).
    gitlab.pipeline(514, "main", "push", "success");
    gitlab.state.lock().unwrap().pipelines.last_mut().unwrap()["sha"] = "x".into();
    gitlab.job_with_artifacts(
        514,
        9140,
        "verify-matrix:report",
        Some(zip(&[("r.json", &report(514))])),
    );
    gitlab.pipeline(515, "main", "push", "success");
    let spelled: Vec<(String, String)> = ["group/project", "Group/Project", "GROUP/PROJECT"]
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let mut r: Value = serde_json::from_str(&report(515)).unwrap();
            r["source"]["repository"] = (*path).into();
            r["manifest"]["path"] = format!("m{i}.yml").into();
            (format!("r{i}.json"), r.to_string())
        })
        .collect();
    let entries: Vec<(&str, &str)> = spelled
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    gitlab.job_with_artifacts(515, 9150, "verify-matrix:report", Some(zip(&entries)));
    let out = sync_gitlab(&project, &gitlab, &["--repo", PROJECT_PATH, "--runs", "10"]).await;
    let (said, log) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(5), "{said}{log}");
    // What the archives said is shown on one line, without escapes, the token or a
    // verdict's words.
    assert!(!log.contains('\u{1b}') && !log.contains('\r'), "{log:?}");
    assert!(
        !log.contains("All Required Environments: VERIFIED"),
        "{log}"
    );
    assert!(log.contains("the report of another run (`"), "{log}");
    assert!(log.contains("`***.json`"), "{log}");
    assert!(
        log.contains("pipeline 514 job `verify-matrix:report`: `r.json`: the run names no commit"),
        "{log}"
    );
    assert!(
        log.contains(
            "pipeline 515: its reports name the repository or the attempt differently: none taken"
        ),
        "{log}"
    );
    assert!(
        log.contains("`claims-999.json`: the report of another run (`999`), not of 510"),
        "{log}"
    );
    assert!(
        log.contains("`other-project.json`: the report of another repository (`victim/other`)"),
        "{log}"
    );
    assert!(
        log.contains("`other-commit.json`: the report of another commit"),
        "{log}"
    );
    assert!(
        log.contains("pipeline 512: 17 reports, more than the 16"),
        "{log}"
    );
    assert!(
        !log.contains("pipeline 511"),
        "the tag's pipeline was read: {log}"
    );
    assert!(said.contains("synced 5 runs of `main`"), "{said}");
    let runs = recorded_runs(&project);
    assert_eq!(
        runs,
        vec![(
            PROJECT_PATH.to_owned(),
            "510".to_owned(),
            Some("main".to_owned())
        )]
    );
    let stolen: Vec<_> = gitlab
        .requests()
        .into_iter()
        .filter(|r| r.target.contains("steal"))
        .collect();
    assert!(!stolen.is_empty(), "the redirect was not followed");
    assert!(
        stolen.iter().all(|r| r.auth.is_none()),
        "the token went along: {stolen:?}"
    );
}
