//! The Action and the workflows: every workflow in the repository passes actionlint,
//! action.yml and the workflows validate against GitHub's schemas (check-jsonschema),
//! and the three jobs of the basic workflow, played step by step through the Action's
//! own step script with the variables a runner sets, post the comment and check run.
//!
//! actionlint and check-jsonschema are installed by `scripts/test.sh`; a missing one
//! fails these tests, it never skips them.

mod common;
#[path = "common/openapi.rs"]
mod openapi;
#[path = "common/stand_in.rs"]
mod stand_in;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Project, repo_root};
use serde_json::{Value, json};
use stand_in::{
    COMMENTS, accept_check_run, accept_comment, comments_page, installation_token, job, run_jobs,
};
use wiremock::MockServer;

/// Runs a validator; a validator that cannot be started is a failure with the fix.
fn validator(program: &str, args: &[&str], files: &[PathBuf]) -> std::process::Output {
    Command::new(program)
        .args(args)
        .args(files)
        .current_dir(repo_root())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run `{program}` ({e}): scripts/test.sh installs it from PyPI")
        })
}

fn files_under(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(repo_root().join(dir))
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    files
}

fn workflows() -> Vec<PathBuf> {
    let mut all = files_under(".github/workflows");
    all.extend(files_under("fixtures/workflows"));
    assert!(all.len() >= 5, "{all:?}");
    all
}

#[test]
fn every_workflow_passes_actionlint() {
    let out = validator("actionlint", &["-no-color"], &workflows());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn action_yml_and_the_workflows_validate_against_githubs_schemas() {
    let action = [repo_root().join("action.yml")];
    for (schema, files) in [
        ("vendor.github-actions", action.to_vec()),
        ("vendor.github-workflows", workflows()),
    ] {
        let out = validator("check-jsonschema", &["--builtin-schema", schema], &files);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{schema}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn actionlint_really_checks_the_files_it_is_given() {
    // A workflow with an expression error must fail, or the test above proves nothing.
    let project = Project::empty();
    let bad = project.write(
        "bad.yml",
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n",
    );
    let out = validator("actionlint", &["-no-color"], &[bad]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("matrix"));
}

const HEAD: &str = "3333333333333333333333333333333333333333";
const MERGE: &str = "4444444444444444444444444444444444444444";
const TOKEN: &str = "ghs_ThreeJobsTokenNeverShown0123456789";

const MANIFEST: &str = "version: 1
environments:
  - { name: linux, runs-on: ubuntu-latest }
  - { name: arm, runs-on: [self-hosted, arm64], container: 'rust:1.89' }
checks:
  - { id: unit, run: 'echo unit in $VERIFY_MATRIX_ENV' }
  - { id: arm-only, run: 'test \"$VERIFY_MATRIX_ENV\" = linux', environment: arm }
";

/// One step of the Action: `action/command.sh COMMAND` with the variables a runner
/// sets for job `job` and the step's `env:` inputs; returns the step outputs.
fn step(
    project: &Project,
    job: &str,
    command: &str,
    inputs: &[(&str, String)],
    code: i32,
) -> Vec<(String, String)> {
    let runner = project.path().join("runner").join(job);
    std::fs::create_dir_all(runner.join("temp")).unwrap();
    let output = runner.join("output");
    std::fs::write(&output, "").unwrap();
    let bin_dir = assert_cmd::cargo::cargo_bin("cargo-verify-matrix")
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The machine's facts are read under a folder of the test's own: inside a container
    // (the arm leg requires one), whatever machine runs the test.
    let facts_root = project.path().join("facts-root");
    std::fs::create_dir_all(&facts_root).unwrap();
    std::fs::write(facts_root.join(".dockerenv"), "").unwrap();
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("action/command.sh"))
        .arg(command)
        .current_dir(project.path().join("checkout"))
        .env_clear()
        .env("PATH", path)
        .env("HOME", project.path())
        .env("NO_COLOR", "1")
        .env("GITHUB_ACTIONS", "true")
        .env("CI", "true")
        .env("GITHUB_ACTION_PATH", repo_root())
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", runner.join("summary.md"))
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", project.path().join("event.json"))
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_SHA", MERGE)
        .env("GITHUB_RUN_ID", "501")
        .env("GITHUB_RUN_ATTEMPT", "1")
        .env("GITHUB_JOB", job)
        // The runner's name, as the stand-in lists the job's (`runner for run (linux)`).
        .env("RUNNER_NAME", runner_name(job))
        .env("RUNNER_TEMP", runner.join("temp"))
        .env("VERIFY_MATRIX_FACTS_ROOT", &facts_root);
    for (key, value) in inputs {
        cmd.env(key, value);
    }
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{job}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(TOKEN), "the token leaked: {stderr}");
    // What the step said, for the tests that read it.
    std::fs::write(runner.join("stderr"), stderr.as_bytes()).unwrap();
    std::fs::write(runner.join("stdout"), &out.stdout).unwrap();
    std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// The name of the runner that runs the step's `job` (`run-linux` is the leg `run
/// (linux)`), as the stand-in's job list names it.
fn runner_name(job: &str) -> String {
    match job.strip_prefix("run-") {
        Some(env) => format!("runner for run ({env})"),
        None => format!("runner for {job}"),
    }
}

/// The report step with `inputs`, off the async runtime (the stand-in answers on it);
/// the project back, and the step's outputs.
async fn report_step(
    project: Project,
    inputs: &[(&str, &str)],
    code: i32,
) -> (Project, Vec<(String, String)>) {
    let inputs: Vec<(String, String)> = inputs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    tokio::task::spawn_blocking(move || {
        let inputs: Vec<(&str, String)> = inputs
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let outputs = step(&project, "report", "report", &inputs, code);
        (project, outputs)
    })
    .await
    .unwrap()
}

fn output<'a>(outputs: &'a [(String, String)], name: &str) -> &'a str {
    outputs
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no step output {name} in {outputs:?}"))
}

/// Jobs 1 and 2 of PR #12's workflow through the step script: plan (its matrix checked),
/// then one leg per matrix entry (`linux` passes, `arm` fails), each leg's folder copied
/// where the report downloads them; that folder.
fn planned_and_run(project: &Project) -> PathBuf {
    project.write("checkout/verify-matrix.yml", MANIFEST);
    project.write(
        "event.json",
        &json!({"pull_request": {"number": 12, "head": {"sha": HEAD}}}).to_string(),
    );

    // Job 1: plan. The matrix output drives `strategy.matrix` through fromJSON.
    let plan = step(project, "plan", "plan", &[], 0);
    let matrix: Value = serde_json::from_str(output(&plan, "matrix")).unwrap();
    assert_eq!(
        matrix,
        json!({"include": [
            {"environment": "linux", "runs-on": "ubuntu-latest"},
            {"environment": "arm", "runs-on": ["self-hosted", "arm64"], "container": "rust:1.89"}
        ]})
    );

    // Job 2: one leg per matrix entry, each on its own runner; each uploads its folder.
    let artifacts = project.path().join("artifacts");
    for (entry, code, verdict) in [(0, 0, "VERIFIED"), (1, 1, "NOT_VERIFIED")] {
        let env = matrix["include"][entry]["environment"].as_str().unwrap();
        let inputs = [
            ("VERIFY_MATRIX_ENVIRONMENT", env.to_owned()),
            ("VERIFY_MATRIX_JOBS", "2".to_owned()),
        ];
        let leg = step(project, &format!("run-{env}"), "run", &inputs, code);
        assert_eq!(output(&leg, "verdict"), verdict);
        let out = PathBuf::from(output(&leg, "out"));
        assert!(out.join(format!("verify-matrix-{env}.json")).is_file());
        common::copy_dir(&out, &artifacts.join(format!("verify-matrix-{env}")));
    }
    artifacts
}

#[tokio::test(flavor = "multi_thread")]
async fn the_three_jobs_plan_run_and_report_through_the_actions_step_script() {
    let project = Project::empty();
    let artifacts = planned_and_run(&project);

    // Job 3: report, against a GitHub stand-in, which lists the run's jobs: the legs
    // are checked against them.
    let server = MockServer::start().await;
    installation_token(&server).await;
    let jobs = vec![
        job("plan", &["ubuntu-latest"], 1),
        job("run (linux)", &["ubuntu-latest"], 1),
        job("run (arm)", &["self-hosted", "arm64"], 1),
    ];
    run_jobs(&server, 501, 1, jobs).await;
    comments_page(&server, 1, json!([])).await;
    accept_comment(&server).await;
    accept_check_run(&server, "", 2).await;
    let (artifacts, uri) = (artifacts.display().to_string(), server.uri());
    let inputs = vec![
        ("VERIFY_MATRIX_POST", "comment,check-run,summary"),
        ("VERIFY_MATRIX_ARTIFACTS", artifacts.as_str()),
        ("GITHUB_TOKEN", TOKEN),
        ("GITHUB_API_URL", uri.as_str()),
    ];
    let (project, outputs) = report_step(project, &inputs, 1).await;
    assert_eq!(output(&outputs, "verdict"), "NOT_VERIFIED");
    let report_path = PathBuf::from(output(&outputs, "report-path"));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(report["verdict"], "NOT_VERIFIED");

    let received = server.received_requests().await.unwrap();
    let posts: Vec<(String, Value)> = received
        .iter()
        .filter(|r| r.method.as_str() == "POST")
        .map(|r| {
            (
                r.url.path().to_owned(),
                serde_json::from_slice(&r.body).unwrap(),
            )
        })
        .collect();
    assert_eq!(posts.len(), 2, "{posts:#?}");
    let comment = posts[0].1["body"].as_str().unwrap();
    assert_eq!(posts[0].0, COMMENTS);
    for line in [
        "| unit | linux | 0 | PASS |",
        "| unit | arm | 0 | PASS |",
        "| arm-only | arm | 1 | FAIL |",
        "All Required Environments: NOT VERIFIED",
    ] {
        assert!(
            comment.contains(line),
            "{line:?} missing from the comment:\n{comment}"
        );
    }
    let check_run = &posts[1].1;
    assert_eq!(posts[1].0, "/repos/o/r/check-runs");
    assert_eq!(
        check_run["head_sha"], HEAD,
        "the PR's head, not the merge commit"
    );
    assert_eq!(check_run["conclusion"], "failure");
    assert_eq!(
        check_run["output"]["annotations"][0]["path"],
        "verify-matrix.yml"
    );
    let summary = project.read("runner/report/summary.md");
    assert!(
        summary.contains("| arm-only | arm | 1 | FAIL |"),
        "{summary}"
    );
}

/// The report step compares the pull request's manifest with the base branch's when
/// the workflow checked it out: a weakening fails unless the label allowed it, and a
/// base branch without a manifest is only a notice.
#[test]
fn the_report_step_compares_with_the_base_manifest() {
    let project = Project::empty();
    project.write(
        "checkout/verify-matrix.yml",
        "version: 1\nenvironments: [{ name: linux }]\nchecks:\n  \
         - { id: unit, run: 'exit 1', exit-code: 1 }\n",
    );
    project.write(
        "event.json",
        &json!({"pull_request": {"number": 12, "head": {"sha": HEAD}}}).to_string(),
    );
    let leg = step(
        &project,
        "run-linux",
        "run",
        &[("VERIFY_MATRIX_ENVIRONMENT", "linux".to_owned())],
        0,
    );
    let artifacts = project.path().join("artifacts");
    common::copy_dir(
        Path::new(output(&leg, "out")),
        &artifacts.join("verify-matrix-linux"),
    );
    // The leg is the run's job, as GitHub (a stand-in) lists it.
    let api = common::jobs_stand_in(&[("linux", &runner_name("run-linux"))]);
    let report = |base: bool, allow: &str, code: i32| {
        let inputs = [
            ("GITHUB_TOKEN", TOKEN.to_owned()),
            ("GITHUB_API_URL", api.clone()),
            ("VERIFY_MATRIX_POST", "summary".to_owned()),
            ("VERIFY_MATRIX_ARTIFACTS", artifacts.display().to_string()),
            (
                "VERIFY_MATRIX_BASE_MANIFEST",
                ".verify-matrix-base/verify-matrix.yml".to_owned(),
            ),
            ("VERIFY_MATRIX_ALLOW_WEAKENING", allow.to_owned()),
        ];
        if base {
            project.write(
                "checkout/.verify-matrix-base/verify-matrix.yml",
                "version: 1\nenvironments: [{ name: linux }]\nchecks:\n  - { id: unit, run: 'true' }\n",
            );
        }
        let outputs = step(&project, "report", "report", &inputs, code);
        output(&outputs, "verdict").to_owned()
    };
    assert_eq!(
        report(false, "false", 0),
        "VERIFIED",
        "no base manifest yet"
    );
    assert_eq!(
        report(true, "false", 1),
        "NOT_VERIFIED",
        "exit code 0 became 1"
    );
    assert_eq!(report(true, "true", 0), "VERIFIED", "allowed by the label");
    let summary = project.read("runner/report/summary.md");
    assert!(summary.contains("(weakens; allowed)"), "{summary}");
}

/// `history: true` in the fork-safe `workflow_run` recipe: no `GITHUB_BASE_REF`, so the
/// report step imports the default branch's runs (asked of the API) and compares with
/// the latest, then adds its own run to the file.
#[tokio::test(flavor = "multi_thread")]
async fn the_report_step_keeps_a_history_in_the_workflow_run_recipe() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};

    let project = Project::empty();
    project.write("checkout/verify-matrix.yml", MANIFEST);
    project.write(
        "event.json",
        &json!({"workflow_run": {"id": 501, "run_attempt": 1, "head_sha": HEAD, "pull_requests": []},
                "repository": {"full_name": "o/r", "default_branch": "main"}})
        .to_string(),
    );
    let artifacts = project.path().join("artifacts");
    for (env, code) in [("linux", 0), ("arm", 1)] {
        let inputs = [("VERIFY_MATRIX_ENVIRONMENT", env.to_owned())];
        let leg = step(&project, &format!("run-{env}"), "run", &inputs, code);
        let out = PathBuf::from(output(&leg, "out"));
        common::copy_dir(&out, &artifacts.join(format!("verify-matrix-{env}")));
    }
    // main's last run: a report of the same manifest, under another commit, zipped as
    // upload-artifact keeps it.
    let merged = project
        .std_cmd()
        .args(["merge", "--out", "base.json"])
        .arg(&artifacts)
        .output()
        .unwrap();
    assert!(project.path().join("base.json").exists(), "{merged:?}");
    let mut base = project.json("base.json");
    base["source"]["commit"] = "5".repeat(40).into();
    base["source"]["run_id"] = "400".into();
    base["source"]["event"] = "push".into();
    base["source"]["branch"] = "main".into();
    base["source"]["repository"] = "o/r".into();
    base["source"]["pr"] = Value::Null;
    project.write("base.json", &base.to_string());
    let zipped = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z: z.write(sys.argv[1], 'verify-matrix-report.json')",
        ])
        .arg(project.path().join("base.json"))
        .arg(project.path().join("base.zip"))
        .status()
        .unwrap();
    assert!(zipped.success());

    let server = MockServer::start().await;
    let serve = |p: &str, body: Value| {
        Mock::given(method("GET"))
            .and(path(p.to_owned()))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
    };
    serve("/repos/o/r", json!({"default_branch": "main"}))
        .mount(&server)
        .await;
    serve(
        "/repos/o/r/actions/runs",
        json!({"total_count": 1, "workflow_runs": [{"id": 400, "run_attempt": 1, "event": "push",
            "status": "completed", "conclusion": "failure",
            "head_branch": "main", "head_sha": "5".repeat(40), "updated_at": "2026-11-20T10:00:00Z"}]}),
    )
    .mount(&server)
    .await;
    serve(
        "/repos/o/r/actions/runs/400/artifacts",
        json!({"total_count": 1, "artifacts": [{"id": 9, "name": "verify-matrix_report",
            "size_in_bytes": 1000, "expired": false}]}),
    )
    .mount(&server)
    .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/actions/artifacts/9/zip"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_bytes(std::fs::read(project.path().join("base.zip")).unwrap()),
        )
        .mount(&server)
        .await;

    // The triggering run's jobs: the legs are checked against them.
    let jobs = vec![
        job("run (linux)", &["ubuntu-latest"], 1),
        job("run (arm)", &["self-hosted", "arm64"], 1),
    ];
    run_jobs(&server, 501, 1, jobs).await;
    let (artifacts, uri) = (artifacts.display().to_string(), server.uri());
    let inputs = vec![
        ("VERIFY_MATRIX_POST", "summary"),
        ("VERIFY_MATRIX_ARTIFACTS", artifacts.as_str()),
        ("VERIFY_MATRIX_HISTORY", "true"),
        ("GITHUB_EVENT_NAME", "workflow_run"),
        ("GITHUB_TOKEN", TOKEN),
        ("GITHUB_API_URL", uri.as_str()),
    ];
    let (project, outputs) = report_step(project, &inputs, 1).await;
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(output(&outputs, "report-path")).unwrap())
            .unwrap();
    assert_eq!(
        report["baseline"]["branch"], "main",
        "{:#}",
        report["baseline"]
    );
    assert_eq!(report["baseline"]["commit"], "5".repeat(40));
    assert_eq!(
        report["baseline"]["pre_existing"],
        json!([{"check": "arm-only", "environment": "arm"}])
    );
    let summary = project.read("runner/report/summary.md");
    assert!(
        summary.contains("Compared with main &#64;5555555"),
        "{summary}"
    );
    // main's run in the file the step keeps; this one, a fork's in the recipe, is not
    // added (the job runs on the default branch's ref).
    let db = rusqlite::Connection::open(
        project
            .path()
            .join("checkout/.verify-matrix/history.sqlite"),
    )
    .unwrap();
    let runs: i64 = db
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(runs, 1);
}

/// One way a leg's job is listed and its result edited, and what the report says.
struct Case {
    name: &'static str,
    jobs: Vec<Value>,
    edit: fn(&mut Value),
    expect: Expect,
}

enum Expect {
    /// The leg is taken from the job named for it.
    Taken,
    /// The leg is not taken, for this reason.
    Refused(&'static str),
    /// The report is refused (exit 4), for this reason.
    Error(&'static str),
}

/// A leg is a job that ran: the report reads the run's jobs from GitHub (a request
/// GitHub's OpenAPI description documents) and takes a leg's results only from a job
/// named for the leg that completed with success or failure, on the runner the result
/// records, in the run and attempt it records. A skipped job, one cancelled before it
/// had a runner, the `plan` job with the right labels, a result that records no runner
/// or no run: none of them is a leg.
#[tokio::test(flavor = "multi_thread")]
async fn a_leg_is_a_job_that_ran_it_under_its_name_on_its_runner() {
    let project = Project::empty();
    project.write("checkout/verify-matrix.yml", MANIFEST);
    project.write(
        "event.json",
        &json!({"pull_request": {"number": 12, "head": {"sha": HEAD}}}).to_string(),
    );
    let artifacts = project.path().join("artifacts");
    for (env, code) in [("linux", 0), ("arm", 1)] {
        let inputs = [("VERIFY_MATRIX_ENVIRONMENT", env.to_owned())];
        let leg = step(&project, &format!("run-{env}"), "run", &inputs, code);
        let out = PathBuf::from(output(&leg, "out"));
        common::copy_dir(&out, &artifacts.join(format!("verify-matrix-{env}")));
    }
    let linux_file = artifacts.join("verify-matrix-linux/verify-matrix-linux.json");
    let honest: Value =
        serde_json::from_str(&std::fs::read_to_string(&linux_file).unwrap()).unwrap();
    let arm = job("run (arm)", &["self-hosted", "arm64"], 1);
    let with = |name: &str, conclusion: &str, runner: Option<&str>| {
        let mut j = job(name, &["ubuntu-latest"], 1);
        j["conclusion"] = conclusion.into();
        j["runner_name"] = runner.map_or(Value::Null, Value::from);
        j
    };
    let linux_runner = "runner for run (linux)";
    let nothing = |_: &mut Value| {};
    let cases = vec![
        Case {
            name: "the job that ran it",
            jobs: vec![
                with("plan", "success", Some("runner for plan")),
                with("run (linux)", "success", Some(linux_runner)),
            ],
            edit: nothing,
            expect: Expect::Taken,
        },
        Case {
            name: "skipped",
            jobs: vec![
                with("plan", "success", Some("runner for plan")),
                with("run (linux)", "skipped", None),
            ],
            edit: nothing,
            expect: Expect::Refused(
                "none named for linux, labelled ubuntu-latest completed with success or failure on runner `runner for run (linux)`",
            ),
        },
        Case {
            name: "cancelled before a runner",
            jobs: vec![with("run (linux)", "cancelled", None)],
            edit: nothing,
            expect: Expect::Refused("run (linux) [ubuntu-latest] cancelled on no runner"),
        },
        Case {
            name: "neutral",
            jobs: vec![with("run (linux)", "neutral", Some(linux_runner))],
            edit: nothing,
            expect: Expect::Refused(
                "run (linux) [ubuntu-latest] neutral on runner for run (linux)",
            ),
        },
        Case {
            name: "only the plan job ran on its runner",
            jobs: vec![
                with("plan", "success", Some(linux_runner)),
                with("run (linux)", "skipped", None),
            ],
            edit: nothing,
            expect: Expect::Refused("none named for linux"),
        },
        Case {
            name: "another leg's job",
            jobs: vec![with("run (windows)", "success", Some(linux_runner))],
            edit: nothing,
            expect: Expect::Refused("none named for linux"),
        },
        Case {
            name: "no runner recorded",
            jobs: vec![with("run (linux)", "success", Some(linux_runner))],
            edit: |r| {
                r["runner"]["actions"]
                    .as_object_mut()
                    .unwrap()
                    .remove("name");
            },
            expect: Expect::Refused("do not record its runner's name"),
        },
        Case {
            name: "no attempt recorded",
            jobs: vec![with("run (linux)", "success", Some(linux_runner))],
            edit: |r| {
                r["source"].as_object_mut().unwrap().remove("run_attempt");
            },
            expect: Expect::Refused("do not record its attempt"),
        },
        // Beside results that record their run, one that records none is not of it.
        Case {
            name: "no run recorded",
            jobs: vec![with("run (linux)", "success", Some(linux_runner))],
            edit: |r| {
                r["source"].as_object_mut().unwrap().remove("run_id");
            },
            expect: Expect::Error("the results come from different workflow runs"),
        },
    ];
    let mut project = project;
    for Case {
        name: case,
        jobs: listed,
        edit,
        expect,
    } in cases
    {
        let mut result = honest.clone();
        edit(&mut result);
        std::fs::write(&linux_file, result.to_string()).unwrap();
        let server = MockServer::start().await;
        let mut jobs = listed;
        jobs.push(arm.clone());
        run_jobs(&server, 501, 1, jobs).await;
        let (dir, uri) = (artifacts.display().to_string(), server.uri());
        let inputs = vec![
            ("VERIFY_MATRIX_POST", "summary"),
            ("VERIFY_MATRIX_ARTIFACTS", dir.as_str()),
            ("GITHUB_TOKEN", TOKEN),
            ("GITHUB_API_URL", uri.as_str()),
        ];
        // arm fails either way (exit 1); a linux leg not taken leaves it missing, and a
        // missing pair and a failure read 1 too: the places say which.
        let code = if matches!(expect, Expect::Error(_)) {
            4
        } else {
            1
        };
        let (back, outputs) = report_step(project, &inputs, code).await;
        project = back;
        if let Expect::Error(why) = expect {
            let stderr = project.read("runner/report/stderr");
            assert!(stderr.contains(why), "{case}: {stderr}");
            continue;
        }
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(output(&outputs, "report-path")).unwrap(),
        )
        .unwrap();
        assert_eq!(report["verdict"], "NOT_VERIFIED", "{case}");
        let linux = report["places"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["environment"] == "linux")
            .unwrap_or_else(|| panic!("{case}: no place for linux: {report:#}"));
        let tested = report["environments_tested"].as_array().unwrap();
        match expect {
            Expect::Taken => {
                assert_eq!(linux["job"], "run (linux)", "{case}");
                assert_eq!(linux["mismatch"], Value::Null, "{case}");
                assert!(tested.contains(&json!("linux")), "{case}");
            }
            Expect::Refused(why) => {
                let mismatch = linux["mismatch"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{case}: taken: {linux:#}"));
                assert!(mismatch.contains(why), "{case}: {mismatch}");
                assert!(!tested.contains(&json!("linux")), "{case}");
            }
            Expect::Error(_) => unreachable!(),
        }
        for r in server.received_requests().await.unwrap() {
            openapi::check_request(r.method.as_str(), r.url.path(), r.url.query(), &Value::Null);
        }
    }
}

/// A trial (`fail-on: never`) in a job without `checks: write`: the step stays green
/// while the verdict, its outputs and the comment say NOT VERIFIED; the check run GitHub
/// refused (403) is said once and its annotations are written as the step's own;
/// later steps get the counts, the conclusion, the comment's address and the verdict's
/// JSON. Under the default, the same report fails the step.
#[tokio::test(flavor = "multi_thread")]
async fn a_trial_without_checks_write_publishes_annotates_and_stays_green() {
    let project = Project::empty();
    let artifacts = planned_and_run(&project);
    let server = MockServer::start().await;
    installation_token(&server).await;
    run_jobs(
        &server,
        501,
        1,
        vec![
            job("plan", &["ubuntu-latest"], 1),
            job("run (linux)", &["ubuntu-latest"], 1),
            job("run (arm)", &["self-hosted", "arm64"], 1),
        ],
    )
    .await;
    comments_page(&server, 1, json!([])).await;
    accept_comment(&server).await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/repos/o/r/check-runs"))
        .respond_with(
            wiremock::ResponseTemplate::new(403)
                .set_body_json(json!({"message": "Resource not accessible by integration"})),
        )
        .mount(&server)
        .await;
    let (artifacts, uri) = (artifacts.display().to_string(), server.uri());
    let inputs = vec![
        ("VERIFY_MATRIX_POST", "comment,check-run,summary"),
        ("VERIFY_MATRIX_ARTIFACTS", artifacts.as_str()),
        ("VERIFY_MATRIX_FAIL_ON", "never"),
        ("GITHUB_TOKEN", TOKEN),
        ("GITHUB_API_URL", uri.as_str()),
    ];
    let (project, outputs) = report_step(project, &inputs, 0).await;
    assert_eq!(output(&outputs, "verdict"), "NOT_VERIFIED");
    assert_eq!(output(&outputs, "conclusion"), "failure");
    assert_eq!(output(&outputs, "pairs-passed"), "2");
    assert_eq!(output(&outputs, "pairs-failed"), "1");
    assert_eq!(output(&outputs, "pairs-missing"), "0");
    assert_eq!(
        output(&outputs, "comment-url"),
        "https://github.com/o/r/pull/12#issuecomment-900"
    );
    assert!(
        outputs.iter().all(|(k, _)| k != "check-run-url"),
        "{outputs:?}"
    );
    assert!(output(&outputs, "summary-path").ends_with("summary.md"));
    let verdict: Value = serde_json::from_str(output(&outputs, "json")).unwrap();
    assert_eq!(verdict["verdict"], "NOT_VERIFIED");
    assert_eq!(
        verdict["pairs"],
        json!({"passed": 2, "failed": 1, "missing": 0})
    );
    assert!(
        verdict["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("arm-only failed in arm"),
        "{verdict}"
    );
    let runner = project.path().join("runner/report");
    let stderr = std::fs::read_to_string(runner.join("stderr")).unwrap();
    assert!(
        stderr.contains("note: --fail-on never: NOT VERIFIED (a required check failed), exit 1 taken as 0; the verdict stands"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("GitHub refused the token").count(),
        1,
        "{stderr}"
    );
    let stdout = std::fs::read_to_string(runner.join("stdout")).unwrap();
    assert!(
        stdout.contains("::error file=verify-matrix.yml,line="),
        "the refused check run's annotations, as the step's own:\n{stdout}"
    );
    // The same report under the default fails the step; `failures` too (a check failed).
    let mut project = project;
    for fail_on in ["not-verified", "failures"] {
        let inputs = vec![
            ("VERIFY_MATRIX_POST", "summary"),
            ("VERIFY_MATRIX_ARTIFACTS", artifacts.as_str()),
            ("VERIFY_MATRIX_FAIL_ON", fail_on),
            ("GITHUB_TOKEN", TOKEN),
            ("GITHUB_API_URL", uri.as_str()),
        ];
        project = report_step(project, &inputs, 1).await.0;
    }
}

/// A peer reporter's workflow switched to this Action by replacing only its reporter
/// step: each leg's pytest JUnit file, downloaded into its artifact's folder, is read
/// through the step script's `files` and `environments` inputs; the leg that never
/// uploaded is `no result`; the step's outputs count the tests.
#[tokio::test(flavor = "multi_thread")]
async fn the_report_step_reads_the_junit_files_a_workflow_already_makes() {
    let project = Project::empty();
    project.write("checkout/.keep", "");
    project.write(
        "event.json",
        &json!({"pull_request": {"number": 12, "head": {"sha": HEAD}}}).to_string(),
    );
    let junit = |failures: u32| {
        format!(
            r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="{failures}" skipped="0" tests="2" time="0.01"><testcase classname="tests.test_calc" name="test_adds" time="0.001" /><testcase classname="tests.test_calc" name="test_leg" time="0.001">{}</testcase></testsuite></testsuites>"#,
            if failures > 0 {
                r#"<failure message="AssertionError: fails on 3.12">tests/test_calc.py:9: AssertionError</failure>"#
            } else {
                ""
            }
        )
    };
    project.write("checkout/reports/junit-py310/junit.xml", &junit(0));
    project.write("checkout/reports/junit-py311/junit.xml", &junit(0));
    let inputs = |expected: &str| {
        vec![
            ("VERIFY_MATRIX_POST", "summary".to_owned()),
            ("VERIFY_MATRIX_ARTIFACTS", "/nonexistent".to_owned()),
            (
                "VERIFY_MATRIX_FILES",
                "reports/junit-{environment}/*.xml\n!reports/**/skip-*.xml\n".to_owned(),
            ),
            ("VERIFY_MATRIX_ENVIRONMENTS", expected.to_owned()),
        ]
    };
    let outputs = step(&project, "report", "report", &inputs("py310\npy311\n"), 0);
    assert_eq!(output(&outputs, "verdict"), "VERIFIED");
    // The list as a JSON array (`${{ toJSON(…) }}` of the matrix's legs) reads the same.
    let outputs = step(
        &project,
        "report",
        "report",
        &inputs(r#"["py310", "py311"]"#),
        0,
    );
    assert_eq!(output(&outputs, "verdict"), "VERIFIED");
    assert_eq!(output(&outputs, "tests"), "4");
    assert_eq!(output(&outputs, "passed"), "4");
    // The leg that failed uploaded its file; the one that was cancelled did not.
    project.write("checkout/reports/junit-py312/junit.xml", &junit(1));
    let outputs = step(
        &project,
        "report",
        "report",
        &inputs("py310, py311, py312, py313"),
        1,
    );
    assert_eq!(output(&outputs, "verdict"), "NOT_VERIFIED");
    assert_eq!(output(&outputs, "failed"), "1");
    assert_eq!(output(&outputs, "pairs-missing"), "1");
    let summary = std::fs::read_to_string(project.path().join("runner/report/summary.md")).unwrap();
    assert!(
        summary.contains("| tests | ✅ 2 | ✅ 2 | ❌ 1 of 2 | ⚠️ no result |"),
        "{summary}"
    );
    assert!(summary.contains("tests.test_calc › test_leg"), "{summary}");

    // The legs expected from the run's own jobs, as GitHub lists them: the leg that was
    // cancelled (`test (py313)`) is expected though it left no file.
    let server = MockServer::start().await;
    let jobs = vec![
        job("plan", &["ubuntu-latest"], 1),
        job("test (py310)", &["ubuntu-latest"], 1),
        job("test (py311)", &["ubuntu-latest"], 1),
        job("test (py312)", &["ubuntu-latest"], 1),
        json!({"name": "test (py313)", "status": "completed", "conclusion": "cancelled",
               "labels": ["ubuntu-latest"], "run_attempt": 1}),
        job("report", &["ubuntu-latest"], 1),
    ];
    run_jobs(&server, 501, 1, jobs).await;
    let mut from_jobs = inputs("");
    from_jobs.push(("VERIFY_MATRIX_ENVIRONMENTS_FROM_JOB", "test".to_owned()));
    from_jobs.push(("GITHUB_TOKEN", TOKEN.to_owned()));
    from_jobs.push(("GITHUB_API_URL", server.uri()));
    let outputs = step(&project, "report", "report", &from_jobs, 1);
    assert_eq!(output(&outputs, "pairs-passed"), "2");
    assert_eq!(output(&outputs, "pairs-failed"), "1");
    assert_eq!(output(&outputs, "pairs-missing"), "1");
    let summary = std::fs::read_to_string(project.path().join("runner/report/summary.md")).unwrap();
    assert!(
        summary.contains("| Check | py310 | py311 | py312 | py313 |"),
        "{summary}"
    );
    // A job name that is no leg's: no verdict, with the jobs GitHub listed.
    from_jobs.retain(|(k, _)| *k != "VERIFY_MATRIX_ENVIRONMENTS_FROM_JOB");
    from_jobs.push(("VERIFY_MATRIX_ENVIRONMENTS_FROM_JOB", "unit".to_owned()));
    let outputs = step(&project, "report", "report", &from_jobs, 4);
    assert_eq!(output(&outputs, "verdict"), "NOT_VERIFIED");

    // The plan job's `matrix` output names the legs too.
    std::fs::remove_dir_all(project.path().join("checkout/reports/junit-py312")).unwrap();
    let plan = r#"{"include":[{"environment":"py310","runs-on":"ubuntu-latest"},
        {"environment":"py311","runs-on":"ubuntu-latest"}]}"#;
    let outputs = step(&project, "report", "report", &inputs(plan), 0);
    assert_eq!(output(&outputs, "verdict"), "VERIFIED");
    assert_eq!(output(&outputs, "pairs-passed"), "2");
}

/// The run's jobs are read whole, whatever `total_count` says: a leg on the second page
/// is expected though the first page claims to be all of them; a listing with an entry
/// that is no job gives no list at all (no verdict), never one leg fewer.
#[tokio::test(flavor = "multi_thread")]
async fn the_legs_expected_from_the_jobs_are_read_from_every_page_or_not_at_all() {
    use wiremock::matchers::{method, path, query_param};
    use wiremock::{Mock, ResponseTemplate};
    let project = Project::empty();
    project.write("checkout/.keep", "");
    project.write(
        "event.json",
        &json!({"pull_request": {"number": 12, "head": {"sha": HEAD}}}).to_string(),
    );
    let passing = r#"<testsuite name="s" tests="1"><testcase classname="c" name="t"/></testsuite>"#;
    project.write("checkout/reports/junit-e0/junit.xml", passing);
    project.write("checkout/reports/junit-e1/junit.xml", passing);
    let server = MockServer::start().await;
    let first: Vec<Value> = (0..100)
        .map(|i| job(&format!("build (x{i})"), &["ubuntu-latest"], 1))
        .collect();
    let second = vec![
        job("test (e0)", &["ubuntu-latest"], 1),
        job("test (e1)", &["ubuntu-latest"], 1),
        job("test (e2)", &["ubuntu-latest"], 1),
    ];
    let jobs_path = "/repos/o/r/actions/runs/501/attempts/1/jobs";
    for (page, jobs) in [("1", first), ("2", second)] {
        Mock::given(method("GET"))
            .and(path(jobs_path))
            .and(query_param("page", page))
            // `total_count` claims the first page is all there is.
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"total_count": 100, "jobs": jobs})),
            )
            .mount(&server)
            .await;
    }
    let inputs = |uri: &str| {
        vec![
            ("VERIFY_MATRIX_POST", "summary".to_owned()),
            ("VERIFY_MATRIX_ARTIFACTS", "/nonexistent".to_owned()),
            (
                "VERIFY_MATRIX_FILES",
                "reports/junit-{environment}/*.xml".to_owned(),
            ),
            ("VERIFY_MATRIX_ENVIRONMENTS_FROM_JOB", "test".to_owned()),
            ("GITHUB_TOKEN", TOKEN.to_owned()),
            ("GITHUB_API_URL", uri.to_owned()),
        ]
    };
    let outputs = step(&project, "report", "report", &inputs(&server.uri()), 3);
    assert_eq!(output(&outputs, "verdict"), "NOT_VERIFIED");
    assert_eq!(output(&outputs, "pairs-passed"), "2");
    assert_eq!(output(&outputs, "pairs-missing"), "1");

    // An entry that is no job (its name is not text): no list, no verdict.
    let broken = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(jobs_path))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "total_count": 3,
            "jobs": [job("test (e0)", &["ubuntu-latest"], 1), job("test (e1)", &["ubuntu-latest"], 1),
                     {"name": ["test (e2)"], "status": "completed"}]
        })))
        .mount(&broken)
        .await;
    let outputs = step(&project, "report", "report", &inputs(&broken.uri()), 4);
    assert_eq!(output(&outputs, "verdict"), "NOT_VERIFIED");
    let summary = std::fs::read_to_string(project.path().join("runner/report/summary.md")).unwrap();
    assert!(summary.contains("not a job"), "{summary}");
}
