//! Every log in fixtures/runner-logs/ gives exactly the counts and verdict written
//! beside it (by hand, from reading the log).

mod common;

use cargo_verify_matrix::manifest::Gate;
use cargo_verify_matrix::run::effect::assess_file;
use common::repo_root;
use serde_json::{Value, json};
use std::path::PathBuf;

/// Every `.log` under fixtures/runner-logs/<runner>/.
fn runner_logs() -> Vec<PathBuf> {
    let root = repo_root().join("fixtures/runner-logs");
    let mut logs = Vec::new();
    for runner in std::fs::read_dir(&root).unwrap() {
        let runner = runner.unwrap().path();
        if !runner.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&runner).unwrap() {
            let log = entry.unwrap().path();
            if log.extension().is_some_and(|e| e == "log") {
                logs.push(log);
            }
        }
    }
    logs
}

#[test]
fn every_runner_log_gives_its_expected_counts() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for log in runner_logs() {
        let expected_path = log.with_extension("expected.json");
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(&expected_path)
                .unwrap_or_else(|_| panic!("{} has no .expected.json", log.display())),
        )
        .unwrap();
        let a = assess_file(Gate::Test, &log);
        let mut actual = json!({
            "test_counts": a.test_counts,
            "gate_effective": a.gate_effective,
            "ineffective_reason": a.ineffective_reason,
        });
        // Package counts (`go test` without -v or -json) only where there are some.
        if let Some(packages) = &a.packages {
            actual["packages"] = json!(packages);
        }
        if actual != expected {
            failures.push(format!(
                "{}:\n  expected {expected}\n  actual   {actual}",
                log.display()
            ));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 39, "only {checked} logs checked");
}

/// Windows runners end lines with CRLF: every log read with `\r\n` line ends gives what
/// it gives with `\n`.
#[test]
fn every_runner_log_reads_the_same_with_crlf_line_ends() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    for log in runner_logs() {
        let bytes = std::fs::read(&log).unwrap();
        let mut crlf = Vec::with_capacity(bytes.len() * 2);
        for b in bytes {
            if b == b'\n' {
                crlf.push(b'\r');
            }
            crlf.push(b);
        }
        let copy = dir.path().join(format!("{checked}.log"));
        std::fs::write(&copy, crlf).unwrap();
        let view = |a: cargo_verify_matrix::run::effect::Assessment| {
            json!({
                "test_counts": a.test_counts,
                "gate_effective": a.gate_effective,
                "ineffective_reason": a.ineffective_reason,
                "packages": a.packages,
            })
        };
        let lf = view(assess_file(Gate::Test, &log));
        let with_cr = view(assess_file(Gate::Test, &copy));
        if lf != with_cr {
            failures.push(format!("{}:\n  LF   {lf}\n  CRLF {with_cr}", log.display()));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 39, "only {checked} logs checked");
}
