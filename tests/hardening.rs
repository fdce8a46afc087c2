//! The verification worker on real processes: refusals, leaked processes in every shape,
//! the whole-run timeout, interrupts, retries, the lock and odd output.

mod common;

use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
use common::wait_until_gone;
use common::{Project, alive, check_in as check, manifest_with, signal, wait_until_alive};
use predicates::prelude::*;
use serde_json::Value;

fn result(project: &Project) -> Value {
    project.json("verify-matrix-results/verify-matrix-local.json")
}

/// Waits until the run's journal (where a run records each check as it finishes) shows
/// `id` finished, or panics after 30 s.
fn wait_for_status(project: &Project, id: &str) {
    let path = project
        .path()
        .join("verify-matrix-results/verify-matrix-local.journal.jsonl");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "{id} never finished");
        if let Ok(text) = std::fs::read_to_string(&path)
            && text.lines().any(|line| {
                serde_json::from_str::<Value>(line)
                    .is_ok_and(|c| c["command_id"] == id && c["status"] != "NOT_RUN")
            })
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn background_commands_are_refused_and_never_spawned() {
    let project = Project::new(&manifest_with(
        "  - id: bg\n    run: touch spawned & true\n  - id: detached\n    run: nohup touch spawned2\n  - id: fine\n    run: echo \"a & b\" 2>&1 && true\n",
    ));
    project.cmd().assert().code(1);
    let result = result(&project);
    let bg = check(&result, "bg");
    assert_eq!(bg["status"], "ERROR");
    assert_eq!(bg["retryable"], false);
    assert_eq!(bg["exit_code"], Value::Null);
    assert!(
        bg["refused"]
            .as_str()
            .unwrap()
            .contains("runs in the background"),
        "{bg}"
    );
    assert!(bg["summary"].as_str().unwrap().starts_with("refused: "));
    assert!(
        check(&result, "detached")["refused"]
            .as_str()
            .unwrap()
            .contains("`nohup`")
    );
    assert_eq!(check(&result, "fine")["status"], "PASS");
    assert!(!project.path().join("spawned").exists() && !project.path().join("spawned2").exists());
}

#[test]
fn watch_commands_and_deny_patterns_are_refused() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: local}]\npolicy: { deny: ['rm -rf /'] }\nchecks:\n  - { id: watch, run: 'tail -f /dev/null' }\n  - { id: denied, run: 'rm -rf / --no-preserve-root' }\n",
    );
    project.cmd().assert().code(1);
    let result = result(&project);
    assert!(
        check(&result, "watch")["refused"]
            .as_str()
            .unwrap()
            .contains("policy.allow-watch")
    );
    assert_eq!(
        check(&result, "denied")["refused"],
        "matches policy.deny pattern `rm -rf /`"
    );
}

/// Runs a helper script that leaves `needle` running and writes its pid to `bg.pid`
/// (`$!`, which stays the same pid through `setsid` and `exec`).
fn leak_case(script: &str, needle: &str) -> Value {
    let project = Project::new(&manifest_with(
        "  - id: leaky\n    run: bash spawn.sh\n    grace: 1s\n",
    ));
    project.write("spawn.sh", script);
    project.cmd().assert().code(1);
    let check = check(&result(&project), "leaky").clone();
    assert_eq!(check["status"], "ERROR", "{check}");
    assert_eq!(check["retryable"], true);
    assert_eq!(check["exit_code"], 0, "the command itself exited 0");
    assert!(
        check["summary"]
            .as_str()
            .unwrap()
            .contains("running (killed)"),
        "{check}"
    );
    let background: u64 = project.read("bg.pid").trim().parse().unwrap();
    let leaked = check["leaked"].as_array().unwrap();
    assert!(
        leaked.iter().any(|l| l["pid"] == background),
        "pid {background} not listed: {check}"
    );
    assert!(
        leaked
            .iter()
            .all(|l| !l["command"].as_str().unwrap().is_empty()),
        "{check}"
    );
    assert_eq!(alive(needle), Vec::<String>::new(), "nothing left running");
    check
}

#[test]
fn a_background_child_holding_the_output_is_a_leak() {
    leak_case(
        "sleep 61.1 &\necho $! > bg.pid\necho started\n",
        "sleep 61.1",
    );
}

#[test]
fn a_background_child_with_redirected_output_is_a_leak() {
    leak_case(
        "sleep 61.2 >/dev/null 2>&1 &\necho $! > bg.pid\n",
        "sleep 61.2",
    );
}

#[test]
fn a_setsid_escape_with_redirected_output_is_a_leak() {
    leak_case(
        "setsid sleep 61.3 >/dev/null 2>&1 </dev/null &\necho $! > bg.pid\n",
        "sleep 61.3",
    );
}

#[test]
fn a_double_fork_setsid_escape_holding_the_output_is_a_leak() {
    leak_case(
        "( setsid sleep 61.4 & echo $! > bg.pid )\necho started\n",
        "sleep 61.4",
    );
}

#[test]
fn the_run_timeout_stops_the_running_check_and_skips_the_rest() {
    let project = Project::new(&manifest_with(
        "  - id: quick\n    run: 'true'\n  - id: hangs\n    run: sh -c 'sleep 62.5; true'\n  - id: never\n    run: 'true'\n",
    ));
    project
        .cmd()
        .args(["run", "--run-timeout", "2s"])
        .assert()
        .code(1);
    let result = result(&project);
    assert_eq!(result["outcome"], "run_timeout");
    assert_eq!(check(&result, "quick")["status"], "PASS");
    let hangs = check(&result, "hangs");
    assert_eq!(hangs["status"], "ERROR");
    assert!(
        hangs["summary"]
            .as_str()
            .unwrap()
            .starts_with("stopped: the run timeout expired"),
        "{hangs}"
    );
    let never = check(&result, "never");
    assert_eq!(never["status"], "NOT_RUN");
    assert_eq!(never["summary"], "not run: the run timeout (2s) expired");
    assert_eq!(alive("sleep 62.5"), Vec::<String>::new());
}

#[test]
fn the_manifest_run_timeout_applies_too() {
    let project = Project::new(
        "version: 1\nrun-timeout: 1s\nenvironments: [{name: local}]\ndefaults: {grace: 1s}\nchecks:\n  - { id: hangs, run: 'sleep 62.6' }\n",
    );
    project.cmd().assert().code(1);
    assert_eq!(result(&project)["outcome"], "run_timeout");
}

#[test]
fn sigterm_stops_the_run_keeps_what_finished_and_exits_130() {
    let project = Project::new(&manifest_with(
        "  - id: quick\n    run: 'true'\n  - id: long\n    run: sh -c 'sleep 63.1; true'\n  - id: after\n    run: 'true'\n",
    ));
    let mut child = project
        .std_cmd()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_status(&project, "quick");
    wait_until_alive("sleep 63.1");
    signal(child.id(), "TERM");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let result = result(&project);
    assert_eq!(result["outcome"], "interrupted");
    assert_eq!(check(&result, "quick")["status"], "PASS");
    let long = check(&result, "long");
    assert_eq!(long["status"], "ERROR");
    assert!(
        long["summary"]
            .as_str()
            .unwrap()
            .starts_with("interrupted by SIGTERM"),
        "{long}"
    );
    assert_eq!(
        check(&result, "after")["summary"],
        "not run: interrupted by SIGTERM"
    );
    assert_eq!(alive("sleep 63.1"), Vec::<String>::new());
}

#[test]
fn a_second_signal_kills_at_once() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: local}]\nchecks:\n  - { id: stubborn, run: \"trap '' TERM INT; sleep 63.2; true\", grace: 120s }\n",
    );
    let mut child = project
        .std_cmd()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until_alive("sleep 63.2");
    signal(child.id(), "INT");
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    signal(child.id(), "INT");
    let status = child.wait().unwrap();
    // Far less than the 120 s grace: the second signal did not wait for it.
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(status.code(), Some(130));
    assert_eq!(alive("sleep 63.2"), Vec::<String>::new());
    assert_eq!(result(&project)["outcome"], "interrupted");
}

#[test]
fn transient_failures_are_retried_and_a_late_pass_is_flaky() {
    let project = Project::new(&manifest_with(
        "  - id: net\n    retries: 2\n    run: bash flaky.sh\n  - id: plain\n    retries: 2\n    run: exit 1\n",
    ));
    project.write(
        "flaky.sh",
        "if [ -e tried ]; then echo ok; else touch tried; echo 'curl: Connection reset by peer'; exit 1; fi\n",
    );
    project
        .cmd()
        .assert()
        .code(1)
        .stdout(predicate::str::contains("PASS (flaky)"));
    let result = result(&project);
    let net = check(&result, "net");
    assert_eq!(net["status"], "PASS");
    assert_eq!(net["attempts"], 2);
    assert_eq!(net["flaky"], true);
    let plain = check(&result, "plain");
    assert_eq!(plain["attempts"], 1, "an ordinary failure is not retried");
    let log = project.read("verify-matrix-results/logs/local/net.log");
    assert!(
        log.contains("Connection reset") && log.contains("attempt 2 of 3") && log.ends_with("ok\n"),
        "{log}"
    );
}

#[test]
fn timeouts_are_retried() {
    let project = Project::new(&manifest_with(
        "  - id: slow_once\n    retries: 1\n    timeout: 1s\n    run: if [ -e tried ]; then true; else touch tried; sleep 64.1; fi\n",
    ));
    project.cmd().assert().success();
    let result = result(&project);
    assert_eq!(check(&result, "slow_once")["attempts"], 2);
    assert_eq!(check(&result, "slow_once")["flaky"], true);
}

#[test]
fn a_second_run_into_the_same_folder_is_refused_and_changes_nothing() {
    let project = Project::new(&manifest_with("  - id: a\n    run: 'true'\n"));
    project.cmd().assert().success();
    let before = project.read("verify-matrix-results/verify-matrix-local.json");
    let lock = std::fs::File::options()
        .write(true)
        .open(
            project
                .path()
                .join("verify-matrix-results/.verify-matrix-local.lock"),
        )
        .unwrap();
    lock.lock().unwrap();
    project
        .cmd()
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "another run of environment `local` is writing to `verify-matrix-results`",
        ));
    assert_eq!(
        project.read("verify-matrix-results/verify-matrix-local.json"),
        before
    );
}

#[test]
fn odd_output_is_recorded_exactly() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: binary\n    run: printf 'caf\\xe9\\x00\\xff\\n'\n",
        "  - id: closes_stdout\n    run: exec >&-; echo still >&2\n",
    )));
    project.cmd().assert().success();
    let bytes = std::fs::read(
        project
            .path()
            .join("verify-matrix-results/logs/local/binary.log"),
    )
    .unwrap();
    assert_eq!(bytes, b"caf\xe9\x00\xff\n");
    assert_eq!(
        project.read("verify-matrix-results/logs/local/closes_stdout.log"),
        "still\n"
    );
}

#[test]
fn every_environments_lock_is_taken_before_the_first_check_runs() {
    let project = Project::new(
        "version: 1\nenvironments: [{ name: a }, { name: b }]\nchecks:\n  \
         - { id: mark, run: 'touch ran-in-$VERIFY_MATRIX_ENV' }\n",
    );
    std::fs::create_dir_all(project.path().join("verify-matrix-results")).unwrap();
    let lock = std::fs::File::create(
        project
            .path()
            .join("verify-matrix-results/.verify-matrix-b.lock"),
    )
    .unwrap();
    lock.lock().unwrap();
    project
        .cmd()
        .args(["run", "--env", "a", "--env", "b"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "another run of environment `b` is writing to `verify-matrix-results`",
        ));
    assert!(!project.path().join("ran-in-a").exists(), "a never started");
    assert!(
        !project
            .path()
            .join("verify-matrix-results/verify-matrix-a.json")
            .exists()
    );
}

/// `kill -9` of the tool mid-check: each check's process group dies with it (the
/// watchdog), and what escaped the group is killed by the next run of the same
/// environment.
#[cfg(target_os = "linux")]
#[test]
fn a_sigkilled_run_leaves_nothing_running_after_the_next_start() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: alone\n    run: sleep 65.1\n",
        "  - id: with_child\n    run: sleep 65.2; true\n",
        "  - id: escaping\n    run: bash escape.sh\n",
    )));
    project.write("escape.sh", "setsid sleep 65.3\ntrue\n");
    let mut tool = project
        .std_cmd()
        .args(["run", "--jobs", "3"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until_alive("sleep 65.1");
    wait_until_alive("sleep 65.2");
    wait_until_alive("sleep 65.3");
    tool.kill().unwrap();
    tool.wait().unwrap();
    // The main process of `alone` is `sleep` itself (bash execs a lone command).
    assert!(wait_until_gone("sleep 65.1"), "{:?}", alive("sleep 65.1"));
    // `with_child`'s `sleep` is in the shell's group: it dies with it.
    assert!(wait_until_gone("sleep 65.2"), "{:?}", alive("sleep 65.2"));
    // `escaping`'s `sleep` left the group (its own session): it lives on.
    assert!(!alive("sleep 65.3").is_empty());

    // The next start of the environment finds and kills it before running anything.
    let next = project
        .cmd()
        .args(["run", "--check", "alone", "--run-timeout", "1s"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(
        stderr.contains("left running in local by a run that was killed"),
        "{stderr}"
    );
    assert!(stderr.contains("sleep 65.3"), "{stderr}");
    assert!(wait_until_gone("sleep 65.3"), "{:?}", alive("sleep 65.3"));
    assert!(
        !project
            .path()
            .join("verify-matrix-results/.verify-matrix-local.running")
            .exists(),
        "a run that ended leaves no list behind"
    );
}

/// A SIGKILL to the tool's whole process group (as a job-control kill does) does not take
/// the watchdog with it: it leads its own session, and the checks still die.
#[cfg(target_os = "linux")]
#[test]
fn a_sigkill_to_the_tools_whole_group_still_kills_the_checks() {
    use std::os::unix::process::CommandExt;
    let project = Project::new(&manifest_with(
        "  - id: first\n    run: sleep 65.4; true\n  - id: second\n    run: sleep 65.5\n",
    ));
    let mut tool = project
        .std_cmd()
        .args(["run", "--jobs", "2"])
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until_alive("sleep 65.4");
    wait_until_alive("sleep 65.5");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", tool.id())])
        .status()
        .unwrap();
    assert!(killed.success());
    tool.wait().unwrap();
    assert!(wait_until_gone("sleep 65.4"), "{:?}", alive("sleep 65.4"));
    assert!(wait_until_gone("sleep 65.5"), "{:?}", alive("sleep 65.5"));
}

/// The watchdog is the tool's own helper: never reported as a leak of a check, and gone
/// once the tool has ended.
#[cfg(target_os = "linux")]
#[test]
fn the_watchdog_is_no_leak_and_ends_with_the_tool() {
    let project = Project::new(&manifest_with(
        "  - id: one\n    run: \"true\"\n  - id: two\n    run: \"true\"\n",
    ));
    let out = project.path().join("watchdog-ends-65-6");
    let out = out.to_str().unwrap();
    project.cmd().args(["run", "--out", out]).assert().success();
    let mut result: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{out}/verify-matrix-local.json")).unwrap(),
    )
    .unwrap();
    common::checks_as_objects(&mut result);
    for check in result["checks"].as_array().unwrap() {
        assert_eq!(check["status"], "PASS", "{check}");
        assert_eq!(check["leaked"], serde_json::json!([]), "{check}");
    }
    assert!(wait_until_gone(out), "{:?}", alive(out));
}
