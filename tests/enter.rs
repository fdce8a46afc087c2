//! Entering an environment (`enter:`): `run` gets into an environment this machine is
//! not, through a real way in (bubblewrap over this machine's root, with a `/tmp` of its
//! own), and runs each check inside under the tool's own supervisor there: timeouts,
//! interrupts and a killed tool hold inside as on the host, the results come home, and a
//! way in that cannot start blocks its environment, never the others.
#![cfg(target_os = "linux")]

mod common;

use common::{Project, alive, check_in as check, signal, start_until_alive, wait_until_gone};
use serde_json::Value;

/// bubblewrap's way in (scripts/test.sh installs it): the root read-only, a `/tmp` of
/// its own, the repository bound at its own path.
const BWRAP: &str = "[bwrap, --ro-bind, /, /, --tmpfs, /tmp, --bind, '{repo}', '{repo}', --dev, /dev, --proc, /proc, --die-with-parent, --]";

/// A manifest with a host environment and `sandbox`, entered through bubblewrap, and
/// `checks`.
fn manifest(checks: &str) -> String {
    format!(
        "version: 1\nenvironments:\n  - name: host\n  - name: sandbox\n    enter:\n      command: {BWRAP}\nchecks:\n{checks}"
    )
}

fn bwrap_is_here() {
    let out = std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--", "true"])
        .output();
    assert!(
        out.as_ref().is_ok_and(|o| o.status.success()),
        "bubblewrap cannot run here (scripts/test.sh installs Debian's bubblewrap): {out:?}"
    );
}

#[test]
fn the_checks_run_inside_and_their_results_come_home() {
    bwrap_is_here();
    let marker = format!("/tmp/verify-matrix-enter-{}", std::process::id());
    std::fs::write(&marker, "host").unwrap();
    let project = Project::new(&manifest(&format!(
        "  - id: where\n    run: 'echo \"in $VERIFY_MATRIX_ENV, mark ${{VERIFY_MATRIX_ENTERED:-none}}\"; test ! -e {marker}; touch inside.txt'\n"
    )));
    let out = project
        .std_cmd()
        .args(["run", "--env", "sandbox"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    std::fs::remove_file(&marker).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The inner run's live line came through.
    assert!(stderr.contains("sandbox where"), "{stderr}");
    // Inside, the host's /tmp was not there; the repository was, at its own path.
    assert!(project.path().join("inside.txt").exists());
    let result = project.json("verify-matrix-results/verify-matrix-sandbox.json");
    assert_eq!(result["outcome"], "complete");
    assert_eq!(check(&result, "where")["status"], "PASS");
    let log = project.read("verify-matrix-results/logs/sandbox/where.log");
    // The run inside knows it is inside; its checks are not told (their own run of the
    // tool would enter afresh).
    assert!(log.contains("in sandbox, mark none"), "{log}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("| where | sandbox |") || stdout.contains("where │ sandbox"),
        "{stdout}"
    );
}

#[test]
fn a_way_in_that_cannot_start_blocks_its_environment_and_the_others_still_run() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - name: host\n  - name: broken\n    enter:\n      command: [no-such-sandbox-program, '{repo}']\n  - name: windows\n    runs-on: windows-latest\nchecks:\n  - { id: a, run: 'true' }\n",
    );
    let out = project.std_cmd().args(["run", "--all"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("broken: could not be entered: `no-such-sandbox-program` cannot be started: no such program"),
        "{stdout}"
    );
    assert!(stdout.contains("windows: not run here"), "{stdout}");
    assert!(
        !stdout.contains("All Required Environments: VERIFIED"),
        "{stdout}"
    );
    // The host ran.
    let host = project.json("verify-matrix-results/verify-matrix-host.json");
    assert_eq!(check(&host, "a")["status"], "PASS");
    assert!(
        !project
            .path()
            .join("verify-matrix-results/verify-matrix-broken.json")
            .exists()
    );
}

#[test]
fn a_timeout_inside_holds_as_on_the_host() {
    bwrap_is_here();
    let project = Project::new(&manifest(
        "  - id: hangs\n    run: sleep 61.71\n    timeout: 1s\n    grace: 1s\n    environment: sandbox\n",
    ));
    let out = project
        .std_cmd()
        .args(["run", "--env", "sandbox"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let result = project.json("verify-matrix-results/verify-matrix-sandbox.json");
    let hangs = check(&result, "hangs");
    assert_eq!(hangs["timed_out"], true, "{hangs}");
    assert!(
        alive("sleep 61.71").is_empty(),
        "the check outlived its timeout"
    );
}

#[test]
fn an_interrupt_reaches_the_run_inside_which_writes_what_it_has() {
    bwrap_is_here();
    let project = Project::new(&manifest(
        "  - id: quick\n    run: 'true'\n    environment: sandbox\n  - id: slow\n    run: sleep 61.72\n    environment: sandbox\n  - id: after\n    run: 'true'\n    environment: sandbox\n",
    ));
    let mut cmd = project.std_cmd();
    cmd.args(["run", "--env", "sandbox"]);
    let mut tool = start_until_alive(cmd, "sleep 61.72");
    signal(tool.id(), "TERM");
    assert_eq!(tool.wait().unwrap().code(), Some(130));
    let result = project.json("verify-matrix-results/verify-matrix-sandbox.json");
    assert_eq!(result["outcome"], "interrupted");
    assert_eq!(check(&result, "quick")["status"], "PASS");
    assert!(
        check(&result, "slow")["summary"]
            .as_str()
            .unwrap()
            .starts_with("interrupted by SIGTERM"),
        "{result}"
    );
    assert_eq!(
        check(&result, "after")["summary"],
        "not run: interrupted by SIGTERM"
    );
    assert!(alive("sleep 61.72").is_empty());
}

#[test]
fn a_killed_tool_takes_the_run_inside_and_its_checks_along() {
    bwrap_is_here();
    let project = Project::new(&manifest(
        "  - id: stuck\n    run: sleep 61.73\n    environment: sandbox\n",
    ));
    let mut cmd = project.std_cmd();
    cmd.args(["run", "--env", "sandbox"]);
    let mut tool = start_until_alive(cmd, "sleep 61.73");
    tool.kill().unwrap();
    tool.wait().unwrap();
    assert!(
        wait_until_gone("sleep 61.73"),
        "the check outlived the tool"
    );
}

#[test]
fn a_way_in_that_does_not_bind_the_repository_is_refused_with_its_place() {
    let project =
        Project::new("version: 1\nenvironments: [{name: a}]\nchecks: [{id: x, run: 'true'}]\n");
    project.write(
        "bad.yml",
        "version: 1\nenvironments:\n  - name: a\n    enter:\n      command: [bwrap, --ro-bind, /, /, --]\n  - name: b\n    enter: {}\n  - name: c\n    enter:\n      command: []\nchecks:\n  - {id: x, run: 'true'}\n",
    );
    project.plan_refuses(
        "bad.yml",
        &[
            "bad.yml:5:16 (environments[0].enter.command)",
            "does not bind `{repo}`",
            "(environments[1].enter)",
            "`enter` says no way in",
            "(environments[2].enter.command)",
            "`enter.command` is empty",
        ],
    );
}

#[test]
fn a_way_in_that_leaves_a_process_behind_does_not_hold_the_run() {
    bwrap_is_here();
    // The way in starts a process that keeps its stderr open, then runs the tool.
    let project = Project::new(
        "version: 1\nenvironments:\n  - name: leaves\n    enter:\n      command: [sh, -c, '(sleep 61.75 >&2 &); shift; exec \"$@\"', sh, '{repo}']\nchecks:\n  - { id: a, run: 'true' }\n",
    );
    let started = std::time::Instant::now();
    let out = project
        .std_cmd()
        .args(["run", "--env", "leaves"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Not held until the leftover ends by itself (61.75 s): that is what is checked, not
    // how fast the run is.
    assert!(started.elapsed() < std::time::Duration::from_secs(45));
    let result = project.json("verify-matrix-results/verify-matrix-leaves.json");
    assert_eq!(check(&result, "a")["status"], "PASS");
    // Ended with the way in's group, once it had a moment to finish its lines.
    assert!(
        alive("sleep 61.75").is_empty(),
        "{:?}",
        alive("sleep 61.75")
    );
}

/// The Stop hook of a coding agent enters the environment too: the agent is blocked by
/// a failure inside it, and let through once the checks pass there.
#[test]
fn the_stop_hook_enters_the_environment_before_an_agent_may_stop() {
    bwrap_is_here();
    let marker = format!("/tmp/verify-matrix-hook-{}", std::process::id());
    std::fs::write(&marker, "host").unwrap();
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: sandbox\n    enter:\n      command: {BWRAP}\nchecks:\n  - id: unit\n    run: 'test ! -e {marker} && test -f fixed'\n"
    ));
    project.write(".gitignore", "verify-matrix-results/\nfixed\n");
    project.commit_all("manifest");
    let state = tempfile::tempdir().unwrap();
    // The session starts (the client sends its start event, as the book sets it up).
    let started = assert_cmd::Command::from_std({
        let mut cmd = project.std_cmd();
        cmd.args(["hook", "claude-code", "-q"])
            .env("XDG_STATE_HOME", state.path());
        cmd
    })
    .write_stdin(r#"{"session_id":"s","hook_event_name":"SessionStart"}"#)
    .output()
    .unwrap();
    assert_eq!(started.status.code(), Some(0), "{started:?}");
    let stop = |active: bool| {
        let out = assert_cmd::Command::from_std({
            let mut cmd = project.std_cmd();
            cmd.args(["hook", "claude-code", "-q"])
                .env("XDG_STATE_HOME", state.path());
            cmd
        })
        .write_stdin(format!(
            r#"{{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":".","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":{active}}}"#
        ))
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let blocked = stop(false);
    assert_eq!(blocked["decision"], "block", "{blocked}");
    assert!(
        blocked["reason"]
            .as_str()
            .unwrap()
            .contains("unit in sandbox: FAIL"),
        "{blocked}"
    );
    project.write("fixed", "");
    let through = stop(true);
    std::fs::remove_file(&marker).unwrap();
    // It passed inside: on the host, the marker would have failed it.
    assert_eq!(
        through["systemMessage"],
        "verify-matrix: All Required Environments: VERIFIED (1 pair in sandbox)",
        "{through}"
    );
}

#[test]
fn a_shard_of_an_entered_environment_runs_inside_and_its_file_comes_home() {
    bwrap_is_here();
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: sandbox\n    shards: 2\n    enter:\n      command: {BWRAP}\nchecks:\n  - id: slice\n    run: 'echo \"slice {{shard}} of {{shards}} in $VERIFY_MATRIX_ENV\"'\n"
    ));
    let out = project
        .std_cmd()
        .args(["run", "--env", "sandbox", "--shard", "2/2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let result = project.json("verify-matrix-results/verify-matrix-sandbox@2of2.json");
    assert_eq!(result["shard"]["index"], 2);
    assert_eq!(check(&result, "slice")["status"], "PASS");
    let log = project.read("verify-matrix-results/logs/sandbox@2of2/slice.log");
    assert!(log.contains("slice 2 of 2 in sandbox"), "{log}");
}

/// The tool inside a way in never depends on where its binary lives on this machine: a
/// copy of the tool in a folder the way in hides (as `/tmp` hides a target folder or a
/// clone under it) still runs the checks inside, from its copy in the repository, which
/// git does not see.
#[test]
fn the_tool_runs_inside_wherever_its_binary_lives_here() {
    bwrap_is_here();
    let elsewhere = tempfile::tempdir().unwrap();
    let tool = elsewhere.path().join("cargo-verify-matrix");
    std::fs::copy(common::std_bin().get_program(), &tool).unwrap();
    let hidden = elsewhere.path().display().to_string();
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: sandbox\n    enter:\n      command: [bwrap, --ro-bind, /, /, --tmpfs, '{hidden}', --bind, '{{repo}}', '{{repo}}', --dev, /dev, --proc, /proc, --die-with-parent, --]\nchecks:\n  - {{ id: inside, run: 'test ! -e {hidden}/cargo-verify-matrix' }}\n"
    ));
    project.git(&["init", "-q"]);
    let out = std::process::Command::new(&tool)
        .args(["run", "--env", "sandbox"])
        .current_dir(project.path())
        .env_remove("VERIFY_MATRIX_ENV")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let result = project.json("verify-matrix-results/verify-matrix-sandbox.json");
    assert_eq!(check(&result, "inside")["status"], "PASS", "{result}");
    // The copy is in the repository, and git does not see it.
    assert!(
        project
            .path()
            .join(".verify-matrix/bin/cargo-verify-matrix")
            .is_file()
    );
    let status = project.git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains(".verify-matrix/"), "{status}");
}

/// The folder the tool is placed in is the repository's: a link planted there, to a
/// folder elsewhere, is refused and nothing is written through it.
#[test]
fn the_tools_folder_in_the_repository_is_never_a_link_out() {
    bwrap_is_here();
    let outside = tempfile::tempdir().unwrap();
    let project = Project::new(&manifest("  - { id: unit, run: 'true' }\n"));
    std::fs::create_dir_all(project.path().join(".verify-matrix")).unwrap();
    std::os::unix::fs::symlink(outside.path(), project.path().join(".verify-matrix/bin")).unwrap();
    let out = project
        .std_cmd()
        .args(["run", "--env", "sandbox"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("this tool cannot be placed in the repository for the way in")
            && text.contains("not a folder of the repository"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
