//! `merge` and `render` over real partial results laid out as artifact downloads.
//! Adversarial inputs are in tests/adversarial.rs.

mod common;

use common::Project;
use predicates::prelude::*;
use serde_json::Value;

const MANIFEST: &str = "version: 1\nenvironments: [{name: a}, {name: b}, {name: c}]\nchecks:\n  - { id: everywhere, run: 'echo fine' }\n  - { id: not_in_b, run: 'echo \"failing in $VERIFY_MATRIX_ENV\"; test \"$VERIFY_MATRIX_ENV\" != b' }\n";

/// Runs environments `a` and `b` into their own artifact folders, as matrix jobs do.
fn artifacts() -> Project {
    let project = Project::new(MANIFEST);
    for env in ["a", "b"] {
        project.run_env(env, &format!("artifacts/verify-matrix-{env}"));
    }
    project
}

fn report(project: &Project, path: &str) -> Value {
    project.json(path)
}

#[test]
fn three_environments_one_failing_one_missing_merged_and_rendered() {
    let project = artifacts();
    project
        .cmd()
        .args(["merge", "--out", "report.json", "artifacts"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "All Required Environments: NOT VERIFIED",
        ));
    let r = report(&project, "report.json");
    assert_eq!(r["verdict"], "NOT_VERIFIED");
    assert_eq!(r["environments"], serde_json::json!(["a", "b", "c"]));
    assert_eq!(r["environments_tested"], serde_json::json!(["a", "b"]));
    assert_eq!(
        r["infra_blocked"],
        serde_json::json!([{"environment": "c", "checks": ["everywhere", "not_in_b"]}])
    );
    assert_eq!(
        r["disagreements"],
        serde_json::json!([{"check": "not_in_b", "passed_in": ["a"], "failed_in": ["b"]}])
    );
    assert_eq!(
        r["reasons"],
        serde_json::json!(["not_in_b failed in b (exit 1)", "c: no results"])
    );
    let rows: Vec<(String, String, String)> = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["check"].as_str().unwrap().into(),
                row["environment"].as_str().unwrap().into(),
                row["result"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("everywhere".into(), "a".into(), "PASS".into()),
            ("everywhere".into(), "b".into(), "PASS".into()),
            ("not_in_b".into(), "a".into(), "PASS".into()),
            ("not_in_b".into(), "b".into(), "FAIL".into()),
        ]
    );
    // Log paths now point from the report's folder into the artifact they came from.
    let log = r["rows"][3]["detail"]["log_path"].as_str().unwrap();
    assert_eq!(log, "artifacts/verify-matrix-b/logs/b/not_in_b.log");

    let md = project
        .cmd()
        .args(["render", "--format", "markdown", "report.json"])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.contains("| not_in_b | b | 1 | FAIL |\n"), "{md}");
    assert!(md.contains("INFRA_BLOCKED: "), "{md}");
    assert!(md.contains("Issue: Environment 'c' unavailable"), "{md}");
    assert!(md.contains("failing in b"), "the failure's log tail: {md}");
    assert!(
        md.contains("Environments Tested: a, b\nAll Required Environments: NOT VERIFIED\n"),
        "{md}"
    );
}

#[test]
fn every_artifact_layout_gives_the_same_report() {
    let project = artifacts();
    // merge-multiple: everything in one folder.
    let flat = project.path().join("flat");
    std::fs::create_dir_all(&flat).unwrap();
    for env in ["a", "b"] {
        common::copy_dir(
            &project
                .path()
                .join(format!("artifacts/verify-matrix-{env}")),
            &flat,
        );
    }
    project
        .cmd()
        .args(["merge", "--out", "nested.json", "artifacts"])
        .assert()
        .code(1);
    project
        .cmd()
        .args(["merge", "--out", "flat.json", "flat"])
        .assert()
        .code(1);
    project
        .cmd()
        .args([
            "merge",
            "--out",
            "files.json",
            "artifacts/verify-matrix-a/verify-matrix-a.json",
            "artifacts/verify-matrix-b",
        ])
        .assert()
        .code(1);
    let strip = |mut v: Value| {
        for row in v["rows"].as_array_mut().unwrap() {
            row["detail"]["log_path"] = Value::Null;
        }
        v
    };
    let nested = strip(report(&project, "nested.json"));
    assert_eq!(nested, strip(report(&project, "flat.json")));
    assert_eq!(nested, strip(report(&project, "files.json")));
}

#[test]
fn all_environments_passing_is_verified_and_exit_0() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: a}, {name: b}]\nchecks: [{id: ok, run: 'true'}]\n",
    );
    for env in ["a", "b"] {
        assert_eq!(project.run_env(env, &format!("art/{env}")), 0);
    }
    project
        .cmd()
        .args(["merge", "art"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "All Required Environments: VERIFIED",
        ));
}

#[test]
fn only_missing_environments_is_exit_3() {
    let project = artifacts();
    std::fs::remove_dir_all(project.path().join("artifacts/verify-matrix-b")).unwrap();
    // a passes everything; b and c are missing.
    project.cmd().args(["merge", "artifacts"]).assert().code(3);
}

#[test]
fn identical_duplicates_count_once() {
    let project = artifacts();
    common::copy_dir(
        &project.path().join("artifacts/verify-matrix-a"),
        &project.path().join("artifacts/retry-a"),
    );
    project
        .cmd()
        .args(["merge", "--out", "same.json", "artifacts"])
        .assert()
        .code(1);
    let same = report(&project, "same.json");
    assert_eq!(
        same["rows"].as_array().unwrap().len(),
        4,
        "identical duplicates: one row each"
    );
}

#[test]
fn other_json_files_are_skipped_with_a_note() {
    let project = artifacts();
    project.write("artifacts/package.json", "{\"name\": \"x\"}");
    project
        .cmd()
        .args(["merge", "artifacts"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "note: skipped `artifacts/package.json`: not a cargo-verify-matrix partial result",
        ));
    project
        .cmd()
        .args(["merge", "nothing-here"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("does not exist"));
}

/// Symbolic links are never followed, wherever they sit in the folders walked: a link
/// to a folder or to a result outside is noted and passed over. (Unix: making a link
/// on Windows needs a privilege a test cannot count on.)
#[cfg(unix)]
#[test]
fn links_in_the_folder_walked_are_not_followed() {
    let project = Project::new(MANIFEST);
    project.run_env("a", "artifacts/verify-matrix-a");
    project.run_env("b", "outside/verify-matrix-b");
    let link = |target: &str, at: &str| {
        std::os::unix::fs::symlink(target, project.path().join(at)).unwrap();
    };
    link("../outside", "artifacts/elsewhere");
    link(
        "../outside/verify-matrix-b/verify-matrix-b.json",
        "artifacts/b.json",
    );
    link(
        "../../outside/verify-matrix-b",
        "artifacts/verify-matrix-a/nested",
    );
    let out = project
        .cmd()
        .args(["merge", "--out", "report.json", "artifacts"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("skipped `artifacts/b.json`: a symbolic link"),
        "{stderr}"
    );
    let r = report(&project, "report.json");
    assert_eq!(
        r["environments_tested"],
        serde_json::json!(["a"]),
        "{stderr}"
    );
}
