//! `run` on real processes: statuses, exit codes, timeouts that kill the whole group,
//! signals, output order and size, fail-fast, jobs, selection and the result file.

mod common;

use std::time::{Duration, Instant};

use common::{CHECK_RESULT_FIELDS, Project, alive, manifest_with};
use predicates::prelude::*;
use serde_json::Value;

fn checks_of(project: &Project, env: &str) -> Vec<Value> {
    let result = project.json(&format!("verify-matrix-results/verify-matrix-{env}.json"));
    result["checks"].as_array().unwrap().clone()
}

fn by_id<'a>(checks: &'a [Value], id: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["command_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}"))
}

#[test]
fn passing_checks_exit_0_and_record_every_field() {
    let project = Project::new(&manifest_with(
        "  - id: ok\n    run: echo fine\n  - id: three\n    run: exit 3\n    exit-code: 3\n  - id: must_fail\n    run: exit 7\n    expect: failure\n",
    ));
    project
        .cmd()
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "All Required Environments: VERIFIED",
        ));
    let result = project.json("verify-matrix-results/verify-matrix-local.json");
    assert_eq!(result["format_version"], 3);
    assert_eq!(result["outcome"], "complete");
    assert_eq!(result["environment"], "local");
    assert!(
        result["manifest"]["digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert_eq!(result["manifest"]["content"]["checks"][0]["id"], "ok");
    for key in [
        "tool",
        "source",
        "runner",
        "started_at",
        "finished_at",
        "duration_ms",
    ] {
        assert!(result.get(key).is_some(), "missing {key}");
    }
    let fields = CHECK_RESULT_FIELDS;
    let checks = result["checks"].as_array().unwrap();
    for check in checks {
        let object = check.as_object().unwrap();
        assert_eq!(
            object.len(),
            fields.len(),
            "exactly the documented fields: {check}"
        );
        for field in fields {
            assert!(object.contains_key(*field), "missing {field}");
        }
        assert_eq!(check["status"], "PASS");
        assert!(check["summary"].as_str().unwrap().chars().count() <= 80);
    }
    assert_eq!(by_id(checks, "three")["exit_code"], 3);
    assert_eq!(by_id(checks, "three")["required_exit_code"], 3);
    assert_eq!(by_id(checks, "must_fail")["exit_code"], 7);
    assert_eq!(
        by_id(checks, "must_fail")["required_exit_code"],
        Value::Null
    );
    assert_eq!(
        project.read("verify-matrix-results/logs/local/ok.log"),
        "fine\n"
    );
}

#[test]
fn a_failing_check_exits_1_and_the_others_still_run() {
    let project = Project::new(&manifest_with(
        "  - id: first\n    run: exit 2\n  - id: wrong_code\n    run: exit 0\n    exit-code: 1\n  - id: last\n    run: 'true'\n",
    ));
    project
        .cmd()
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "All Required Environments: NOT VERIFIED",
        ))
        .stdout(predicate::str::contains("first failed in local (exit 2)"));
    let checks = checks_of(&project, "local");
    assert_eq!(by_id(&checks, "first")["status"], "FAIL");
    assert_eq!(by_id(&checks, "first")["exit_code"], 2);
    assert_eq!(by_id(&checks, "wrong_code")["status"], "FAIL");
    let summary = by_id(&checks, "wrong_code")["summary"].as_str().unwrap();
    assert!(summary.starts_with("exit 0 (required 1) in "), "{summary}");
    assert_eq!(by_id(&checks, "last")["status"], "PASS");
}

/// A check that expects a failure passes on the command's own failure, never on a shell
/// that could not find or run it, or on a crash; the AoT `not_command` is such a check.
#[test]
fn an_expected_failure_is_the_commands_own() {
    let project = Project::new(&manifest_with(concat!(
        "  - { id: fails, run: exit 1, expect: failure }\n",
        "  - { id: missing, run: no-such-command-3f9a, expect: failure }\n",
        "  - { id: not_executable, run: ./data.txt, expect: failure }\n",
        "  - { id: crashed, run: kill -9 $$, expect: failure }\n",
    )));
    project.write("data.txt", "not a program\n");
    project.cmd().arg("-q").assert().code(1);
    let checks = checks_of(&project, "local");
    assert_eq!(by_id(&checks, "fails")["status"], "PASS");
    for (id, says) in [
        ("missing", "exit 127: the command was not found"),
        ("not_executable", "exit 126: the command could not be run"),
        ("crashed", "exit 137: the command was killed by SIGKILL"),
    ] {
        let check = by_id(&checks, id);
        assert_eq!(check["status"], "ERROR", "{check}");
        let summary = check["summary"].as_str().unwrap();
        assert!(summary.starts_with(says), "{summary}");
    }
    // The AoT loop's negative check, with a command that is not there.
    project.write(
        "case.yml",
        "base_case:\n  type: not_command\n  value: no-such-command-3f9a --version\n",
    );
    project
        .cmd()
        .args(["-q", "run", "--manifest", "case.yml", "--out", "aot"])
        .assert()
        .code(1);
}

#[test]
fn an_optional_failure_does_not_block() {
    let project = Project::new(&manifest_with(
        "  - id: fine\n    run: 'true'\n  - id: optional\n    run: exit 1\n    required: false\n",
    ));
    project
        .cmd()
        .assert()
        .success()
        .stdout(predicate::str::contains("VERIFIED"));
}

#[test]
fn fail_fast_leaves_the_rest_not_run_with_the_reason() {
    let project = Project::new(&manifest_with(
        "  - id: a\n    run: 'true'\n  - id: b\n    run: exit 1\n  - id: c\n    run: 'true'\n",
    ));
    project.cmd().args(["run", "--fail-fast"]).assert().code(1);
    let checks = checks_of(&project, "local");
    let c = by_id(&checks, "c");
    assert_eq!(c["status"], "NOT_RUN");
    assert_eq!(c["exit_code"], Value::Null, "no made-up exit code");
    assert_eq!(c["summary"], "not run: --fail-fast after `b` failed");
}

#[test]
fn a_timeout_kills_the_command_and_its_children() {
    // A shell that runs a shell that runs sleep: the whole group must go.
    let project = Project::new(&manifest_with(
        "  - id: hangs\n    run: sh -c 'sleep 987.25; true'; true\n    timeout: 1s\n",
    ));
    project.cmd().assert().code(1);
    let check = &checks_of(&project, "local")[0];
    assert_eq!(check["status"], "ERROR");
    assert_eq!(check["exit_code"], 124);
    assert_eq!(check["timed_out"], true);
    assert_eq!(check["retryable"], true);
    assert!(
        check["summary"]
            .as_str()
            .unwrap()
            .starts_with("timed out after 1s")
    );
    assert_eq!(alive("sleep 987.25"), Vec::<String>::new());
}

#[test]
fn a_command_that_ignores_sigterm_is_killed_after_the_grace() {
    let project = Project::new(&manifest_with(
        "  - id: stubborn\n    run: trap '' TERM; sleep 986.5; true\n    timeout: 1s\n    grace: 1s\n",
    ));
    let started = Instant::now();
    project.cmd().assert().code(1);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(checks_of(&project, "local")[0]["exit_code"], 124);
    assert_eq!(alive("sleep 986.5"), Vec::<String>::new());
}

#[test]
fn a_process_killed_by_signal_n_exits_128_plus_n() {
    let project = Project::new(&manifest_with(
        "  - id: term\n    run: kill -TERM $$\n  - id: kill\n    run: kill -KILL $$\n",
    ));
    project.cmd().assert().code(1);
    let checks = checks_of(&project, "local");
    assert_eq!(by_id(&checks, "term")["exit_code"], 143);
    assert_eq!(by_id(&checks, "kill")["exit_code"], 137);
}

#[test]
fn a_missing_program_is_an_error_with_exit_127() {
    let project = Project::new(&manifest_with(
        "  - id: nope\n    shell: none\n    run: no-such-program-verify-matrix --flag\n",
    ));
    project.cmd().assert().code(1);
    let check = &checks_of(&project, "local")[0];
    assert_eq!(check["status"], "ERROR");
    assert_eq!(check["exit_code"], 127);
    assert_eq!(
        check["summary"],
        "command not found: no-such-program-verify-matrix"
    );
}

#[test]
fn shells_run_as_documented() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: bash_pipefail\n    run: false | true\n",
        "  - id: sh_errexit\n    shell: sh\n    run: false; echo unreachable\n",
        "  - id: none_exec\n    shell: none\n    run: printf '%s|%s' 'a b' c\n",
    )));
    project.cmd().assert().code(1);
    let checks = checks_of(&project, "local");
    assert_eq!(
        by_id(&checks, "bash_pipefail")["exit_code"],
        1,
        "pipefail as Actions"
    );
    assert_eq!(by_id(&checks, "sh_errexit")["exit_code"], 1);
    assert_eq!(
        project.read("verify-matrix-results/logs/local/sh_errexit.log"),
        ""
    );
    assert_eq!(by_id(&checks, "none_exec")["status"], "PASS");
    assert_eq!(
        project.read("verify-matrix-results/logs/local/none_exec.log"),
        "a b|c"
    );
}

#[test]
fn stdout_and_stderr_are_interleaved_in_order_and_stdin_is_closed() {
    let project = Project::new(&manifest_with(
        "  - id: mixed\n    run: for i in 1 2 3; do echo out$i; echo err$i >&2; done; cat; echo done\n",
    ));
    project.cmd().assert().success();
    assert_eq!(
        project.read("verify-matrix-results/logs/local/mixed.log"),
        "out1\nerr1\nout2\nerr2\nout3\nerr3\ndone\n"
    );
}

#[test]
fn environment_variables_and_cwd_are_applied_in_order() {
    let project = Project::new(
        "version: 1\ndefaults:\n  env: { A: default, B: default, C: default }\nenvironments:\n  - name: e\n    env: { B: environment, C: environment }\nchecks:\n  - id: vars\n    cwd: sub\n    env: { C: check }\n    run: echo \"$A $B $C $VERIFY_MATRIX_ENV $VERIFY_MATRIX_CHECK $(basename \"$PWD\")\"\n",
    );
    std::fs::create_dir(project.path().join("sub")).unwrap();
    project.cmd().assert().success();
    assert_eq!(
        project.read("verify-matrix-results/logs/e/vars.log"),
        "default environment check e vars sub\n"
    );
}

#[test]
fn a_few_hundred_megabytes_of_output_reach_the_log_intact() {
    let project = Project::new(&manifest_with(
        "  - id: loud\n    run: head -c 314572800 /dev/zero; echo end\n",
    ));
    project.cmd().assert().success();
    let log = project
        .path()
        .join("verify-matrix-results/logs/local/loud.log");
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 314_572_800 + 4);
}

#[test]
fn jobs_run_concurrently_but_every_output_keeps_manifest_order() {
    // `slow` finishes last but is listed first everywhere.
    let project = Project::new(&manifest_with(
        "  - id: slow\n    run: sleep 1\n  - id: fast1\n    run: 'true'\n  - id: fast2\n    run: 'true'\n",
    ));
    let out = project.cmd().args(["run", "--jobs", "3"]).output().unwrap();
    assert!(out.status.success());
    let ids: Vec<String> = checks_of(&project, "local")
        .iter()
        .map(|c| c["command_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["slow", "fast1", "fast2"]);
    let table = String::from_utf8(out.stdout).unwrap();
    let position = |id: &str| table.find(&format!("│ {id} ")).unwrap();
    assert!(position("slow") < position("fast1") && position("fast1") < position("fast2"));
}

#[test]
fn check_selects_and_unknown_checks_are_usage_errors() {
    let project = Project::new(&manifest_with(
        "  - id: a\n    run: 'true'\n  - id: b\n    run: exit 1\n",
    ));
    project
        .cmd()
        .args(["run", "--check", "a"])
        .assert()
        .success();
    let checks = checks_of(&project, "local");
    assert_eq!(checks.len(), 1);
    project
        .cmd()
        .args(["run", "--check", "zzz"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown check `zzz`; the manifest defines: a, b",
        ));
}

#[test]
fn environment_selection_errors_list_the_choices() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: one}, {name: two}]\nchecks: [{id: a, run: 'true'}]\n",
    );
    project
        .cmd()
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the manifest declares one, two"));
    project
        .cmd()
        .env("VERIFY_MATRIX_ENV", "two")
        .assert()
        .success();
    assert!(
        project
            .path()
            .join("verify-matrix-results/verify-matrix-two.json")
            .exists()
    );
    project
        .cmd()
        .args(["run", "--env", "three"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown environment `three`"));
}

#[test]
fn a_mistyped_environment_or_check_gets_a_did_you_mean() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: linux}, {name: windows}]\nchecks: [{id: unit, run: 'true'}, {id: lint, run: 'true'}]\n",
    );
    project
        .cmd()
        .args(["run", "--env", "linx"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown environment `linx` (from --env) (did you mean `linux`?); the manifest declares: linux, windows",
        ));
    project
        .cmd()
        .args(["run", "--env", "linux", "--check", "unti"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown check `unti` (did you mean `unit`?); the manifest defines: unit, lint",
        ));
    project
        .cmd()
        .args(["plan", "--env", "windos"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("(did you mean `windows`?)"));
    // Nothing close: no guess.
    project
        .cmd()
        .args(["run", "--env", "mac"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean").not());
}

#[test]
fn several_environments_run_in_one_invocation() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - { name: a, env: { V: '1' } }\n  - { name: b, env: { V: '2' } }\nchecks: [{id: v, run: 'test \"$V\" = 1'}]\n",
    );
    project
        .cmd()
        .args(["run", "--env", "a", "--env", "b"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("v failed in b (exit 1)"));
    assert_eq!(checks_of(&project, "a")[0]["status"], "PASS");
    assert_eq!(checks_of(&project, "b")[0]["status"], "FAIL");
}

#[test]
fn the_result_file_is_rewritten_after_every_check() {
    let project = Project::new(&manifest_with(
        "  - id: quick\n    run: 'true'\n  - id: slow\n    run: sleep 4\n",
    ));
    let mut child = project.std_cmd().spawn_and_capture();
    let path = project
        .path()
        .join("verify-matrix-results/verify-matrix-local.json");
    let deadline = Instant::now() + Duration::from_secs(30);
    let seen = loop {
        assert!(Instant::now() < deadline, "no intermediate result seen");
        if let Ok(text) = std::fs::read_to_string(&path) {
            let mut value: Value = serde_json::from_str(&text).expect("always whole JSON");
            common::checks_as_objects(&mut value);
            if value["checks"][0]["status"] == "PASS" {
                break value;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Mid-run the file never claims completeness and never invents a result.
    if seen["checks"][1]["status"] == "NOT_RUN" {
        assert_eq!(seen["outcome"], "interrupted");
        assert_eq!(
            seen["checks"][1]["summary"],
            "not run: the run did not finish"
        );
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(
        project.json("verify-matrix-results/verify-matrix-local.json")["outcome"],
        "complete"
    );
}

trait SpawnQuiet {
    fn spawn_and_capture(&mut self) -> std::process::Child;
}

impl SpawnQuiet for std::process::Command {
    fn spawn_and_capture(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    }
}

#[test]
fn plan_github_writes_the_matrix_output_under_actions() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - { name: linux, runs-on: ubuntu-24.04, container: 'rust:1.85' }\n  - { name: mac, runs-on: macos-latest }\nchecks: []\n",
    );
    let output = project.path().join("github_output");
    std::fs::write(&output, "earlier=1\n").unwrap();
    let expected = r#"{"include":[{"environment":"linux","runs-on":"ubuntu-24.04","container":"rust:1.85"},{"environment":"mac","runs-on":"macos-latest"}]}"#;
    project
        .cmd()
        .args(["plan", "--format", "github"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &output)
        .assert()
        .success()
        .stdout(format!("{expected}\n"));
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        format!("earlier=1\nmatrix={expected}\n")
    );
}

#[test]
fn run_records_the_pull_request_head_commit_not_the_merge_commit() {
    let project = Project::new(&manifest_with("  - id: a\n    run: 'true'\n"));
    let event = project.write(
        "event.json",
        r#"{"pull_request": {"number": 12, "head": {"sha": "abc123head"}}}"#,
    );
    project
        .cmd()
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_SHA", "merge999")
        .env("GITHUB_REPOSITORY", "o/r")
        .env("GITHUB_RUN_ID", "77")
        .env("GITHUB_RUN_ATTEMPT", "2")
        .env("GITHUB_JOB", "verify")
        .assert()
        .success();
    let source = &project.json("verify-matrix-results/verify-matrix-local.json")["source"];
    assert_eq!(
        source,
        &serde_json::json!({"repository": "o/r", "commit": "abc123head", "pr": 12, "run_id": "77", "run_attempt": 2, "job": "verify"})
    );
}

#[test]
fn pwsh_runs_where_present_and_is_a_clear_error_where_absent() {
    let project = Project::new(&manifest_with(
        "  - id: ps\n    shell: pwsh\n    run: exit 0\n",
    ));
    let present = std::process::Command::new("pwsh")
        .arg("-Version")
        .output()
        .is_ok();
    let assert = project.cmd().assert();
    let check = &checks_of(&project, "local")[0];
    if present {
        assert.success();
        assert_eq!(check["status"], "PASS");
    } else {
        assert.code(1);
        assert_eq!(check["status"], "ERROR");
        assert_eq!(check["exit_code"], 127);
        assert_eq!(check["summary"], "command not found: pwsh");
    }
}

/// A run that does not cover every required pair of the manifest says what it ran and
/// never prints the verdict line coordinators match, whatever passed; a complete run
/// does.
#[test]
fn a_partial_run_never_prints_the_verdict_line() {
    let verified = regex::Regex::new(r"All Required Environments: VERIFIED").unwrap();
    let project = Project::new(
        "version: 1\nenvironments: [{ name: a }, { name: b }]\ndefaults: { grace: 1s }\nchecks:\n  \
         - { id: first, run: 'true' }\n  - { id: slow, run: 'sleep 2.5', environment: b }\n  \
         - { id: after, run: 'true', environment: b }\n  \
         - { id: second, run: 'exit 1', required: false }\n",
    );
    for (args, code, line) in [
        (
            &["run", "--env", "a", "--env", "b", "--check", "first"][..],
            0,
            "Partial run: 2 of 4 required pairs; not a verdict",
        ),
        (
            &["run", "--env", "a"][..],
            0,
            "Partial run: 1 of 4 required pairs; not a verdict",
        ),
        (
            &["run", "--env", "b", "--env", "a", "--run-timeout", "1s"][..],
            1,
            "Partial run: 3 of 4 required pairs; not a verdict",
        ),
    ] {
        let out = project.cmd().args(args).output().unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}:\n{stdout}");
        assert!(!verified.is_match(&stdout), "{args:?}:\n{stdout}");
        assert!(stdout.contains(line), "{args:?}:\n{stdout}");
    }
    let complete = project
        .cmd()
        .args(["run", "--env", "a", "--env", "b"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(complete.stdout).unwrap();
    assert_eq!(complete.status.code(), Some(0), "{stdout}");
    assert!(verified.is_match(&stdout), "{stdout}");
}

/// A failure says its cause where the exit code has one: the command the shell could not
/// find (named from the shell's own line in the log), one it could not run, a signal
/// that ended it; and a pair the leg did not run says why and what to run.
#[test]
fn a_failure_says_its_cause_and_a_missing_pair_its_next_step() {
    let project = Project::new(&manifest_with(concat!(
        "  - { id: lint, run: ruff-3f9a check . }\n",
        "  - { id: script, run: ./data.txt }\n",
        "  - { id: killed, run: 'kill -TERM $$' }\n",
        "  - { id: plain, run: exit 3 }\n",
    )));
    project.write("data.txt", "not a program\n");
    let out = project.std_cmd().arg("run").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let checks = checks_of(&project, "local");
    for (id, says) in [
        (
            "lint",
            "command not found: `ruff-3f9a` (exit 127, required 0) in ",
        ),
        (
            "script",
            "not executable: `./data.txt` (exit 126, required 0) in ",
        ),
        ("killed", "killed by SIGTERM (exit 143, required 0) in "),
        ("plain", "exit 3 (required 0) in "),
    ] {
        let summary = by_id(&checks, id)["summary"].as_str().unwrap();
        assert!(summary.starts_with(says), "{id}: {summary}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    for reason in [
        "\n  - lint failed in local: command not found (exit 127)\n",
        "\n  - script failed in local: not executable (exit 126)\n",
        "\n  - killed failed in local: killed by SIGTERM (exit 143)\n",
        "\n  - plain failed in local (exit 3)\n",
    ] {
        assert!(stdout.contains(reason), "{reason:?} in\n{stdout}");
    }
    // A leg that ran only some checks: each pair it left says so and what to run.
    let one = project
        .std_cmd()
        .args(["run", "--check", "plain", "--out", "one"])
        .output()
        .unwrap();
    assert_eq!(one.status.code(), Some(1), "{one:?}");
    let merged = project.std_cmd().args(["merge", "one"]).output().unwrap();
    let text = String::from_utf8_lossy(&merged.stdout);
    assert!(
        text.contains(
            "\n  - lint in local: no result for this check in the local results: the leg did not run it (a run with `--check` runs only those); run `cargo verify-matrix run --env local --check lint` and merge again\n"
        ),
        "{text}"
    );
}
