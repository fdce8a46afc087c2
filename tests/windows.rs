//! Windows: a check's processes live in a job object of its own. A hung check whose
//! child outlives its shell ends at its timeout and grace; a child left running after
//! the check's main process exited is a leak, listed and killed; a tool killed by any
//! means takes its checks with it.
//!
//! Built for `x86_64-pc-windows-gnu` and run on Windows or under wine
//! (`scripts/test-windows.sh`). Wine (8.0) cannot deliver a Ctrl-Break to another
//! process's console group, so there a check is always ended by its job being
//! terminated after the grace; everything else here runs under wine as on Windows.
//! Not here, because wine has neither: `shell: bash` (Git for Windows' bash, which a
//! wine prefix does not have) and `shell: pwsh`/`powershell` (PowerShell does not run
//! under wine 8); their command lines are the ones `run::argv` builds on every system.
#![cfg(windows)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn tool() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-verify-matrix"));
    command.env_remove("GITHUB_ACTIONS").env_remove("CI");
    command
}

/// A folder with `verify-matrix.yml` holding one environment and `checks` (YAML lines).
fn project(checks: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("verify-matrix.yml"),
        format!("version: 1\nenvironments:\n  - name: local\nchecks:\n{checks}"),
    )
    .unwrap();
    dir
}

fn run(dir: &Path) -> Output {
    tool()
        .args(["run", "--env", "local", "--out", "results"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The one check's result in the run's result file.
fn check(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("results/verify-matrix-local.json")).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    // The checks are a table (format 3): the first row, each value by its column's name.
    let table = &file["checks"];
    let columns = table["columns"].as_array().unwrap();
    let row = table["rows"][0].as_array().unwrap();
    let object = columns
        .iter()
        .zip(row)
        .map(|(column, value)| (column.as_str().unwrap().to_owned(), value.clone()))
        .collect();
    Value::Object(object)
}

fn log(dir: &Path, id: &str) -> String {
    std::fs::read_to_string(dir.join(format!("results/logs/local/{id}.log"))).unwrap_or_default()
}

#[test]
fn a_hung_check_whose_child_outlives_its_shell_ends_at_its_timeout() {
    // cmd waits for ping; the timeout ends the job, ping included (before jobs, the
    // tool killed cmd and waited for ping's own end: 119 s).
    let dir = project(
        "  - id: hang\n    shell: cmd\n    run: ping -n 120 127.0.0.1\n    timeout: 3s\n    grace: 2s\n",
    );
    let started = Instant::now();
    let out = run(dir.path());
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let check = check(dir.path());
    assert_eq!(check["timed_out"], true, "{check}");
    assert_eq!(check["status"], "ERROR", "{check}");
    assert_eq!(check["exit_code"], 124, "{check}");
    // Far below ping's 119 s, with room for a loaded machine running wine.
    assert!(took < Duration::from_secs(60), "the run took {took:?}");
}

#[test]
fn a_child_left_running_is_a_leak_listed_with_its_program_and_killed() {
    // `start /b` leaves ping running in the background after cmd exits 0 (as a
    // `shell: cmd` check, `start` would be refused before it ran).
    let dir = project(
        "  - id: leaky\n    shell: none\n    run: cmd /c \"start /b ping -n 90 127.0.0.1\"\n    grace: 2s\n",
    );
    let started = Instant::now();
    let out = run(dir.path());
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let check = check(dir.path());
    assert_eq!(check["status"], "ERROR", "{check}");
    assert_eq!(check["exit_code"], 0, "{check}");
    let leaked = check["leaked"].as_array().unwrap();
    assert!(
        leaked.iter().any(|l| l["command"]
            .as_str()
            .unwrap()
            .to_ascii_lowercase()
            .ends_with("ping.exe")),
        "{check}"
    );
    assert!(took < Duration::from_secs(60), "the run took {took:?}");
}

#[test]
fn cmd_gets_the_command_as_written() {
    // Quotes, an ampersand and a percent sign reach cmd.exe as written.
    let dir =
        project("  - id: quoted\n    shell: cmd\n    run: echo \"a & b\" 100%& echo second\n");
    let out = run(dir.path());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let log = log(dir.path(), "quoted");
    assert!(log.contains("\"a & b\" 100%"), "{log}");
    assert!(log.contains("second"), "{log}");
}

#[test]
fn a_failing_cmd_command_fails_the_check_with_its_exit_code() {
    let dir = project("  - id: fails\n    shell: cmd\n    run: exit /b 3\n");
    let out = run(dir.path());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let check = check(dir.path());
    assert_eq!(check["exit_code"], 3, "{check}");
    assert_eq!(check["status"], "FAIL", "{check}");
}

/// The last modification of `file`, if it exists.
fn modified(file: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(file).and_then(|m| m.modified()).ok()
}

fn wait_for(file: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while modified(file).is_none() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_killed_tool_takes_its_checks_with_it() {
    // The check writes a tick file every second or so; once the tool is killed
    // (TerminateProcess: no handler runs), the job closes and the ticks stop.
    let dir = project(
        "  - id: ticks\n    shell: cmd\n    run: for /l %i in (1,1,300) do @(echo %i> tick.txt & ping -n 2 127.0.0.1 > nul)\n    timeout: 10m\n",
    );
    let tick = dir.path().join("tick.txt");
    let mut child = tool()
        .args(["run", "--env", "local", "--out", "results"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&tick);
    child.kill().unwrap();
    child.wait().unwrap();
    // Let a last tick land, then the file must stay as it is.
    std::thread::sleep(Duration::from_secs(3));
    let before = std::fs::read_to_string(&tick).unwrap_or_default();
    std::thread::sleep(Duration::from_secs(5));
    let after = std::fs::read_to_string(&tick).unwrap_or_default();
    assert_eq!(before, after, "the check kept running after the tool died");
}
