//! Gate effectiveness on real runners: a tiny crate under `cargo test`, and real
//! `node --test` and pytest (installed by .ci/run; their absence fails these tests).

mod common;

use common::{Project, check_result};
use serde_json::Value;

fn result(project: &Project, id: &str) -> Value {
    check_result(project, "local", id)
}

fn crate_project(lib: &str) -> Project {
    let project = Project::new(
        "version: 1\nenvironments: [{name: local}]\nchecks:\n  - id: tests\n    test: cargo test --offline --quiet\n    timeout: 5m\n",
    );
    project.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    project.write("src/lib.rs", lib);
    project
}

#[test]
fn cargo_test_with_tests_is_an_effective_pass_with_counts() {
    let project = crate_project(
        "pub fn two() -> u8 { 2 }\n#[cfg(test)]\nmod t {\n  #[test] fn a() { assert_eq!(super::two(), 2); }\n  #[test] fn b() {}\n  #[test] #[ignore] fn c() {}\n}\n",
    );
    project.cmd().assert().success();
    let r = result(&project, "tests");
    assert_eq!(r["status"], "PASS", "{r}");
    assert_eq!(r["gate_type"], "test");
    assert_eq!(r["must_be_effective"], true);
    assert_eq!(r["gate_effective"], true);
    assert_eq!(r["tests_executed"], 2);
    assert_eq!(
        r["test_counts"],
        serde_json::json!({"passed": 2, "failed": 0, "skipped": 1, "runner": "libtest"})
    );
    assert!(
        r["summary"]
            .as_str()
            .unwrap()
            .starts_with("2 tests passed, 1 skipped in "),
        "{r}"
    );
}

#[test]
fn cargo_test_with_zero_tests_fails_a_must_be_effective_gate() {
    let project = crate_project("pub fn two() -> u8 { 2 }\n");
    project.cmd().assert().code(1);
    let r = result(&project, "tests");
    assert_eq!(r["status"], "FAIL", "{r}");
    assert_eq!(r["exit_code"], 0, "the real exit code is kept");
    assert_eq!(r["gate_effective"], false);
    assert_eq!(r["tests_executed"], 0);
    assert_eq!(r["ineffective_reason"], "0 tests executed (libtest)");
    assert_eq!(
        r["summary"],
        "ineffective: 0 tests executed (libtest) (exit 0)"
    );
}

#[test]
fn an_ineffective_gate_without_must_be_effective_passes_but_says_so() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: local}]\nchecks:\n  - { id: t, run: 'echo no summary here', gate: test }\n",
    );
    project
        .cmd()
        .assert()
        .success()
        .stdout(predicates::str::contains("PASS"));
    let r = result(&project, "t");
    assert_eq!(r["status"], "PASS");
    assert_eq!(r["gate_effective"], false);
    assert_eq!(r["ineffective_reason"], "no test summary recognised");
}

#[test]
fn node_test_counts_and_an_empty_suite() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: local}]\nchecks:\n  - { id: some, test: 'node --test some/', timeout: 2m }\n  - { id: none, test: 'node --test none/', timeout: 2m }\n",
    );
    project.write(
        "some/a.test.mjs",
        "import { test } from 'node:test';\ntest('one', () => {});\ntest('two', () => {});\ntest('later', { skip: true }, () => {});\n",
    );
    project.write("none/readme.txt", "no tests here\n");
    project.cmd().assert().code(1);
    let some = result(&project, "some");
    assert_eq!(some["status"], "PASS", "{some}");
    assert_eq!(
        some["test_counts"],
        serde_json::json!({"passed": 2, "failed": 0, "skipped": 1, "runner": "node:test"})
    );
    let none = result(&project, "none");
    assert_eq!(none["gate_effective"], false, "{none}");
    assert_eq!(none["status"], "FAIL");
}

#[test]
fn pytest_counts_and_an_empty_suite() {
    let found = std::process::Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "pytest is required (.ci/run installs it with pip)"
    );
    let project = Project::new(
        "version: 1\nenvironments: [{name: local}]\nchecks:\n  - { id: some, test: 'python3 -m pytest -q -p no:cacheprovider some', timeout: 2m }\n  - { id: none, test: 'python3 -m pytest -q -p no:cacheprovider none', timeout: 2m, exit-code: 5 }\n",
    );
    project.write(
        "some/test_a.py",
        "import pytest\ndef test_one():\n    pass\n@pytest.mark.skip\ndef test_two():\n    pass\n",
    );
    project.write("none/readme.txt", "no tests\n");
    project.cmd().assert().code(1);
    let some = result(&project, "some");
    assert_eq!(
        some["test_counts"],
        serde_json::json!({"passed": 1, "failed": 0, "skipped": 1, "runner": "pytest"}),
        "{some}"
    );
    let none = result(&project, "none");
    assert_eq!(none["exit_code"], 5, "pytest exits 5 when nothing ran");
    assert_eq!(
        none["status"], "FAIL",
        "exit code accepted, but nothing ran: {none}"
    );
    assert_eq!(
        none["ineffective_reason"],
        "0 tests executed (\"no tests ran\")"
    );
}

/// `go test` without -v or -json (the log of a real run): packages, never one test per
/// package, and the summary says how to get a test count.
#[test]
fn go_test_package_lines_count_packages_not_tests() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: local}]\nchecks:\n  - id: tests\n    test: cat go.log\n",
    );
    project.write(
        "go.log",
        &std::fs::read_to_string(common::repo_root().join("fixtures/runner-logs/go/packages.log"))
            .unwrap(),
    );
    project.cmd().assert().success();
    let r = result(&project, "tests");
    assert_eq!(r["status"], "PASS", "{r}");
    assert_eq!(r["gate_effective"], true);
    assert_eq!(r["tests_executed"], Value::Null);
    assert_eq!(r["test_counts"], Value::Null);
    let summary = r["summary"].as_str().unwrap();
    assert!(summary.starts_with("2 packages passed in "), "{summary}");
    assert!(
        summary.ends_with("(no test count: run go test with -v or -json)"),
        "{summary}"
    );
}
