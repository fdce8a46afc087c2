//! `merge` and `render` over real partial results laid out as artifact downloads, and
//! over adversarial inputs: each refused or neutralised with its own message.

mod common;

use std::path::Path;

use common::Project;
use predicates::prelude::*;
use serde_json::Value;

const MANIFEST: &str = "version: 1\nenvironments: [{name: a}, {name: b}, {name: c}]\nchecks:\n  - { id: everywhere, run: 'echo fine' }\n  - { id: not_in_b, run: 'echo \"failing in $VERIFY_MATRIX_ENV\"; test \"$VERIFY_MATRIX_ENV\" != b' }\n";

/// Runs environments `a` and `b` into their own artifact folders, as matrix jobs do.
fn artifacts() -> Project {
    let project = Project::new(MANIFEST);
    for env in ["a", "b"] {
        let out = format!("artifacts/verify-matrix-{env}");
        let status = project
            .cmd()
            .args(["run", "--env", env, "--out", &out])
            .output()
            .unwrap()
            .status;
        assert!(status.code().is_some());
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
        copy_dir(
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

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn all_environments_passing_is_verified_and_exit_0() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: a}, {name: b}]\nchecks: [{id: ok, run: 'true'}]\n",
    );
    for env in ["a", "b"] {
        project
            .cmd()
            .args(["run", "--env", env, "--out", &format!("art/{env}")])
            .assert()
            .success();
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

fn edit(project: &Project, path: &str, f: impl FnOnce(&mut Value)) {
    let mut v = project.json(path);
    f(&mut v);
    project.write(path, &serde_json::to_string_pretty(&v).unwrap());
}

#[test]
fn a_different_manifest_digest_is_refused_naming_the_files() {
    let project = artifacts();
    edit(
        &project,
        "artifacts/verify-matrix-b/verify-matrix-b.json",
        |v| {
            v["manifest"]["digest"] = "sha256:0000".into();
        },
    );
    project
        .cmd()
        .args(["merge", "artifacts"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("different manifests"))
        .stderr(predicate::str::contains(
            "sha256:0000: `artifacts/verify-matrix-b/verify-matrix-b.json`",
        ));
}

#[test]
fn different_commits_are_refused() {
    let project = artifacts();
    edit(
        &project,
        "artifacts/verify-matrix-a/verify-matrix-a.json",
        |v| v["source"]["commit"] = "aaa".into(),
    );
    edit(
        &project,
        "artifacts/verify-matrix-b/verify-matrix-b.json",
        |v| v["source"]["commit"] = "bbb".into(),
    );
    project
        .cmd()
        .args(["merge", "artifacts"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("different commits"));
}

/// Spoils a project's artifacts in one way.
type Spoil = Box<dyn Fn(&Project)>;

#[test]
fn malformed_unknown_version_oversized_and_deeply_nested_files_are_refused() {
    let cases: [(&str, Spoil, &str); 4] = [
        (
            "malformed",
            Box::new(|p| {
                p.write(
                    "artifacts/bad.json",
                    "{\"format_version\": 1, \"environment\": ",
                );
            }),
            "is not valid",
        ),
        (
            "version",
            Box::new(|p| {
                edit(p, "artifacts/verify-matrix-a/verify-matrix-a.json", |v| {
                    v["format_version"] = 9.into()
                })
            }),
            "has format_version 9; this build of cargo-verify-matrix reads version 1",
        ),
        (
            "oversized",
            Box::new(|p| {
                let f = std::fs::File::create(p.path().join("artifacts/huge.json")).unwrap();
                f.set_len(65 * 1024 * 1024).unwrap();
            }),
            "more than the",
        ),
        (
            "nested",
            Box::new(|p| {
                p.write(
                    "artifacts/deep.json",
                    &format!("{}{}", "[".repeat(5000), "]".repeat(5000)),
                );
            }),
            "recursion limit",
        ),
    ];
    for (name, setup, message) in cases {
        let project = artifacts();
        setup(&project);
        project
            .cmd()
            .args(["merge", "artifacts"])
            .assert()
            .code(4)
            .stderr(predicate::str::contains(message).name(name));
    }
}

#[test]
fn log_paths_leading_out_of_their_folder_are_not_followed() {
    let project = artifacts();
    project.write("secret.txt", "TOKEN=hunter2\n");
    edit(
        &project,
        "artifacts/verify-matrix-b/verify-matrix-b.json",
        |v| {
            v["checks"][1]["log_path"] = "../../secret.txt".into();
        },
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            project.path().join("secret.txt"),
            project.path().join("artifacts/verify-matrix-a/link.log"),
        )
        .unwrap();
        edit(
            &project,
            "artifacts/verify-matrix-a/verify-matrix-a.json",
            |v| {
                v["checks"][1]["log_path"] = "link.log".into();
                v["checks"][1]["status"] = "FAIL".into();
                v["checks"][1]["exit_code"] = 1.into();
            },
        );
    }
    let out = project
        .cmd()
        .args([
            "merge",
            "--out",
            "report.json",
            "--format",
            "markdown",
            "artifacts",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stdout.contains("hunter2"), "{stdout}");
    assert!(
        stderr.contains("ignored log path `../../secret.txt`"),
        "{stderr}"
    );
    #[cfg(unix)]
    assert!(stderr.contains("ignored log path `link.log`"), "{stderr}");
    let md = project
        .cmd()
        .args(["render", "report.json"])
        .output()
        .unwrap();
    assert!(!String::from_utf8(md.stdout).unwrap().contains("hunter2"));
}

#[test]
fn conflicting_duplicates_fail_and_identical_ones_count_once() {
    let project = artifacts();
    copy_dir(
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

    edit(&project, "artifacts/retry-a/verify-matrix-a.json", |v| {
        v["checks"][0]["status"] = "FAIL".into();
        v["checks"][0]["exit_code"] = 2.into();
    });
    project
        .cmd()
        .args(["merge", "--out", "conflict.json", "artifacts"])
        .assert()
        .code(1);
    let conflict = report(&project, "conflict.json");
    let row = &conflict["rows"][0];
    assert_eq!(
        (
            row["check"].as_str(),
            row["environment"].as_str(),
            row["result"].as_str()
        ),
        (Some("everywhere"), Some("a"), Some("FAIL"))
    );
    assert!(
        conflict["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "everywhere in a: conflicting results reported")
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
