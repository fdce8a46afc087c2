//! A runner's reruns, read from its own record as one test with attempts: gotestsum's
//! `--rerun-fails` (Debian's go and gotestsum, a real module) in its JSON and its JUnit,
//! and pytest-rerunfailures (a real suite). A test that passed on its rerun is flaky,
//! not failed; one that failed every time is one failure; `fail-on-flaky` fails the
//! pair.

mod common;

use common::{Project, check_result};

/// A Go package: `TestWobbly` fails its first run (it leaves a marker in the module),
/// `TestBroken` fails every run when `BREAK` is set.
const GO_TEST: &str = r#"package flaky

import (
	"os"
	"testing"
)

func TestSteady(t *testing.T) {}

func TestWobbly(t *testing.T) {
	if _, err := os.Stat("tried"); err != nil {
		os.WriteFile("tried", []byte("1"), 0o644)
		t.Fatal("first try failed")
	}
}

func TestBroken(t *testing.T) {
	if os.Getenv("BREAK") != "" {
		t.Fatal("broken every time")
	}
}
"#;

fn go_project(reports: &str, extra: &str) -> Project {
    let project = Project::new(&format!(
        "version: 1\nenvironments: [{{name: lin}}]\nchecks:\n  - id: unit\n    test: rm -f tried && GOCACHE=$PWD/.gocache GOPATH=$PWD/.gopath gotestsum --jsonfile out/report.json --junitfile out/report.xml --rerun-fails=2 --packages ./... -- -count=1\n    reports: {reports}\n    timeout: 5m\n    env: {{ GOFLAGS: -mod=mod, GOTOOLCHAIN: local }}\n{extra}"
    ));
    project.write("go.mod", "module example.com/flaky\n\ngo 1.19\n");
    project.write("flaky_test.go", GO_TEST);
    project
}

#[test]
fn gotestsum_reruns_are_one_test_with_attempts_in_its_json_and_its_junit() {
    for reports in ["out/report.json", "out/report.xml"] {
        let project = go_project(reports, "");
        let out = project.std_cmd().arg("run").output().unwrap();
        let unit = check_result(&project, "lin", "unit");
        assert_eq!(out.status.code(), Some(0), "{reports}: {unit}");
        assert_eq!(unit["status"], "PASS", "{reports}: {unit}");
        let counts = &unit["test_counts"];
        assert_eq!(
            (&counts["passed"], &counts["failed"], &counts["flaky"]),
            (&3.into(), &0.into(), &1.into()),
            "{reports}: {unit}"
        );
        let wobbly = unit["tests"]["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"] == "TestWobbly")
            .collect::<Vec<_>>();
        assert_eq!(wobbly.len(), 1, "{reports}: {unit}");
        assert_eq!(wobbly[0]["outcome"], "flaky");

        // Failing every time: one failed test, the pair failed.
        let out = project
            .std_cmd()
            .arg("run")
            .env("BREAK", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{reports}");
        let unit = check_result(&project, "lin", "unit");
        assert_eq!(unit["test_counts"]["failed"], 1, "{reports}: {unit}");
        let broken = unit["tests"]["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"] == "TestBroken")
            .count();
        assert_eq!(broken, 1, "{reports}: {unit}");
    }
    // Under fail-on-flaky the rerun's pass does not pass the pair.
    let project = go_project("out/report.json", "    fail-on-flaky: true\n");
    let out = project.std_cmd().arg("run").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        check_result(&project, "lin", "unit")["summary"],
        "1 flaky test passed only on a retry, and fail-on-flaky is set"
    );
}

/// pytest-rerunfailures writes each rerun as the same case again: the test that passed
/// on its rerun is flaky, the one that never did one failure.
#[test]
fn pytest_rerunfailures_reruns_are_one_test_with_attempts() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - id: unit\n    test: rm -f tried && python3 -m pytest -p no:cacheprovider --reruns 2 --junitxml=out/junit.xml tests\n    reports: out/junit.xml\n    timeout: 2m\n",
    );
    project.write("tests/__init__.py", "");
    project.write(
        "tests/test_r.py",
        "import os\n\ndef test_ok():\n    pass\n\ndef test_wobbly():\n    if not os.path.exists('tried'):\n        open('tried', 'w').write('1')\n        assert False, 'first try failed'\n\ndef test_broken():\n    assert 'BREAK' not in os.environ, 'always'\n",
    );
    let out = project.std_cmd().arg("run").output().unwrap();
    let unit = check_result(&project, "lin", "unit");
    assert_eq!(out.status.code(), Some(0), "{unit}");
    assert_eq!(unit["test_counts"]["flaky"], 1, "{unit}");
    assert_eq!(unit["test_counts"]["passed"], 3, "{unit}");
    // The log's counts (`2 passed, 2 rerun`) agree with the report's.
    assert_eq!(unit["gate_effective"], true, "{unit}");
    let out = project
        .std_cmd()
        .arg("run")
        .env("BREAK", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let unit = check_result(&project, "lin", "unit");
    assert_eq!(unit["test_counts"]["failed"], 1, "{unit}");
    assert_eq!(unit["test_counts"]["flaky"], 1, "{unit}");
    assert_eq!(unit["gate_effective"], true, "{unit}");
}

/// A rerun follows a failure: `-count=2` lists every test twice in a Go package's
/// JUnit, and a test that passed both times is two passes, not flaky.
#[test]
fn go_test_count_twice_is_not_a_rerun() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - id: unit\n    test: touch tried && GOCACHE=$PWD/.gocache GOPATH=$PWD/.gopath gotestsum --junitfile out/report.xml --packages ./... -- -count=2\n    reports: out/report.xml\n    timeout: 5m\n    env: { GOFLAGS: -mod=mod, GOTOOLCHAIN: local }\n",
    );
    project.write("go.mod", "module example.com/flaky\n\ngo 1.19\n");
    project.write("flaky_test.go", GO_TEST);
    let out = project.std_cmd().arg("run").output().unwrap();
    let unit = check_result(&project, "lin", "unit");
    assert_eq!(out.status.code(), Some(0), "{unit}");
    assert_eq!(unit["test_counts"]["passed"], 6, "{unit}");
    assert!(unit["test_counts"].get("flaky").is_none(), "{unit}");
}

/// A rerun is the runner starting the test again after its package ended: a bare
/// `pass` after the package failed, with no `run` before it, is no rerun, and the
/// failure stands.
#[test]
fn a_pass_without_a_rerun_does_not_take_back_a_failure() {
    let project = Project::new("version: 1\nenvironments: [{name: lin}]\nchecks: []\n");
    let events = [
        r#"{"Action":"run","Package":"p","Test":"TestReal"}"#,
        r#"{"Action":"fail","Package":"p","Test":"TestReal","Elapsed":0}"#,
        r#"{"Action":"fail","Package":"p","Elapsed":0}"#,
        r#"{"Action":"pass","Package":"p","Test":"TestReal","Elapsed":0}"#,
        r#"{"Action":"pass","Package":"p","Elapsed":0}"#,
    ];
    project.write("report.json", &(events.join("\n") + "\n"));
    let out = project
        .std_cmd()
        .args(["tests", "report.json"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("1 failed"), "{said}");
    assert!(!said.contains("flaky"), "{said}");
}
