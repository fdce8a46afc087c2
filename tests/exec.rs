//! `exec`: exactly one JSON object on stdout, every field, whatever happens.

mod common;

use common::{CHECK_RESULT_FIELDS, Project};
use serde_json::Value;

/// Runs `exec` with `args`; returns the exit code and the one JSON object printed.
fn exec(project: &Project, args: &[&str]) -> (i32, Value) {
    let output = project.cmd().arg("exec").args(args).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "exactly one line: {stdout}");
    let value: Value = serde_json::from_str(&stdout).expect("one JSON object");
    let object = value.as_object().expect("an object");
    assert_eq!(object.len(), CHECK_RESULT_FIELDS.len(), "{stdout}");
    for field in CHECK_RESULT_FIELDS {
        assert!(object.contains_key(*field), "missing {field}: {stdout}");
    }
    (output.status.code().unwrap(), value)
}

#[test]
fn a_passing_command() {
    let project = Project::empty();
    let (code, v) = exec(
        &project,
        &[
            "--command-id",
            "unit",
            "--log-path",
            "out/unit.log",
            "--gate-type",
            "test",
            "--",
            "echo hi; echo err >&2",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(v["status"], "PASS");
    assert_eq!(v["command_id"], "unit");
    assert_eq!(v["gate_type"], "test");
    assert_eq!(v["required"], true);
    assert_eq!(v["log_path"], "out/unit.log");
    assert_eq!(v["environment"], "local");
    assert_eq!(project.read("out/unit.log"), "hi\nerr\n");
}

#[test]
fn several_words_are_quoted_and_joined() {
    let project = Project::empty();
    let (code, v) = exec(
        &project,
        &[
            "--log-path",
            "l.log",
            "--optional",
            "--",
            "printf",
            "%s|",
            "a b",
            "c",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(v["required"], false);
    assert_eq!(project.read("l.log"), "a b|c|");
}

#[test]
fn failure_refusal_timeout_and_missing_programs() {
    let project = Project::empty();
    let (code, v) = exec(&project, &["--log-path", "a.log", "--", "exit 4"]);
    assert_eq!(
        (code, v["status"].as_str(), v["exit_code"].as_i64()),
        (1, Some("FAIL"), Some(4))
    );

    let (code, v) = exec(&project, &["--log-path", "b.log", "--", "sleep 9 &"]);
    assert_eq!((code, v["status"].as_str()), (1, Some("ERROR")));
    assert!(v["refused"].as_str().unwrap().contains("background"));
    assert_eq!(v["exit_code"], Value::Null);
    assert!(!project.path().join("b.log").exists(), "nothing spawned");

    let (code, v) = exec(
        &project,
        &[
            "--log-path",
            "c.log",
            "--timeout-seconds",
            "1",
            "--grace-seconds",
            "1",
            "--",
            "sleep 65.1",
        ],
    );
    assert_eq!(
        (code, v["exit_code"].as_i64(), v["timed_out"].as_bool()),
        (1, Some(124), Some(true))
    );

    let (_, v) = exec(
        &project,
        &[
            "--log-path",
            "d.log",
            "--shell",
            "none",
            "--",
            "no-such-program-x",
        ],
    );
    assert_eq!(v["exit_code"], 127);
    project.write("not-executable", "#!/bin/sh\necho hi\n");
    let (_, v) = exec(
        &project,
        &[
            "--log-path",
            "e.log",
            "--shell",
            "none",
            "--",
            "./not-executable",
        ],
    );
    assert_eq!(v["exit_code"], 126);
}

#[test]
fn a_leak_is_reported() {
    let project = Project::empty();
    project.write(
        "spawn.sh",
        "setsid sleep 65.2 >/dev/null 2>&1 </dev/null &\necho $! > bg.pid\n",
    );
    let (code, v) = exec(
        &project,
        &[
            "--log-path",
            "f.log",
            "--grace-seconds",
            "1",
            "--",
            "bash spawn.sh",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(v["status"], "ERROR");
    // By pid: the command line may be read while the process is still exec'ing.
    let background: u64 = project.read("bg.pid").trim().parse().unwrap();
    let leaked = v["leaked"].as_array().unwrap();
    assert!(leaked.iter().any(|l| l["pid"] == background), "{v}");
    let mut pids: Vec<u64> = leaked.iter().map(|l| l["pid"].as_u64().unwrap()).collect();
    pids.dedup();
    assert_eq!(pids.len(), leaked.len(), "one entry per pid: {v}");
}

#[test]
fn an_unwritable_log_is_still_one_json_object() {
    let project = Project::empty();
    project.write("file", "");
    let (code, v) = exec(&project, &["--log-path", "file/inside.log", "--", "true"]);
    assert_eq!(code, 1);
    assert_eq!(v["status"], "ERROR");
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .starts_with("cannot write the log `file/inside.log`"),
        "{v}"
    );
}
