//! The verdict through a pull request's life: re-runs of a workflow (later attempts of
//! the same run) and partial runs.

mod common;

use common::Project;
use serde_json::Value;

const MANIFEST: &str = "version: 1
environments: [{ name: a }, { name: b }]
checks:
  - { id: unit, run: 'test \"$(cat outcome-$VERIFY_MATRIX_ENV 2>/dev/null)\" != fail' }
";

/// Runs `env` as a matrix leg of workflow run 77, attempt `attempt`, into `out`, on
/// the runner `runner ENV` (the jobs stand-in lists it so).
fn leg(project: &Project, env: &str, attempt: u32, out: &str) -> i32 {
    project
        .std_cmd()
        .args(["run", "--env", env, "--out", out])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_RUN_ID", "77")
        .env("GITHUB_RUN_ATTEMPT", attempt.to_string())
        .env("RUNNER_NAME", format!("runner {env}"))
        .env("GITHUB_SHA", "1111111111111111111111111111111111111111")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .code()
        .unwrap()
}

fn merge(project: &Project, attempt: Option<u32>) -> (i32, String, String) {
    let mut cmd = project.std_cmd();
    cmd.args([
        "merge",
        "--format",
        "markdown",
        "--out",
        "report.json",
        "artifacts",
    ]);
    if let Some(attempt) = attempt {
        // Under Actions the legs are the run's jobs: GitHub (a stand-in) lists them.
        let api = common::jobs_stand_in(&[("a", "runner a"), ("b", "runner b")]);
        cmd.env("GITHUB_ACTIONS", "true")
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_RUN_ID", "77")
            .env("GITHUB_RUN_ATTEMPT", attempt.to_string())
            .env("GITHUB_TOKEN", "ghs_test")
            .env("GITHUB_API_URL", api);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// "Re-run failed jobs": b fails on attempt 1 and passes on attempt 2. Both files are
/// at hand (as when attempts are downloaded side by side): the latest attempt is the
/// result, attempt 1's failure is no disagreement, and the report says it was a re-run.
#[test]
fn the_latest_attempt_of_an_environment_is_its_result() {
    let project = Project::new(MANIFEST);
    project.write("outcome-b", "fail");
    assert_eq!(leg(&project, "a", 1, "artifacts/verify-matrix-a"), 0);
    assert_eq!(
        leg(&project, "b", 1, "artifacts/verify-matrix-b-attempt-1"),
        1
    );
    project.write("outcome-b", "pass");
    assert_eq!(leg(&project, "b", 2, "artifacts/verify-matrix-b"), 0);

    let (code, markdown, stderr) = merge(&project, Some(2));
    assert_eq!(code, 0, "{markdown}{stderr}");
    assert!(
        markdown.contains("All Required Environments: VERIFIED"),
        "{markdown}"
    );
    assert!(markdown.contains("| unit | b | 0 | PASS |"), "{markdown}");
    assert!(
        markdown.contains("Re-run: the results of b (attempt 2) come from a re-run."),
        "{markdown}"
    );
    assert!(
        stderr.contains("note: ignored `artifacts/verify-matrix-b-attempt-1/verify-matrix-b.json`: an earlier attempt of environment `b` (attempt 1) than the latest (attempt 2)"),
        "{stderr}"
    );
    let report: Value = project.json("report.json");
    assert_eq!(report["attempts"], serde_json::json!({"a": 1, "b": 2}));
    assert_eq!(report["disagreements"], serde_json::json!([]));
}

/// Inside run 77 at attempt 1, a file claiming attempt 2 was not written by this run
/// (another leg's code could add one to its artifact): refused. Results of one
/// environment from two runs cannot be ordered: refused.
#[test]
fn attempts_that_cannot_be_ordered_are_refused() {
    let project = Project::new(MANIFEST);
    assert_eq!(leg(&project, "a", 1, "artifacts/verify-matrix-a"), 0);
    assert_eq!(leg(&project, "b", 2, "artifacts/verify-matrix-b"), 0);
    let (code, _, stderr) = merge(&project, Some(1));
    assert_eq!(code, 4, "{stderr}");
    assert_eq!(
        stderr,
        "error: `artifacts/verify-matrix-b/verify-matrix-b.json` claims attempt 2 of this workflow run, which is at attempt 1\n"
    );

    let other = project.path().join("artifacts/other/verify-matrix-b.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    let mut result: Value = project.json("artifacts/verify-matrix-b/verify-matrix-b.json");
    result["source"]["run_id"] = "78".into();
    std::fs::write(&other, result.to_string()).unwrap();
    let (code, _, stderr) = merge(&project, None);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.starts_with(
            "error: the results of environment `b` come from different workflow runs:\n"
        ),
        "{stderr}"
    );
}

/// Two files of the same attempt for one environment are not ordered by time: a run
/// writes one, so a second that disagrees is a conflict (FAIL), never the "latest".
#[test]
fn a_second_file_of_the_same_attempt_is_a_conflict_not_a_newer_result() {
    let project = Project::new(MANIFEST);
    project.write("outcome-b", "fail");
    assert_eq!(leg(&project, "a", 1, "artifacts/verify-matrix-a"), 0);
    assert_eq!(leg(&project, "b", 1, "artifacts/verify-matrix-b"), 1);
    let mut forged: Value = project.json("artifacts/verify-matrix-b/verify-matrix-b.json");
    forged["finished_at"] = "2099-01-01T00:00:00Z".into();
    forged["checks"][0]["status"] = "PASS".into();
    forged["checks"][0]["exit_code"] = 0.into();
    project.write(
        "artifacts/verify-matrix-a/verify-matrix-b.json",
        &forged.to_string(),
    );
    let (code, markdown, _) = merge(&project, Some(1));
    assert_eq!(code, 1, "{markdown}");
    assert!(
        markdown.contains("- unit in b: conflicting results reported"),
        "{markdown}"
    );
}
