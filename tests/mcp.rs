//! `cargo verify-matrix mcp` with a real client: the official MCP TypeScript SDK
//! (`@modelcontextprotocol/sdk`, which `scripts/test.sh` installs under
//! `target/tools/mcp-client`) driving the server over stdio in Node — the tools listed
//! with their schemas, each called, progress followed, a long run cancelled — on real
//! runs of a real project. (Node and the SDK run where the suite runs: Linux in CI.)
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Project, alive, repo_root};
use serde_json::Value;

/// The folder with the SDK's `node_modules` (scripts/test.sh installs it).
fn client_dir() -> PathBuf {
    let dir = std::env::var_os("VERIFY_MATRIX_MCP_CLIENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/tools/mcp-client"));
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk/package.json")
            .is_file(),
        "the MCP SDK is not installed in {}: scripts/test.sh installs it",
        dir.display()
    );
    dir
}

/// The client script run in `scenario` against the project: each answer it printed,
/// by what it was.
fn client(project: &Project, scenario: &str) -> Vec<(String, Value)> {
    // The script beside the SDK's node_modules, so that its imports resolve.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo_root().join("tests/mcp/client.mjs"),
        dir.path().join("client.mjs"),
    )
    .unwrap();
    link(
        &client_dir().join("node_modules"),
        &dir.path().join("node_modules"),
    );
    // A client that waits on an answer that never comes fails the test, never hangs it.
    let out = Command::new("timeout")
        .args(["300", "node"])
        .arg(dir.path().join("client.mjs"))
        .arg(env!("CARGO_BIN_EXE_cargo-verify-matrix"))
        .arg(project.path())
        .arg(scenario)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            (v["what"].as_str().unwrap().to_owned(), v["value"].clone())
        })
        .collect()
}

fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

fn get<'a>(answers: &'a [(String, Value)], what: &str) -> &'a Value {
    &answers
        .iter()
        .find(|(w, _)| w == what)
        .unwrap_or_else(|| panic!("no `{what}` answer: {answers:#?}"))
        .1
}

/// `unit` runs the tests in tests.txt through a JUnit report, `parse_dates` failing with
/// its place; `lint` passes.
const MANIFEST: &str = r#"version: 1
environments: [{name: local}]
checks:
  - id: unit
    test: |
      { echo '<testsuite name="s">'; while read t; do if [ "$t" = parse_dates ]; then echo "<testcase classname=\"tests.dates\" name=\"$t\" file=\"tests/dates.rs\" line=\"42\"><failure message=\"assertion failed: left == right\">boom</failure></testcase>"; else echo "<testcase classname=\"tests.dates\" name=\"$t\"/>"; fi; done < tests.txt; echo '</testsuite>'; } > junit.xml
      ! grep -q failure junit.xml
    reports: junit.xml
  - { id: lint, run: 'echo linted' }
"#;

fn project() -> Project {
    let project = Project::new(MANIFEST);
    project.write("tests.txt", "a\nparse_dates\nb\n");
    project.write("tests/dates.rs", &"// dates\n".repeat(50));
    project.commit_all("tests");
    project
}

#[test]
fn the_sdk_client_lists_calls_and_follows_every_tool() {
    let project = project();
    let answers = client(&project, "tour");
    let tools = get(&answers, "tools").as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["plan", "run", "verdict", "failures"]);
    assert!(tools.iter().all(|t| t["inputSchema"]["type"] == "object"));

    let plan = &get(&answers, "plan")["structuredContent"];
    assert_eq!(plan["environments"][0]["name"], "local");
    assert_eq!(plan["environments"][0]["runnable_here"], true);
    assert_eq!(
        plan["environments"][0]["checks"],
        serde_json::json!(["unit", "lint"])
    );

    // One progress notification per finished check.
    let progress = get(&answers, "progress").as_array().unwrap();
    assert_eq!(progress.len(), 2, "{progress:#?}");
    assert!(
        progress[0]["message"]
            .as_str()
            .unwrap()
            .contains("local unit")
    );

    let run = get(&answers, "run");
    assert_eq!(run["isError"], false);
    let result = &run["structuredContent"];
    assert_eq!(result["verdict"], "NOT_VERIFIED");
    assert_eq!(result["pairs"][0]["result"], "FAIL");
    assert_eq!(result["pairs"][1]["result"], "PASS");
    assert_eq!(result["pairs"][0]["tests"]["failed"], 1);
    assert_eq!(result["failures_total"], 1);
    assert_eq!(result["failures"][0]["test"], "tests.dates › parse_dates");
    let text = run["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("verdict: NOT_VERIFIED; reasons (quoted): "),
        "{text}"
    );

    // The latest results without running, taken at HEAD, nothing changed since.
    let verdict = &get(&answers, "verdict")["structuredContent"];
    assert_eq!(verdict["verdict"], "NOT_VERIFIED");
    assert_eq!(verdict["stale"], false, "{verdict:#}");
    assert_eq!(
        verdict["commit"],
        project.git(&["rev-parse", "HEAD"]).trim()
    );

    // The failing test, with enough to act on; then no more.
    let failures = &get(&answers, "failures")["structuredContent"];
    assert_eq!(failures["total"], 1);
    let first = &failures["failures"][0];
    assert_eq!(first["test"], "tests.dates › parse_dates");
    assert_eq!(first["message"], "assertion failed: left == right");
    assert_eq!(first["file"], "tests/dates.rs");
    assert_eq!(first["line"], 42);
    assert!(
        Path::new(first["log_path"].as_str().unwrap()).is_file(),
        "{first:#}"
    );
    assert_eq!(failures["next_offset"], Value::Null);
    assert_eq!(
        get(&answers, "failures-next")["structuredContent"]["failures"],
        serde_json::json!([])
    );

    let resources = get(&answers, "resources").as_array().unwrap();
    assert_eq!(resources[0]["uri"], "verify-matrix://manifest");
    let manifest = &get(&answers, "manifest")["contents"][0]["text"];
    assert_eq!(manifest.as_str().unwrap(), MANIFEST);

    // Bad input: a JSON-RPC error each, saying what is wrong; nothing runs.
    for (what, says) in [
        (
            "bad-name",
            "`checks` holds \"; rm -rf /\", which is not a name",
        ),
        (
            "unknown-check",
            "`checks` names `unti`, which the manifest does not declare (did you mean `unit`?); it declares: unit, lint",
        ),
        (
            "unknown-argument",
            "`plan` takes no argument `verbose`; it takes: none",
        ),
        (
            "negative-page",
            "`offset` must be a whole number from 0 to 4294967295, not -1",
        ),
        (
            "unknown-tool",
            "no tool `failrues` (did you mean `failures`?): plan, run, verdict, failures",
        ),
    ] {
        let error = get(&answers, what)["error"].as_str().unwrap_or_default();
        assert!(error.contains("MCP error -32602"), "{what}: {error}");
        assert!(error.contains(says), "{what}: {error}");
    }
}

#[test]
fn a_verdict_taken_before_the_tree_changed_is_stale() {
    let project = project();
    client(&project, "tour");
    // The agent edits a file after the run.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    project.write("tests.txt", "a\nb\n");
    let answers = client(&project, "stale");
    let verdict = &get(&answers, "verdict")["structuredContent"];
    assert_eq!(verdict["stale"], true, "{verdict:#}");
    assert!(
        verdict["stale_because"]
            .as_str()
            .unwrap()
            .contains("tests.txt"),
        "{verdict:#}"
    );
    let text = get(&answers, "verdict")["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.starts_with("STALE ("), "{text}");
}

#[test]
fn a_cancelled_run_stops_keeps_what_finished_and_is_no_verdict() {
    let project = Project::new(
        "version: 1
environments: [{name: local}]
checks:
  - { id: quick, run: 'true' }
  - { id: slow, run: 'sleep 47.25' }
",
    );
    project.commit_all("manifest");
    let answers = client(&project, "cancel");
    let second = get(&answers, "second-run");
    assert!(
        second["error"]
            .as_str()
            .is_some_and(|e| e.contains("a run is going")),
        "{second:#}"
    );
    let cancelled = get(&answers, "cancelled");
    assert!(cancelled["aborted"].is_string(), "{cancelled:#}");
    assert!(cancelled["ms"].as_u64().unwrap() < 30_000, "{cancelled:#}");
    // The run was stopped: the slow check is gone, the quick one's result kept.
    assert!(alive("sleep 47.25").is_empty(), "the slow check still runs");
    let verdict = &get(&answers, "verdict")["structuredContent"];
    assert_eq!(verdict["verdict"], "NOT_VERIFIED", "{verdict:#}");
    let pairs = verdict["pairs"].as_array().unwrap();
    assert!(
        pairs
            .iter()
            .any(|p| p["check"] == "quick" && p["result"] == "PASS"),
        "{verdict:#}"
    );
    assert!(
        !pairs
            .iter()
            .any(|p| p["check"] == "slow" && p["result"] == "PASS"),
        "{verdict:#}"
    );
}

#[test]
fn a_manifest_outside_the_repository_is_refused() {
    let project = project();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("verify-matrix.yml"), MANIFEST).unwrap();
    let out = project
        .std_cmd()
        .arg("--manifest")
        .arg(elsewhere.path().join("verify-matrix.yml"))
        .arg("mcp")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is outside the repository"), "{stderr}");
}

/// The official inspector's CLI mode lists the tools, calls one and reads the manifest.
#[test]
fn the_inspectors_cli_lists_calls_and_reads() {
    let project = project();
    let inspector = client_dir().join("node_modules/.bin/inspector");
    assert!(
        inspector.is_file(),
        "no inspector: scripts/test.sh installs it"
    );
    let home = tempfile::tempdir().unwrap();
    let ask = |method: &[&str]| -> Value {
        let out = Command::new(&inspector)
            .arg("--cli")
            .arg("--cwd")
            .arg(project.path())
            .args(method)
            .arg(env!("CARGO_BIN_EXE_cargo-verify-matrix"))
            .arg("mcp")
            // Its catalog of servers goes in a folder of its own.
            .env("HOME", home.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{method:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let tools = ask(&["--method", "tools/list"]);
    assert_eq!(tools["tools"].as_array().unwrap().len(), 4, "{tools:#}");
    let plan = ask(&["--method", "tools/call", "--tool-name", "plan"]);
    assert_eq!(
        plan["structuredContent"]["environments"][0]["name"],
        "local"
    );
    let manifest = ask(&[
        "--method",
        "resources/read",
        "--uri",
        "verify-matrix://manifest",
    ]);
    assert_eq!(manifest["contents"][0]["text"], MANIFEST);
}

#[test]
fn an_agent_runs_an_environment_it_enters() {
    // `sandbox` is entered through bubblewrap (scripts/test.sh installs it), the
    // repository bound at its path; its check passes only inside, where the host's
    // marker in /tmp is not.
    let marker = tempfile::NamedTempFile::new_in("/tmp").unwrap();
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: sandbox\n    enter:\n      command: [bwrap, --ro-bind, /, /, --tmpfs, /tmp, --bind, '{{repo}}', '{{repo}}', --dev, /dev, --proc, /proc, --die-with-parent, --]\n  - name: ci-only\n    runs-on: windows-latest\nchecks:\n  - id: inside\n    run: 'test ! -e {}'\n    environment: sandbox\n",
        marker.path().display()
    ));
    project.commit_all("manifest");
    let answers = client(&project, "enter");
    let plan = &get(&answers, "plan")["structuredContent"];
    assert_eq!(plan["environments"][0]["runnable_here"], true, "{plan:#}");
    assert_eq!(plan["environments"][0]["entered_by"], "command");
    assert_eq!(plan["environments"][0]["only_ci"], Value::Null);
    assert_eq!(plan["environments"][1]["runnable_here"], false);
    let run = &get(&answers, "run")["structuredContent"];
    assert_eq!(run["pairs"][0]["environment"], "sandbox", "{run:#}");
    assert_eq!(run["pairs"][0]["result"], "PASS", "{run:#}");
}

/// The server judges by the manifest committed when it started, as the hook does: a
/// weakening of the working copy runs nothing and judges nothing, with the reason.
#[test]
fn a_weakened_manifest_is_never_judged_by() {
    let project = project();
    project.write(
        "verify-matrix.yml",
        &MANIFEST.replace(
            "    reports: junit.xml\n",
            "    reports: junit.xml\n    required: false\n",
        ),
    );
    let answers = client(&project, "weakened");
    for what in ["run", "verdict"] {
        let answer = get(&answers, what);
        assert_eq!(answer["isError"], true, "{what}: {answer:#}");
        let error = answer["structuredContent"]["error"].as_str().unwrap();
        assert!(
            error
                .contains("was changed in ways not proven to strengthen the manifest committed at")
                && error.contains("check `unit` was made optional"),
            "{what}: {error}"
        );
    }
    assert!(
        !project
            .path()
            .join("verify-matrix-results/mcp/latest")
            .exists()
    );
}

/// `run` without `environments` runs what this machine can (the others are CI's).
#[test]
fn run_without_environments_runs_what_this_machine_can() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - { name: here }\n  - { name: ci-only, runs-on: windows-latest }\nchecks:\n  - { id: unit, run: 'true' }\n",
    );
    project.commit_all("manifest");
    let answers = client(&project, "what-runs-here");
    let run = &get(&answers, "run")["structuredContent"];
    assert_eq!(
        run["environments_tested"],
        serde_json::json!(["here"]),
        "{run:#}"
    );
    assert_eq!(run["pairs"][0]["result"], "PASS", "{run:#}");
    assert_eq!(
        run["verdict"], "NOT_VERIFIED",
        "ci-only is not run here: {run:#}"
    );
}

/// A server killed while a run goes (SIGKILL from its client) takes the run and its
/// checks along: the run is linked to it by its stdin, stops its checks and keeps
/// what finished.
#[test]
fn a_killed_server_leaves_nothing_running() {
    let project = Project::new(
        "version: 1
environments: [{name: local}]
checks:
  - { id: quick, run: 'true' }
  - { id: slow, run: 'sleep 53.25' }
",
    );
    project.commit_all("manifest");
    let answers = client(&project, "killed");
    assert!(get(&answers, "server").is_u64(), "{answers:?}");
    assert!(
        common::wait_until_gone("sleep 53.25"),
        "the slow check outlived the server"
    );
    // The run stopped as at SIGHUP, and wrote what it had.
    let result = &project
        .path()
        .join("verify-matrix-results/mcp/latest/verify-matrix-local.json");
    for _ in 0..100 {
        if std::fs::read_to_string(result).is_ok_and(|t| t.contains("interrupted")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let result: Value = serde_json::from_str(&std::fs::read_to_string(result).unwrap()).unwrap();
    assert_eq!(result["outcome"], "interrupted", "{result:#}");
    assert_eq!(common::check_in(&result, "quick")["status"], "PASS");
}

/// One server, its raw stdio: lines written, answers read (each within a bound).
struct Raw {
    child: std::process::Child,
    answers: std::sync::mpsc::Receiver<String>,
}

impl Raw {
    fn start(project: &Project, args: &[&str]) -> Raw {
        use std::io::BufRead as _;
        let mut child = project
            .std_cmd()
            .arg("mcp")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Raw { child, answers }
    }

    fn send(&mut self, line: &str) {
        use std::io::Write as _;
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn answer(&self) -> Value {
        let line = self
            .answers
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("an answer");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    fn handshake(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
        assert_eq!(self.answer()["id"], 1);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A line that is not JSON gets JSON-RPC's parse error (-32700, id null), and the
/// session goes on.
#[test]
fn a_line_that_is_not_json_gets_a_parse_error() {
    let project = project();
    let mut raw = Raw::start(&project, &[]);
    raw.handshake();
    for line in [
        "{this is not json",
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","#,
    ] {
        raw.send(line);
        let answer = raw.answer();
        assert_eq!(answer["error"]["code"], -32700, "{line}: {answer}");
        assert_eq!(answer["id"], Value::Null, "{answer}");
    }
    raw.send(
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"plan","arguments":{}}}"#,
    );
    let answer = raw.answer();
    assert_eq!(answer["id"], 8, "{answer}");
    assert_eq!(answer["result"]["isError"], Value::Bool(false), "{answer}");
}

/// The results folder stays inside the repository: `--out` that leaves it is refused at
/// start, and a link planted where the results go is not followed out.
#[test]
fn the_results_folder_stays_inside_the_repository() {
    let project = project();
    let elsewhere = tempfile::tempdir().unwrap();
    let absolute = elsewhere.path().display().to_string();
    for out in ["../elsewhere", absolute.as_str()] {
        let run = project
            .std_cmd()
            .args(["mcp", "--out", out])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2), "{out}");
        assert!(
            String::from_utf8_lossy(&run.stderr).contains("must be a folder inside the repository"),
            "{out}: {run:?}"
        );
    }
    // A link planted after the server started, where its results go.
    let mut raw = Raw::start(&project, &["--out", "results"]);
    raw.handshake();
    std::fs::write(elsewhere.path().join("keep.txt"), "precious").unwrap();
    link(elsewhere.path(), &project.path().join("results"));
    raw.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{}}}"#,
    );
    let answer = raw.answer();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let error = answer["result"]["structuredContent"]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("leads outside the repository"), "{error}");
    assert!(elsewhere.path().join("keep.txt").exists());
    // The manifest resource, replaced by a link out after start: not read.
    std::fs::write(elsewhere.path().join("secret.yml"), "secret: yes\n").unwrap();
    std::fs::remove_file(project.path().join("verify-matrix.yml")).unwrap();
    link(
        &elsewhere.path().join("secret.yml"),
        &project.path().join("verify-matrix.yml"),
    );
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"verify-matrix://manifest"}}"#);
    let answer = raw.answer();
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("leads outside the repository"),
        "{answer}"
    );
    assert!(!answer.to_string().contains("secret: yes"), "{answer}");
}
