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
    }
    // A partial result as large is refused: it comes from an artifact.
    let partial: Value =
        serde_json::from_str(&project.read("verify-matrix-results/verify-matrix-linux.json"))
            .unwrap();
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
}
