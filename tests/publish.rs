//! `publish` and `report` to the job summary and step outputs, with the files GitHub
//! Actions provides stood in for by temp files.

mod common;

use common::Project;
use predicates::prelude::*;

const MANIFEST: &str = "version: 1
environments: [{name: a}, {name: b}]
checks:
  - { id: unit, run: 'echo \"unit in $VERIFY_MATRIX_ENV\"; test \"$VERIFY_MATRIX_ENV\" != b' }
";

/// Each environment run as a leg of workflow run 77 (its runner `runner ENV`), its
/// results in `artifacts/`.
fn artifacts() -> Project {
    let project = Project::new(MANIFEST);
    for env in ["a", "b"] {
        project
            .std_cmd()
            .args([
                "run",
                "--env",
                env,
                "--out",
                &format!("artifacts/verify-matrix-{env}"),
            ])
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_RUN_ID", "77")
            .env("GITHUB_RUN_ATTEMPT", "1")
            .env("RUNNER_NAME", format!("runner {env}"))
            .output()
            .unwrap();
    }
    project
}

/// The artifacts merged into `report.json`.
fn merged() -> Project {
    let project = artifacts();
    project
        .cmd()
        .args(["merge", "--out", "report.json", "artifacts"])
        .assert()
        .code(1);
    project
}

#[test]
fn report_merges_renders_and_publishes_the_summary_and_outputs() {
    let project = artifacts();
    let summary = project.write("summary.md", "# Earlier step\n\n");
    let output = project.write("output.txt", "");
    project
        .cmd()
        .args(["report", "artifacts"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_SERVER_URL", "https://ghe.example")
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_RUN_ID", "77")
        // The legs are the run's jobs, as GitHub (a stand-in) lists them.
        .env("GITHUB_TOKEN", "ghs_test")
        .env(
            "GITHUB_API_URL",
            common::jobs_stand_in(&[("a", "runner a"), ("b", "runner b")]),
        )
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "All Required Environments: NOT VERIFIED",
        ))
        .stderr(predicate::str::contains("published: job summary"));
    let written = project.read("summary.md");
    assert!(
        written.starts_with("# Earlier step\n\n<!-- cargo-verify-matrix:verify-matrix.yml -->\n"),
        "{written}"
    );
    assert!(written.contains("\n| unit | b | 1 | FAIL |\n"), "{written}");
    assert!(
        written.contains("unit in b"),
        "the failure's log tail: {written}"
    );
    let outputs = project.read("output.txt");
    assert!(
        outputs.starts_with(&format!(
            "verdict=NOT_VERIFIED\nreport=verify-matrix-report.json\nconclusion=failure\n\
             tests=0\npassed=0\nfailed=0\nskipped=0\nflaky=0\n\
             pairs-passed=1\npairs-failed=1\npairs-missing=0\nsummary-path={}\njson={{",
            summary.display()
        )),
        "{outputs}"
    );
    let report = project.json("verify-matrix-report.json");
    assert_eq!(report["verdict"], "NOT_VERIFIED");
}

#[test]
fn the_summary_shares_githubs_1_mib_with_earlier_steps() {
    let project = merged();
    let limit = 1024 * 1024;
    let earlier = "x".repeat(limit - 450) + "\n";
    let summary = project.write("summary.md", &earlier);
    project
        .cmd()
        .args([
            "publish",
            "--link",
            "https://ci.example/run/1",
            "report.json",
        ])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .assert()
        .code(1);
    let written = project.read("summary.md");
    assert!(written.len() <= limit, "{} bytes", written.len());
    let ours = &written[earlier.len()..];
    assert!(ours.contains("Cut to fit"), "{ours}");
    assert!(
        ours.contains("Full report: https://ci.example/run/1"),
        "{ours}"
    );
    assert!(
        ours.contains("All Required Environments: NOT VERIFIED\n"),
        "{ours}"
    );
}

#[test]
fn dry_run_prints_exactly_what_would_be_written_and_writes_nothing() {
    let project = merged();
    let out = project
        .cmd()
        .args(["publish", "--dry-run", "--to", "summary", "report.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the verdict's code");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let markdown = project
        .cmd()
        .args(["render", "report.json"])
        .output()
        .unwrap()
        .stdout;
    let markdown = String::from_utf8(markdown).unwrap();
    let outputs = [
        "verdict=NOT_VERIFIED",
        "report=report.json",
        "conclusion=failure",
        "tests=0",
        "passed=0",
        "failed=0",
        "skipped=0",
        "flaky=0",
        "pairs-passed=1",
        "pairs-failed=1",
        "pairs-missing=0",
    ]
    .map(|o| format!("=== step output: {o}\n"))
    .concat();
    let (written, json) = stdout
        .rsplit_once("=== step output: json=")
        .unwrap_or_else(|| panic!("no json output: {stdout}"));
    assert_eq!(
        written,
        format!(
            "=== job summary: append {} bytes to $GITHUB_STEP_SUMMARY\n{markdown}{outputs}",
            markdown.len()
        )
    );
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(json["verdict"], "NOT_VERIFIED");
    assert_eq!(json["reasons"][0], "unit failed in b (exit 1)");
    assert!(!project.path().join("$GITHUB_STEP_SUMMARY").exists());
}

#[test]
fn without_a_summary_file_publishing_is_a_usage_error_and_write_failures_exit_5() {
    let project = merged();
    project
        .cmd()
        .args(["publish", "report.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "$GITHUB_STEP_SUMMARY is not set, so there is no job summary to write to",
        ));
    std::fs::create_dir(project.path().join("a-folder")).unwrap();
    project
        .cmd()
        .args(["publish", "report.json"])
        .env("GITHUB_STEP_SUMMARY", project.path().join("a-folder"))
        .assert()
        .code(5)
        .stderr(predicate::str::contains("failed to write the job summary"));
}

/// `--fail-on`: which verdicts fail the step. `failures` lets missing results through
/// and still fails on a failed check; `never` lets everything through; each says what
/// it let through, and the verdict stays NOT VERIFIED.
#[test]
fn fail_on_decides_the_steps_exit_code_never_the_verdict() {
    let project = Project::new(MANIFEST);
    // Only `a` ran: coverage is incomplete, nothing failed.
    project
        .std_cmd()
        .args(["run", "--env", "a", "--out", "artifacts/a"])
        .output()
        .unwrap();
    let report = |fail_on: &str| {
        project
            .std_cmd()
            .args(["report", "--dry-run", "--fail-on", fail_on, "artifacts"])
            .output()
            .unwrap()
    };
    for (fail_on, code) in [("not-verified", 3), ("failures", 0), ("never", 0)] {
        let out = report(fail_on);
        assert_eq!(out.status.code(), Some(code), "{fail_on}: {out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("All Required Environments: NOT VERIFIED"),
            "{stdout}"
        );
        assert!(
            stdout.contains("=== step output: verdict=NOT_VERIFIED"),
            "{stdout}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.contains(&format!(
                "note: --fail-on {fail_on}: NOT VERIFIED (results missing), exit 3 taken as 0"
            )),
            code == 0,
            "{stderr}"
        );
    }
    // `b` ran and failed: only `never` lets it through.
    project
        .std_cmd()
        .args(["run", "--env", "b", "--out", "artifacts/b"])
        .output()
        .unwrap();
    for (fail_on, code) in [("not-verified", 1), ("failures", 1), ("never", 0)] {
        assert_eq!(report(fail_on).status.code(), Some(code), "{fail_on}");
    }
    // A value the flag does not know is a usage error naming the values.
    let out = report("sometimes");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not-verified, failures, never"),
        "{out:?}"
    );
}
