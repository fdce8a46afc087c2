//! A run records each finished check by appending one line to its journal; a run killed
//! with SIGKILL leaves every finished check readable, and `merge` reports the rest as
//! not run. The journal comes from pull-request code like the result file: a forged line
//! is refused with its line number.

mod common;

use common::Project;
#[cfg(unix)]
use common::{manifest_with, wait_until_alive, wait_until_gone};
#[cfg(unix)]
use predicates::prelude::*;
#[cfg(unix)]
use serde_json::Value;

const RESULTS: &str = "verify-matrix-results";
const JOURNAL: &str = "verify-matrix-results/verify-matrix-local.journal.jsonl";

/// Two checks that finish, then one that runs `sleep SECONDS` (a number no other test
/// uses, as tests run at once) until the tool is killed.
#[cfg(unix)]
fn killed_run(seconds: &str) -> Project {
    let project = Project::new(&manifest_with(&format!(
        "  - id: first\n    run: echo one\n  - id: second\n    run: echo two\n  - id: stuck\n    run: sleep {seconds}\n"
    )));
    let mut tool = project
        .std_cmd()
        .args(["run"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until_alive(&format!("sleep {seconds}"));
    tool.kill().unwrap();
    tool.wait().unwrap();
    project
}

#[cfg(unix)]
#[test]
fn a_sigkilled_run_keeps_every_finished_check_and_merge_reports_the_rest_as_not_run() {
    let project = killed_run("63.71");
    // The result file still says the run did not finish; the journal has what did.
    let file = project.json(&format!("{RESULTS}/verify-matrix-local.json"));
    assert_eq!(file["outcome"], "interrupted");
    assert!(file["finished_at"].is_null());
    assert!(
        file["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] == "NOT_RUN")
    );
    let journal = project.read(JOURNAL);
    let lines: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = lines
        .iter()
        .map(|l| l["command_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["first", "second"]);

    let out = project
        .cmd()
        .args(["merge", "--out", "report.json", RESULTS])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("2 finished checks read from its journal"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = project.json("report.json");
    let rows: Vec<(&str, &str)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["check"].as_str().unwrap(), r["result"].as_str().unwrap()))
        .collect();
    assert_eq!(rows, [("first", "PASS"), ("second", "PASS")]);
    assert_eq!(report["missing"][0]["check"], "stuck");
    assert_eq!(report["missing"][0]["kind"], "not_run");
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    // (The other test's check, `sleep 63.72`, may still be running.) Death follows
    // the tool's at once, but not in the same instant on a loaded machine.
    assert!(
        wait_until_gone("sleep 63.71"),
        "the check died with the tool"
    );

    // The next run of the environment starts a new journal and, once complete, removes it.
    project
        .cmd()
        .args(["run", "--check", "first"])
        .assert()
        .success();
    assert!(!project.path().join(JOURNAL).exists());
}

#[cfg(unix)]
#[test]
fn a_line_cut_short_is_passed_over_and_a_forged_one_refused() {
    let project = killed_run("63.72");
    let journal = project.read(JOURNAL);
    // The kill cut the last line short: what came before it still counts.
    let cut = format!("{journal}{{\"command_id\":\"stuck\",\"envir");
    project.write(JOURNAL, &cut);
    let merged = |project: &Project| project.cmd().args(["merge", RESULTS]).output().unwrap();
    let out = merged(&project);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A line for a check the result file does not wait for, and a line that is not a
    // result, are refused with the journal's name and the line.
    let first_line = || serde_json::from_str::<Value>(journal.lines().next().unwrap()).unwrap();
    let mut first = first_line();
    first["command_id"] = "invented".into();
    project.write(JOURNAL, &format!("{journal}{first}\n"));
    project
        .cmd()
        .args(["merge", RESULTS])
        .assert()
        .code(4)
        .stderr(
            predicate::str::contains("verify-matrix-local.journal.jsonl")
                .and(predicate::str::contains("line 3"))
                .and(predicate::str::contains(
                    "`invented` is not one the result file waits for",
                )),
        );
    project.write(JOURNAL, &format!("{journal}not json\n"));
    project
        .cmd()
        .args(["merge", RESULTS])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("line 3"));

    // A line whose record inside is a bare list of its values: refused like the rest.
    let mut listed = first_line();
    listed["test_counts"] = serde_json::json!([1, 0, 0, "libtest", 0, 0]);
    project.write(JOURNAL, &format!("{listed}\n"));
    project
        .cmd()
        .args(["merge", RESULTS])
        .assert()
        .code(4)
        .stderr(
            predicate::str::contains("line 1")
                .and(predicate::str::contains("invalid type: sequence")),
        );
}

/// A run of 10,000 checks finishes with every one of them in its result file and every
/// row in the report (each check's record costs the same, whatever came before it).
#[test]
fn ten_thousand_checks_all_arrive() {
    const N: usize = 10_000;
    let mut checks = String::new();
    for i in 0..N {
        checks.push_str(&format!("  - {{ id: c{i}, run: 'true' }}\n"));
    }
    // No shell: `true` itself is each check's process.
    let project = Project::new(&format!(
        "version: 1\nenvironments: [{{name: local}}]\ndefaults: {{shell: none}}\nchecks:\n{checks}"
    ));
    project
        .cmd()
        .args(["-q", "run", "--jobs", "4"])
        .assert()
        .success();
    let file = project.json(&format!("{RESULTS}/verify-matrix-local.json"));
    assert_eq!(file["outcome"], "complete");
    let results = file["checks"].as_array().unwrap();
    assert_eq!(results.len(), N);
    assert!(results.iter().all(|c| c["status"] == "PASS"));
    assert!(!project.path().join(JOURNAL).exists());
    project
        .cmd()
        .args(["-q", "merge", "--out", "report.json", RESULTS])
        .assert()
        .success();
    let report = project.json("report.json");
    assert_eq!(report["rows"].as_array().unwrap().len(), N);
    assert_eq!(report["verdict"], "VERIFIED");
}
