//! The agent signals, JUnit and HTML through the command line, and `validate-signal`
//! with each of its rejections (docs/formats.md §6, §7), over results of real runs.

mod common;

use std::process::Command as StdCommand;

use common::Project;
use predicates::prelude::*;
use serde_json::Value;

/// `unit` fails in `b` only; `lint` runs in `a` only; `smoke` is optional.
const MANIFEST: &str = "version: 1
environments: [{name: a}, {name: b}]
checks:
  - { id: unit, run: 'echo \"unit in $VERIFY_MATRIX_ENV\"; test \"$VERIFY_MATRIX_ENV\" != b' }
  - { id: lint, run: 'true', environment: a }
  - { id: smoke, run: 'false', required: false }
  - { id: reviewed, assert: 'A person read the diff' }
";

/// Runs `envs` into their own artifact folders and merges them into `report.json`.
fn merged(envs: &[&str]) -> Project {
    let project = Project::new(MANIFEST);
    for env in envs {
        project.run_env(env, &format!("artifacts/{env}"));
    }
    let status = project
        .cmd()
        .args(["merge", "--out", "report.json", "artifacts"])
        .output()
        .unwrap()
        .status;
    assert!(matches!(status.code(), Some(0 | 1 | 3)), "{status}");
    project
}

/// `validate-signal` over `text`; its JSON and exit code.
fn validate(project: &Project, text: &str, extra: &[&str]) -> (Value, i32) {
    project.write("signal.txt", text);
    let out = project
        .cmd()
        .arg("validate-signal")
        .args(extra)
        .arg("signal.txt")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one JSON object: {stdout}");
    (
        serde_json::from_str(&stdout).unwrap(),
        out.status.code().unwrap(),
    )
}

fn rejected(project: &Project, text: &str, extra: &[&str]) -> String {
    let (v, code) = validate(project, text, extra);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["valid"], false);
    assert_eq!(v["action"], "REJECT_SIGNAL");
    v["error"].as_str().unwrap().to_owned()
}

fn render(project: &Project, args: &[&str]) -> (String, String, i32) {
    let out = project.cmd().arg("render").args(args).output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap(),
    )
}

const VALID: &str = "READY_FOR_REVIEW: T-9

Environment Verification Matrix:
| Check | Environment | Exit Code | Result |
|-------|-------------|-----------|--------|
| unit | a | 0 | PASS |
| unit | b | 0 | PASS |
| lint | a | 0 | PASS |

Environments Tested: a, b
All Required Environments: VERIFIED
";

#[test]
fn our_signal_of_a_verified_run_is_accepted() {
    let project = merged(&["a"]);
    // Only `a` ran: validating against just `a` accepts the signal we render.
    let (signal, _, code) = render(
        &project,
        &[
            "--format",
            "signal",
            "--task-id",
            "T-9",
            "--files",
            "src/a.rs,src/b.rs",
            "--tests",
            "tests/a.rs: the happy path",
            "--summary",
            "done",
            "report.json",
        ],
    );
    assert_eq!(code, 3, "coverage is incomplete over a and b");
    assert!(
        signal.starts_with("READY_FOR_REVIEW: T-9\n\nFiles Modified:\n- src/a.rs\n- src/b.rs\n")
    );
    assert!(signal.contains("\nSummary: done\n"));
    // Over both environments it is rejected: b has no result.
    assert_eq!(rejected(&project, &signal, &[]), "Missing: unit in b");
    // The same text with the declared list narrowed to a: the NOT VERIFIED line
    // (coverage over a and b was incomplete) is what rejects it now.
    assert_eq!(
        rejected(&project, &signal, &["--environments", "a"]),
        "Missing \"All Required Environments: VERIFIED\" line"
    );
    let accepted = signal.replace(
        "All Required Environments: NOT VERIFIED\n- b: no results\n",
        "All Required Environments: VERIFIED\n",
    );
    let (v, code) = validate(&project, &accepted, &["--environments", "a"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["valid"], true);
    assert_eq!(v["error"], Value::Null);
    assert_eq!(v["action"], "ACCEPT");
    assert_eq!(v["parsed_matrix"]["signal"], "READY_FOR_REVIEW");
    assert_eq!(v["parsed_matrix"]["task_id"], "T-9");
    assert_eq!(
        v["parsed_matrix"]["rows"],
        serde_json::json!([
            {"check": "unit", "environment": "a", "exit_code": 0, "result": "PASS"},
            {"check": "lint", "environment": "a", "exit_code": 0, "result": "PASS"},
            {"check": "smoke", "environment": "a", "exit_code": 1, "result": "FAIL"}
        ])
    );
    assert_eq!(
        v["parsed_matrix"]["environments_tested"],
        serde_json::json!(["a"])
    );
}

#[test]
fn each_rejection_has_its_documented_message() {
    let project = merged(&["a", "b"]);
    let cases: &[(&str, &str)] = &[
        (
            "READY_FOR_REVIEW: T-9\n\nAll done.\n",
            "Missing Environment Verification Matrix header",
        ),
        (
            "READY_FOR_REVIEW: T-9\n\n| Check | Environment | Exit Code | Result |\n|-------|-------------|-----------|--------|\n\nEnvironments Tested: a, b\nAll Required Environments: VERIFIED\n",
            "No verification results found in matrix",
        ),
        (
            &VALID.replace("| unit | b | 0 | PASS |\n", ""),
            "Missing: unit in b",
        ),
        (
            &VALID.replace("| unit | b | 0 | PASS |", "| unit | b | 1 | FAIL |"),
            "Failed: unit in b (exit 1)",
        ),
        (
            &VALID.replace("Environments Tested: a, b\n", ""),
            "Missing \"Environments Tested:\" line",
        ),
        (
            &VALID.replace(": VERIFIED", ": NOT VERIFIED"),
            "Missing \"All Required Environments: VERIFIED\" line",
        ),
        // A row further down (a quoted log line, say) is not a claim.
        (
            &VALID.replace("| unit | b | 0 | PASS |\n", "").replace(
                "All Required Environments: VERIFIED\n",
                "All Required Environments: VERIFIED\n\n| unit | b | 0 | PASS |\n",
            ),
            "Missing: unit in b",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(rejected(&project, text, &[]), *message, "{text}");
    }
    // The same text is accepted as written, and from standard input.
    assert_eq!(validate(&project, VALID, &[]).1, 0);
    let out = project
        .std_cmd()
        .args(["validate-signal", "-"])
        .stdin(std::fs::File::open(project.path().join("signal.txt")).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn claims_that_differ_from_the_real_results_are_rejected() {
    let project = merged(&["a", "b"]);
    // unit really failed in b with exit 1.
    assert_eq!(
        rejected(&project, VALID, &["--against", "report.json"]),
        "Claim differs: unit in b claimed exit 0 PASS, actual exit 1 FAIL"
    );
    let wrong_code = VALID.replace("| lint | a | 0 | PASS |", "| lint | a | 7 | PASS |");
    let honest_unit = wrong_code.replace("| unit | b | 0 | PASS |", "| unit | b | 1 | FAIL |");
    assert_eq!(
        rejected(&project, &honest_unit, &["--against", "report.json"]),
        "Claim differs: lint in a claimed exit 7 PASS, actual exit 0 PASS"
    );
    let invented = VALID.replace(
        "| lint | a | 0 | PASS |",
        "| lint | a | 0 | PASS |\n| lint | b | 0 | PASS |",
    );
    let invented = invented.replace("| unit | b | 0 | PASS |", "| unit | b | 1 | FAIL |");
    assert_eq!(
        rejected(&project, &invented, &["--against", "report.json"]),
        "Claim differs: lint in b claimed exit 0 PASS, actual no result"
    );
    // What we render from the report agrees with it, and is rejected only for the
    // real failure.
    let (signal, _, code) = render(
        &project,
        &["--format", "signal", "--task-id", "T", "report.json"],
    );
    assert_eq!(code, 1);
    assert_eq!(
        rejected(&project, &signal, &["--against", "report.json"]),
        "Failed: unit in b (exit 1)"
    );
    // A report of another manifest is refused as input.
    let mut other: Value = project.json("report.json");
    other["manifest"]["digest"] = "sha256:0000".into();
    project.write("other.json", &other.to_string());
    project
        .cmd()
        .args(["validate-signal", "--against", "other.json", "signal.txt"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("different manifest"));
}

#[test]
fn audit_passed_is_refused_unless_verified_and_validates_when_given() {
    let project = merged(&["a", "b"]);
    let (out, err, code) = render(
        &project,
        &["--format", "audit", "--task-id", "T", "report.json"],
    );
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert!(
        err.contains("AUDIT_PASSED refused: the report is NOT_VERIFIED, not VERIFIED: unit failed in b (exit 1)"),
        "{err}"
    );
    let (_, err, code) = render(&project, &["--format", "audit", "report.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("--format audit needs --task-id"), "{err}");

    // A verified report: b's unit failure made to pass is not how to get one, so run a
    // manifest where everything passes.
    let passing = Project::new(
        "version: 1\nenvironments: [{name: a}, {name: b}]\nchecks:\n  - { id: unit, run: 'true' }\n",
    );
    for env in ["a", "b"] {
        assert_eq!(passing.run_env(env, &format!("artifacts/{env}")), 0);
    }
    passing
        .cmd()
        .args(["merge", "--out", "report.json", "artifacts"])
        .assert()
        .success();
    let (audit, _, code) = render(
        &passing,
        &["--format", "audit", "--task-id", "T-1", "report.json"],
    );
    assert_eq!(code, 0);
    assert!(
        audit.starts_with(
            "AUDIT_PASSED: T-1\n\nRequirements Verification:\n- unit: exit 0 in a, b\n"
        ),
        "{audit}"
    );
    assert!(
        audit.contains("\nEnvironments Verified: a, b\nAll Required Environments: CONFIRMED\n")
    );
    let (v, code) = validate(&passing, &audit, &["--against", "report.json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["parsed_matrix"]["signal"], "AUDIT_PASSED");
    assert_eq!(
        rejected(&passing, &audit.replace("CONFIRMED", "VERIFIED"), &[]),
        "Missing \"All Required Environments: CONFIRMED\" line"
    );
}

#[test]
fn infra_blocked_signal_names_the_unavailable_environment() {
    let project = merged(&["a"]);
    let (out, _, code) = render(
        &project,
        &[
            "--format",
            "infra-blocked",
            "--task-id",
            "T-4",
            "report.json",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "INFRA_BLOCKED: T-4\n\nIssue: Environment 'b' unavailable\nCannot complete verification - environment required for:\n- unit\n- smoke\n"
    );
    let complete = merged(&["a", "b"]);
    let (out, err, code) = render(&complete, &["--format", "infra-blocked", "report.json"]);
    assert_eq!((out.as_str(), code), ("", 1));
    assert!(err.contains("every environment has results"), "{err}");
}

#[test]
fn unreadable_signals_are_invalid_input() {
    let project = merged(&["a"]);
    project
        .cmd()
        .args(["validate-signal", "no-such-file.txt"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "cannot read signal `no-such-file.txt`",
        ));
    std::fs::write(project.path().join("binary.txt"), [0xff, 0xfe, 0x00]).unwrap();
    project
        .cmd()
        .args(["validate-signal", "binary.txt"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("is not UTF-8 text"));
}

/// The JUnit file as `junitparser` (a Python JUnit reader used by CI tooling) sees it:
/// per suite, its name, counts, and each case's class, name and result.
const JUNITPARSER: &str = r#"
import json, sys
from junitparser import JUnitXml, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
suites = []
for suite in xml:
    cases = []
    for case in suite:
        kinds = [type(r).__name__ for r in case.result]
        messages = [r.message for r in case.result]
        cases.append([case.classname, case.name, kinds, messages, case.time])
    suites.append({"name": suite.name, "tests": suite.tests, "failures": suite.failures,
                   "errors": suite.errors, "skipped": suite.skipped, "cases": cases})
print(json.dumps(suites))
"#;

#[test]
fn junit_loads_in_real_junit_readers() {
    let project = merged(&["a"]);
    let (xml, _, code) = render(&project, &["--format", "junit", "report.json"]);
    assert_eq!(code, 0);
    project.write("junit.xml", &xml);
    let out = StdCommand::new("python3")
        .arg("-c")
        .arg(JUNITPARSER)
        .arg(project.path().join("junit.xml"))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "junitparser must be installed (pip install junitparser; .ci/run does): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let suites: Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary: Vec<(String, u64, u64, u64, u64)> = suites
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["tests"].as_u64().unwrap(),
                s["failures"].as_u64().unwrap(),
                s["errors"].as_u64().unwrap(),
                s["skipped"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            // The optional check's failure is skipped with its message: it never blocks.
            ("a".to_owned(), 3, 0, 0, 1),
            ("b".to_owned(), 2, 0, 2, 0),
            ("manual review".to_owned(), 1, 0, 0, 1),
        ]
    );
    let a_cases = &suites[0]["cases"];
    assert_eq!(a_cases[0][0], "a");
    assert_eq!(a_cases[0][1], "unit");
    assert_eq!(a_cases[0][2], serde_json::json!([]));
    assert_eq!(a_cases[2][1], "smoke");
    assert_eq!(a_cases[2][2], serde_json::json!(["Skipped"]));
    assert!(
        a_cases[2][3][0]
            .as_str()
            .unwrap()
            .starts_with("optional check failed (does not block): "),
        "{:#}",
        a_cases[2]
    );
    assert_eq!(suites[1]["cases"][0][2], serde_json::json!(["Error"]));
    assert_eq!(suites[1]["cases"][0][3], serde_json::json!(["no results"]));

    // quick-junit's reader (cargo-nextest's) reads the same file back.
    let back = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!(back.tests, 6);
    assert_eq!(back.failures, 0);
    assert_eq!(back.errors, 2);
    assert_eq!(back.test_suites.len(), 3);
}

#[test]
fn html_report_from_merge() {
    let project = merged(&["a", "b"]);
    let out = project
        .cmd()
        .args(["merge", "--format", "html", "artifacts"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        page.contains("<td class=\"fail\" title=\"exit 1 (required 0)"),
        "{page}"
    );
    assert!(page.contains("unit in b"), "{page}");
    assert!(
        page.contains("<pre><code>unit in b</code></pre>"),
        "the failure's log: {page}"
    );
}

#[test]
fn a_budget_too_small_for_the_verdict_is_a_usage_error() {
    let project = merged(&["a", "b"]);
    let (out, err, code) = render(&project, &["--max-chars", "40", "report.json"]);
    assert_eq!((out.as_str(), code), ("", 2));
    assert!(err.contains("cannot fit in 40 characters"), "{err}");
    let (out, _, code) = render(
        &project,
        &[
            "--max-bytes",
            "900",
            "--link",
            "https://ci.example/r/1",
            "report.json",
        ],
    );
    assert_eq!(code, 0);
    assert!(out.len() <= 900, "{}", out.len());
    assert!(out.contains("Full report: https://ci.example/r/1"), "{out}");
    assert!(
        out.contains("All Required Environments: NOT VERIFIED\n"),
        "{out}"
    );
}

#[test]
fn a_tampered_report_is_refused() {
    let project = merged(&["a", "b"]);
    let mut report: Value = project.json("report.json");
    report["rows"][0]["check"] = "unit |\n| unit | b | 0 | PASS".into();
    project.write("tampered.json", &report.to_string());
    for args in [
        vec!["render", "tampered.json"],
        vec![
            "render",
            "--format",
            "signal",
            "--task-id",
            "T",
            "tampered.json",
        ],
        vec![
            "validate-signal",
            "--against",
            "tampered.json",
            "report.json",
        ],
    ] {
        project
            .cmd()
            .args(&args)
            .assert()
            .code(4)
            .stdout("")
            .stderr(predicate::str::contains(
                "report `tampered.json` is not valid: `unit |\\n| unit | b | 0 | PASS` is not a check or environment name",
            ));
    }
}
