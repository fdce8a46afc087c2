//! Size limits hold for what pull requests produce (each partial result), not for the
//! tool's own report: a report larger than a partial result may be renders in every
//! format.

mod common;

use common::Project;
use serde_json::Value;

/// A real report, grown past 64 MiB with more rows of the same shape (each check's
/// command 10 KB long).
fn large_report(project: &Project) -> u64 {
    project.write(
        "verify-matrix.yml",
        "version: 1\nenvironments: [{name: linux}]\nchecks:\n  - { id: c0, run: 'true' }\n  - { id: f0, run: 'echo broken; exit 1' }\n",
    );
    project.cmd().args(["-q", "run"]).assert().code(1);
    project
        .cmd()
        .args([
            "-q",
            "merge",
            "--out",
            "small.json",
            "verify-matrix-results",
        ])
        .assert()
        .code(1);
    let mut report: Value = serde_json::from_str(&project.read("small.json")).unwrap();
    let template = report["rows"][0].clone();
    let rows = report["rows"].as_array_mut().unwrap();
    let command = "x".repeat(10_000);
    for i in 1..7_000 {
        let mut row = template.clone();
        row["check"] = format!("c{i}").into();
        row["detail"]["command_id"] = format!("c{i}").into();
        row["detail"]["command"] = command.clone().into();
        rows.push(row);
    }
    let text = serde_json::to_string(&report).unwrap();
    project.write("large.json", &text);
    text.len() as u64
}

#[test]
fn a_report_larger_than_a_partial_result_may_be_renders_in_every_format() {
    let project = Project::empty();
    let size = large_report(&project);
    assert!(size > 64 * 1024 * 1024, "{size} bytes");
    for format in ["markdown", "table", "json", "junit", "html", "signal"] {
        let out = project
            .cmd()
            .args(["render", "--format", format, "--task-id", "t", "large.json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The report is NOT VERIFIED (f0 failed): a signal exits 1, the others 0.
        let expected = if format == "signal" { 1 } else { 0 };
        assert_eq!(out.status.code(), Some(expected), "{format}: {stderr}");
        assert!(!out.stdout.is_empty(), "{format}");
        assert!(!stderr.contains("limit"), "{format}: {stderr}");
        if format == "json" {
            // Read with its rows cut apart and parsed on every core, the report is the
            // one written, to the last field of the last row.
            let read: Value = serde_json::from_slice(&out.stdout).unwrap();
            let written: Value = serde_json::from_str(&project.read("large.json")).unwrap();
            assert!(
                read == written,
                "the report read differs from the one written"
            );
        }
    }
    // A partial result as large is refused: it comes from an artifact.
    let partial = project.json("verify-matrix-results/verify-matrix-linux.json");
    let mut big = partial.clone();
    let check = big["checks"][0].clone();
    let checks = big["checks"].as_array_mut().unwrap();
    for _ in 0..7_000 {
        let mut c = check.clone();
        c["command"] = "x".repeat(10_000).into();
        checks.push(c);
    }
    project.write("big/verify-matrix-linux.json", &big.to_string());
    project
        .cmd()
        .args(["render", "big"])
        .assert()
        .code(4)
        .stderr(predicates::str::contains("67108864-byte limit"));
    // ... and so is the file itself, named alone.
    project
        .cmd()
        .args(["render", "big/verify-matrix-linux.json"])
        .assert()
        .code(4)
        .stderr(predicates::str::contains("67108864-byte limit"));
}

/// A report too large to hold beside its parsed form is parsed as it is read: what is
/// wrong with it is still named as for any report (its version first, then the field at
/// fault, or where the JSON breaks), with exit 4.
#[test]
fn a_large_report_that_does_not_parse_says_why() {
    let project = Project::empty();
    large_report(&project);
    let report: Value = serde_json::from_str(&project.read("large.json")).unwrap();
    let refused = |name: &str, text: &str, message: &str| {
        project.write(name, text);
        project
            .cmd()
            .args(["render", name])
            .assert()
            .code(4)
            .stderr(predicates::str::contains(message));
    };
    let mut newer = report.clone();
    newer["format_version"] = 9.into();
    refused(
        "newer.json",
        &newer.to_string(),
        "has format_version 9; this build of cargo-verify-matrix reads version 1 or 2",
    );
    // Every command that reads a report reads it so.
    project
        .cmd()
        .args(["validate-signal", "--against", "newer.json", "-"])
        .write_stdin("READY_FOR_REVIEW")
        .assert()
        .code(4)
        .stderr(predicates::str::contains("has format_version 9"));
    let mut wrong = report.clone();
    wrong["rows"][6_500]["exit_code"] = "one".into();
    refused(
        "wrong.json",
        &wrong.to_string(),
        "at `rows[6500].exit_code`",
    );
    let text = report.to_string();
    refused("cut.json", &text[..text.len() - 100], "EOF while parsing");
}
