//! `hook claude-code` / `hook codex`: the Stop-hook gate, driven with the clients'
//! documented stdin JSON; the exact stdout and exit code of each answer. Each project is
//! a git repository with its manifest committed (what the gate trusts), and the gate's
//! state lives in a folder of its own outside it, as the user's state folder does.

mod common;

use common::Project;

/// A project whose `unit` check fails until the file `fixed` exists, committed, with a
/// state folder for the gate outside it.
struct Gate {
    project: Project,
    state: tempfile::TempDir,
    /// The sessions whose start event was sent (as a client set up as the book shows
    /// sends it).
    started: std::cell::RefCell<std::collections::HashSet<String>>,
}

impl std::ops::Deref for Gate {
    type Target = Project;
    fn deref(&self) -> &Project {
        &self.project
    }
}

const UNIT: &str =
    "    run: \"test -f fixed || { echo 'assertion failed: left == right'; exit 1; }\"\n";

fn manifest_text(extra: &str) -> String {
    format!(
        concat!(
            "version: 1\n",
            "environments:\n  - name: local\n{extra}",
            "checks:\n",
            "  - id: unit\n",
            "{unit}",
            "  - id: lint\n",
            "    run: \"true\"\n",
        ),
        extra = extra,
        unit = UNIT,
    )
}

fn project(extra: &str) -> Gate {
    let project = Project::new(&manifest_text(extra));
    project.write(".gitignore", "verify-matrix-results/\nfixed\n");
    project.commit_all("manifest");
    Gate {
        project,
        state: tempfile::tempdir().unwrap(),
        started: Default::default(),
    }
}

/// A Stop event of `session`; `active` is `stop_hook_active` (a stop that continues
/// after a block).
fn stop(session: &str, active: bool) -> String {
    stop_in(session, active, ".")
}

/// [`stop`] with the session's `cwd`.
fn stop_in(session: &str, active: bool, cwd: &str) -> String {
    format!(
        r#"{{"session_id":"{session}","transcript_path":"/tmp/t.jsonl","cwd":"{cwd}","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":{active}}}"#
    )
}

/// The hook's command in the project, its state in the gate's own folder.
fn hook_cmd(gate: &Gate, client: &str, args: &[&str]) -> std::process::Command {
    let mut cmd = gate.std_cmd();
    cmd.args(["hook", client, "-q"])
        .args(args)
        .env("XDG_STATE_HOME", gate.state.path());
    cmd
}

/// Sends `client`'s session-start event for `session` (once per session), as a client
/// set up as the book shows does before the session's first stop: the gate trusts the
/// commit `HEAD` names then.
fn begin(gate: &Gate, client: &str, session: &str) {
    if !gate.started.borrow_mut().insert(session.to_owned()) {
        return;
    }
    let input = match client {
        "cursor" => {
            serde_json::json!({"conversation_id": session, "hook_event_name": "sessionStart"})
        }
        _ => serde_json::json!({"session_id": session, "hook_event_name": "SessionStart"}),
    };
    let out = assert_cmd::Command::from_std(hook_cmd(gate, client, &[]))
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// The session an event names.
fn session_of(input: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(input).ok()?;
    v.get("session_id")
        .or_else(|| v.get("conversation_id"))?
        .as_str()
        .map(str::to_owned)
}

/// Runs the hook with `input` on stdin (the session started first): (exit code, stdout
/// with durations as `Nms`).
fn hook(gate: &Gate, client: &str, input: &str, args: &[&str]) -> (i32, String) {
    if let Some(session) = session_of(input) {
        begin(gate, client, &session);
    }
    let out = assert_cmd::Command::from_std(hook_cmd(gate, client, args))
        .write_stdin(input)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stdout = regex::Regex::new(r"in \d+ms")
        .unwrap()
        .replace_all(&stdout, "in Nms")
        .into_owned();
    (out.status.code().unwrap(), stdout)
}

/// The hook's answer as JSON.
fn answer(gate: &Gate, input: &str) -> serde_json::Value {
    let (code, stdout) = hook(gate, "claude-code", input, &[]);
    assert_eq!(code, 0, "{stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

const BLOCKED: &str = concat!(
    r#"{"decision":"block","reason":"verify-matrix: All Required Environments: NOT VERIFIED, so this stop is blocked (block BLOCK of at most MAX in a row). Fix what fails below, then stop again:\n"#,
    r#"- unit in local: FAIL (exit 1): exit 1 (required 0) in Nms\n"#,
    r#"  log: verify-matrix-results/logs/local/unit.log\n"#,
    r#"  | assertion failed: left == right\n"#,
    r#"Full results: verify-matrix-results/verify-matrix-local.json"}"#,
    "\n"
);

fn blocked(block: u32, max: u32) -> String {
    BLOCKED
        .replace("BLOCK", &block.to_string())
        .replace("MAX", &max.to_string())
}

const VERIFIED: &str = concat!(
    r#"{"systemMessage":"verify-matrix: All Required Environments: VERIFIED (2 pairs in local)"}"#,
    "\n"
);

#[test]
fn a_failing_project_blocks_the_stop_until_it_passes() {
    let project = project("");
    for client in ["claude-code", "codex"] {
        assert_eq!(
            hook(&project, client, &stop(client, false), &[]),
            (0, blocked(1, 3))
        );
        assert_eq!(
            hook(&project, client, &stop(client, true), &[]),
            (0, blocked(2, 3))
        );
    }
    project.write("fixed", "");
    assert_eq!(
        hook(&project, "claude-code", &stop("claude-code", true), &[]),
        (0, VERIFIED.to_owned())
    );
    // A pass ends the run of blocks: the next failure is block 1 again.
    std::fs::remove_file(project.path().join("fixed")).unwrap();
    assert_eq!(
        hook(&project, "claude-code", &stop("claude-code", true), &[]),
        (0, blocked(1, 3))
    );
}

#[test]
fn the_stop_goes_through_after_max_blocks_in_a_row_saying_not_verified() {
    let project = project("hook:\n  max-blocks: 2\n");
    assert_eq!(
        hook(&project, "claude-code", &stop("s", false), &[]),
        (0, blocked(1, 2))
    );
    assert_eq!(
        hook(&project, "claude-code", &stop("s", true), &[]),
        (0, blocked(2, 2))
    );
    let through = concat!(
        r#"{"systemMessage":"verify-matrix: NOT VERIFIED: unit failed in local (exit 1). The stop was blocked 2 times in a row in this session; it is let through so that the session does not loop. Full results: verify-matrix-results/verify-matrix-local.json"}"#,
        "\n"
    );
    assert_eq!(
        hook(&project, "claude-code", &stop("s", true), &[]),
        (0, through.to_owned())
    );
    // Another session has its own count; `--max-blocks` overrides the manifest.
    assert_eq!(
        hook(
            &project,
            "claude-code",
            &stop("other", true),
            &["--max-blocks", "5"]
        ),
        (0, blocked(1, 5))
    );
    // A stop that does not continue a block (a new prompt) starts the count again.
    assert_eq!(
        hook(&project, "claude-code", &stop("s", false), &[]),
        (0, blocked(1, 2))
    );
}

#[test]
fn a_subset_says_it_is_partial_never_verified() {
    let project = project("  - name: other\nhook:\n  checks: [lint]\n  environments: [local]\n");
    let (code, stdout) = hook(&project, "claude-code", &stop("p", false), &[]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        concat!(
            r#"{"systemMessage":"verify-matrix: the hook's checks passed in local (1 pair). Partial run: 1 of 4 required pairs; not a verdict"}"#,
            "\n"
        )
    );
    // `--check` picks the failing one: blocked, and still called partial.
    let (_, stdout) = hook(&project, "codex", &stop("p", false), &["--check", "unit"]);
    assert!(
        stdout.starts_with(r#"{"decision":"block","reason":"verify-matrix: The hook's checks failed (Partial run: 1 of 4 required pairs; not a verdict), so this stop is blocked"#),
        "{stdout}"
    );
    assert!(!stdout.contains("VERIFIED"), "{stdout}");
}

#[test]
fn input_that_is_not_the_hook_json_blocks_with_the_reason() {
    let project = project("");
    let (code, stdout) = hook(&project, "claude-code", "{not json", &[]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        concat!(
            r#"{"decision":"block","reason":"verify-matrix could not read the hook's input, so nothing was verified: stdin is not the hook's JSON object: key must be a string at line 1 column 2 (line 1, column 2)"}"#,
            "\n"
        )
    );
}

#[test]
fn a_broken_manifest_blocks_with_its_error_and_the_loop_still_ends() {
    let project = project("hook:\n  checks: [unti]\n  max-blocks: 1\n");
    let (code, stdout) = hook(&project, "claude-code", &stop("m", false), &[]);
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with(r#"{"decision":"block","reason":"verify-matrix could not check this work, so the stop is blocked (block 1 of at most 3 in a row): "#),
        "{stdout}"
    );
    assert!(
        stdout.contains("check `unti` is not defined (did you mean `unit`?)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("verify-matrix.yml:5:12 (hook.checks[0])"),
        "{stdout}"
    );
    let (_, stdout) = hook(
        &project,
        "claude-code",
        &stop("m", true),
        &["--max-blocks", "1"],
    );
    assert!(
        stdout.starts_with(
            r#"{"systemMessage":"verify-matrix: NOT VERIFIED (nothing could be checked: "#
        ),
        "{stdout}"
    );
}

#[test]
fn other_events_are_not_gated() {
    let project = project("");
    let (code, stdout) = hook(
        &project,
        "claude-code",
        r#"{"session_id":"x","hook_event_name":"PreToolUse","tool_name":"Bash"}"#,
        &[],
    );
    assert_eq!((code, stdout.as_str()), (0, ""));
    assert!(
        !project.path().join("verify-matrix-results").exists(),
        "nothing ran"
    );
}

/// A manifest with many problems still gives the agent a reason of a few kilobytes.
#[test]
fn a_long_error_is_cut_to_a_few_kilobytes() {
    let checks: String = (0..200)
        .map(|i| format!("  - id: c{i}\n    run: \"true\"\n    timout: 1s\n"))
        .collect();
    let project = project("");
    project.write(
        "verify-matrix.yml",
        &format!("version: 1\nenvironments:\n  - name: local\nchecks:\n{checks}"),
    );
    project.commit_all("broken");
    let (code, stdout) = hook(&project, "claude-code", &stop("long", false), &[]);
    assert_eq!(code, 0);
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["decision"], "block");
    let reason = answer["reason"].as_str().unwrap();
    assert!(reason.len() <= 4096, "{} bytes", reason.len());
    assert!(
        reason.ends_with("… (cut; run `cargo verify-matrix plan` to see it all)"),
        "{reason}"
    );
    assert!(reason.contains("unknown key `timout`"), "{reason}");
}

/// Each edit an agent in a hurry makes to a failing project's manifest: none lets the
/// stop through, each is named to the agent and to the person, and none says VERIFIED.
#[test]
fn a_weakened_manifest_blocks_and_is_told_to_the_person() {
    let unit_line = UNIT.trim_end();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "optional",
            manifest_text("").replace(unit_line, &format!("{unit_line}\n    required: false")),
            "check `unit` was made optional",
        ),
        (
            "exit code",
            manifest_text("").replace(unit_line, &format!("{unit_line}\n    exit-code: 1")),
            "check `unit`: `exit-code` was added (1)",
        ),
        (
            "expect failure",
            manifest_text("").replace(unit_line, &format!("{unit_line}\n    expect: failure")),
            "check `unit`: `expect` was added (\"failure\")",
        ),
        (
            "or true",
            manifest_text("").replace("exit 1; }\"", "exit 1; } || true\""),
            "check `unit`: `run` went from",
        ),
        (
            "hook checks",
            manifest_text("hook:\n  checks: [lint]\n"),
            "`hook.checks` was added ([\"lint\"])",
        ),
        (
            "variables",
            manifest_text("    env: { SKIP_SLOW: \"1\" }\n"),
            "environment `local`: `env` was added",
        ),
        (
            "no checks",
            "version: 1\nenvironments: [{ name: local }]\nchecks: []\n".to_owned(),
            "check `unit` was removed",
        ),
    ];
    for (what, text, change) in cases {
        let gate = project("");
        gate.write("verify-matrix.yml", &text);
        let answer = answer(&gate, &stop(what, false));
        assert_eq!(answer["decision"], "block", "{what}: {answer}");
        let reason = answer["reason"].as_str().unwrap();
        assert!(reason.contains(change), "{what}: {reason}");
        assert!(
            reason.contains("the manifest committed at"),
            "{what}: {reason}"
        );
        let message = answer["systemMessage"].as_str().unwrap();
        assert!(message.contains(change), "{what}: {message}");
        assert!(
            message.contains("run `cargo verify-matrix hook allow` in"),
            "{what}: {message}"
        );
        assert!(
            !answer.to_string().contains("VERIFIED ("),
            "{what}: {answer}"
        );
    }
}

/// Deleting the failing test and lowering `min-tests` is a weakening too.
#[test]
fn lowering_min_tests_blocks() {
    let gate = project("");
    let with_floor = manifest_text("").replace(
        UNIT.trim_end(),
        &format!("{}\n    min-tests: 3", UNIT.trim_end()),
    );
    gate.write("verify-matrix.yml", &with_floor);
    gate.commit_all("a floor");
    gate.write(
        "verify-matrix.yml",
        &with_floor.replace("min-tests: 3", "min-tests: 2"),
    );
    let answer = answer(&gate, &stop("floor", false));
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .contains("check `unit`: `min-tests` went from 3 to 2"),
        "{answer}"
    );
}

/// A decoy manifest in a subfolder, with the session's cwd pointing there (and the
/// process started there), is not what the gate judges by: the repository root's is.
#[test]
fn a_decoy_manifest_in_a_subfolder_is_not_judged_by() {
    let gate = project("");
    gate.write(
        "decoy/verify-matrix.yml",
        "version: 1\nenvironments: [{ name: local }]\nchecks: []\n",
    );
    let decoy = gate.path().join("decoy");
    begin(&gate, "claude-code", "decoy");
    begin(&gate, "claude-code", "decoy2");
    let out = assert_cmd::Command::from_std({
        let mut cmd = hook_cmd(&gate, "claude-code", &[]);
        cmd.current_dir(&decoy);
        cmd
    })
    .write_stdin(stop_in("decoy", false, decoy.to_str().unwrap()))
    .output()
    .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .contains("- unit in local: FAIL (exit 1)"),
        "{answer}"
    );
    // Through the variable Claude Code sets, the same.
    let out = assert_cmd::Command::from_std({
        let mut cmd = hook_cmd(&gate, "claude-code", &[]);
        cmd.current_dir(&decoy)
            .env("CLAUDE_PROJECT_DIR", gate.path());
        cmd
    })
    .write_stdin(stop("decoy2", false))
    .output()
    .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
}

/// The count of blocks is kept outside the repository: files an agent writes in the
/// worktree (where the count once lived) change nothing.
#[test]
fn the_count_of_blocks_cannot_be_forged_from_the_worktree() {
    let gate = project("");
    assert_eq!(
        hook(&gate, "claude-code", &stop("forge", false), &[]),
        (0, blocked(1, 3))
    );
    let forged = gate
        .path()
        .join("verify-matrix-results/.verify-matrix-hook");
    std::fs::create_dir_all(&forged).unwrap();
    // Whatever name the agent guesses, in the worktree.
    for name in ["a.json", "forge.json"] {
        std::fs::write(forged.join(name), r#"{"session_id":"forge","blocks":3}"#).unwrap();
    }
    assert_eq!(
        hook(&gate, "claude-code", &stop("forge", true), &[]),
        (0, blocked(2, 3))
    );
    let kept: Vec<_> = walkdir::WalkDir::new(gate.state.path())
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .collect();
    assert_eq!(
        kept.len(),
        1,
        "one session's state in the state folder: {kept:?}"
    );
}

/// `VERIFY_MATRIX_ENV` names an environment by hand; the gate does not read it.
#[test]
fn the_gate_ignores_verify_matrix_env() {
    let gate = project("    detect: { os: linux }\n  - name: elsewhere\n");
    let text = manifest_text("    detect: { os: linux }\n  - name: elsewhere\n").replace(
        UNIT.trim_end(),
        &format!("{}\n    environment: local", UNIT.trim_end()),
    );
    gate.write("verify-matrix.yml", &text);
    gate.commit_all("unit only in local");
    begin(&gate, "claude-code", "env");
    let out = assert_cmd::Command::from_std({
        let mut cmd = hook_cmd(&gate, "claude-code", &[]);
        cmd.env("VERIFY_MATRIX_ENV", "elsewhere");
        cmd
    })
    .write_stdin(stop("env", false))
    .output()
    .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .contains("- unit in local: FAIL"),
        "{answer}"
    );
}

/// A manifest that only adds to the committed one runs as it is (the added check too).
#[test]
fn a_strengthened_manifest_runs_and_says_so() {
    let gate = project("");
    gate.write("fixed", "");
    let text = format!(
        "{}  - id: added\n    run: \"echo added > added.txt\"\n",
        manifest_text("")
    );
    gate.write("verify-matrix.yml", &text);
    let answer = answer(&gate, &stop("strong", false));
    let message = answer["systemMessage"].as_str().unwrap();
    assert!(
        message
            .starts_with("verify-matrix: All Required Environments: VERIFIED (3 pairs in local)"),
        "{message}"
    );
    assert!(
        message.contains("strengthens the committed manifest: check `added` was added"),
        "{message}"
    );
    assert!(gate.path().join("added.txt").exists());
}

/// The person's way to allow a change: `hook allow` at a terminal, for that exact
/// manifest. An agent's command (no terminal) is refused; a later edit needs a new
/// allowance.
#[test]
fn a_person_allows_a_weakened_manifest_at_the_terminal() {
    let gate = project("");
    let optional = manifest_text("").replace(
        UNIT.trim_end(),
        &format!("{}\n    required: false", UNIT.trim_end()),
    );
    gate.write("verify-matrix.yml", &optional);
    // Without a terminal (as an agent's shell runs it): refused, nothing allowed.
    let out = gate
        .std_cmd()
        .args(["hook", "allow"])
        .env("XDG_STATE_HOME", gate.state.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[not proven] check `unit` was made optional"),
        "{stderr}"
    );
    assert!(stderr.contains("asks a person at a terminal"), "{stderr}");
    assert_eq!(answer(&gate, &stop("allow", false))["decision"], "block");
    // At a terminal (script(1) gives it one), answered `allow`.
    let said = at_a_terminal(&gate, "allow");
    assert!(said.contains("Allowed (kept in"), "{said}");
    let answer_now = answer(&gate, &stop("allow", false));
    let message = answer_now["systemMessage"].as_str().unwrap();
    assert!(
        message.contains(
            "a person allowed the changes to `verify-matrix.yml`: check `unit` was made optional"
        ),
        "{message}"
    );
    assert!(answer_now["decision"].is_null(), "{answer_now}");
    // Another edit on top is another manifest: blocked again.
    gate.write(
        "verify-matrix.yml",
        &optional.replace("exit 1; }\"", "exit 1; } || true\""),
    );
    assert_eq!(answer(&gate, &stop("allow", false))["decision"], "block");
}

/// A removed manifest is a weakening, never "nothing to check".
#[test]
fn a_removed_manifest_blocks() {
    let gate = project("");
    std::fs::remove_file(gate.path().join("verify-matrix.yml")).unwrap();
    let answer = answer(&gate, &stop("gone", false));
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .contains("the manifest `verify-matrix.yml` was removed"),
        "{answer}"
    );
}

/// The session's trusted commit is pinned when it starts: a weakening the agent commits
/// later is still a weakening.
#[test]
fn a_weakening_committed_during_the_session_is_still_refused() {
    let gate = project("");
    let start = r#"{"session_id":"pin","hook_event_name":"SessionStart","source":"startup"}"#;
    assert_eq!(hook(&gate, "claude-code", start, &[]), (0, String::new()));
    let optional = manifest_text("").replace(
        UNIT.trim_end(),
        &format!("{}\n    required: false", UNIT.trim_end()),
    );
    gate.write("verify-matrix.yml", &optional);
    gate.commit_all("make unit optional");
    let answer = answer(&gate, &stop("pin", false));
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .contains("check `unit` was made optional"),
        "{answer}"
    );
}

/// The gate runs the variants and the environments this machine is; the others are
/// CI's, named so, never run under a false name — and never a verdict.
#[test]
fn the_gate_runs_what_this_machine_is_and_names_the_rest_as_cis() {
    let os = std::env::consts::OS;
    let other = if os == "windows" {
        "ubuntu-latest"
    } else {
        "windows-latest"
    };
    let text = format!(
        "version: 1\nenvironments:\n  - {{ name: here, detect: {{ os: {os} }} }}\n  - {{ name: ci, runs-on: {other} }}\n  - {{ name: variant, env: {{ X: '1' }} }}\nchecks:\n  - {{ id: ok, run: \"true\" }}\n"
    );
    let gate = project("");
    gate.write("verify-matrix.yml", &text);
    gate.commit_all("three environments");
    let said = answer(&gate, &stop("ci", false));
    let message = said["systemMessage"].as_str().unwrap();
    assert!(said["decision"].is_null(), "{said}");
    assert!(
        message.starts_with("verify-matrix: the hook's checks passed in here, variant (2 pairs). Partial run: 2 of 3 required pairs; not a verdict"),
        "{message}"
    );
    assert!(
        message.contains(&format!("Verified in CI, not here: ci (runs on {other} (")),
        "{message}"
    );
    assert!(!message.contains("All Required Environments"), "{message}");
    assert!(
        !gate
            .path()
            .join("verify-matrix-results/verify-matrix-ci.json")
            .exists()
    );
    // Named for the gate, an environment this machine is not is refused.
    gate.write(
        "verify-matrix.yml",
        &format!("{text}hook:\n  environments: [ci]\n"),
    );
    gate.commit_all("the hook names ci");
    let said = answer(&gate, &stop("ci2", false));
    assert_eq!(said["decision"], "block", "{said}");
    assert!(
        said["reason"]
            .as_str()
            .unwrap()
            .contains("the gate names environments this machine is not"),
        "{said}"
    );
    // Nothing of the manifest is this machine: nothing ran, NOT VERIFIED here.
    gate.write(
        "verify-matrix.yml",
        &format!("version: 1\nenvironments:\n  - {{ name: ci, runs-on: {other} }}\nchecks:\n  - {{ id: ok, run: \"true\" }}\n"),
    );
    gate.commit_all("only CI");
    let said = answer(&gate, &stop("ci3", false));
    assert!(said["decision"].is_null(), "{said}");
    assert!(
        said["systemMessage"]
            .as_str()
            .unwrap()
            .starts_with("verify-matrix: NOT VERIFIED here: no environment of the manifest is this machine, so nothing ran."),
        "{said}"
    );
}

/// Gemini CLI's AfterAgent input, as its hooks reference gives it (the base fields, the
/// turn's prompt and response, and `stop_hook_active`).
fn after_agent(session: &str, active: bool) -> String {
    format!(
        r#"{{"session_id":"{session}","transcript_path":"/tmp/t.json","cwd":".","hook_event_name":"AfterAgent","timestamp":"2026-11-26T10:00:00Z","prompt":"fix the bug","prompt_response":"Done: the bug is fixed.","stop_hook_active":{active}}}"#
    )
}

/// Cursor's `stop` input, as its hooks documentation gives it (the conversation, the
/// turn's status, and how many follow-ups this stop continues).
fn cursor_stop(conversation: &str, status: &str, loop_count: u32) -> String {
    format!(
        r#"{{"conversation_id":"{conversation}","generation_id":"g-{loop_count}","model":"default","hook_event_name":"stop","cursor_version":"2.0.77","workspace_roots":["."],"user_email":null,"status":"{status}","loop_count":{loop_count}}}"#
    )
}

#[test]
fn gemini_clis_after_agent_is_denied_until_the_checks_pass_and_the_loop_ends() {
    let gate = project("hook:\n  max-blocks: 2\n");
    let deny =
        |block, max| blocked(block, max).replace(r#""decision":"block""#, r#""decision":"deny""#);
    // A failing check: the turn is denied and retried with the failure as its prompt.
    assert_eq!(
        hook(&gate, "gemini", &after_agent("g", false), &[]),
        (0, deny(1, 2))
    );
    assert_eq!(
        hook(&gate, "gemini", &after_agent("g", true), &[]),
        (0, deny(2, 2))
    );
    // The loop cap: the third retry goes through, saying NOT VERIFIED.
    let (code, through) = hook(&gate, "gemini", &after_agent("g", true), &[]);
    assert_eq!(code, 0);
    let through: serde_json::Value = serde_json::from_str(&through).unwrap();
    assert!(through["decision"].is_null(), "{through}");
    assert!(
        through["systemMessage"]
            .as_str()
            .unwrap()
            .starts_with("verify-matrix: NOT VERIFIED: unit failed in local (exit 1). The stop was blocked 2 times"),
        "{through}"
    );
    // Passing: the response stands.
    gate.write("fixed", "");
    assert_eq!(
        hook(&gate, "gemini", &after_agent("g2", false), &[]),
        (0, VERIFIED.to_owned())
    );
    // Other events are not gated, and say so in JSON only.
    let before_tool = r#"{"session_id":"g","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{}}"#;
    assert_eq!(
        hook(&gate, "gemini", before_tool, &[]),
        (0, "{}\n".to_owned())
    );
}

#[test]
fn cursors_stop_gets_a_follow_up_until_the_checks_pass_and_the_loop_ends() {
    let gate = project("hook:\n  max-blocks: 2\n");
    let followup = |block, max| {
        let blocked: serde_json::Value = serde_json::from_str(&blocked(block, max)).unwrap();
        format!(
            "{}\n",
            serde_json::json!({ "followup_message": blocked["reason"] })
        )
    };
    // A failing check: the failure is sent as the next user message.
    assert_eq!(
        hook(&gate, "cursor", &cursor_stop("c", "completed", 0), &[]),
        (0, followup(1, 2))
    );
    assert_eq!(
        hook(&gate, "cursor", &cursor_stop("c", "completed", 1), &[]),
        (0, followup(2, 2))
    );
    // The loop cap: the agent may stop (`{}`); the person reads why in the hook's log.
    let out = assert_cmd::Command::from_std(hook_cmd(&gate, "cursor", &[]))
        .write_stdin(cursor_stop("c", "completed", 2))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "{}\n");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("NOT VERIFIED: unit failed in local (exit 1)"),
        "{out:?}"
    );
    // A turn the person aborted is not followed up, whatever the checks say.
    assert_eq!(
        hook(&gate, "cursor", &cursor_stop("c2", "aborted", 0), &[]),
        (0, "{}\n".to_owned())
    );
    // Passing: the agent stops.
    gate.write("fixed", "");
    assert_eq!(
        hook(&gate, "cursor", &cursor_stop("c3", "completed", 0), &[]),
        (0, "{}\n".to_owned())
    );
}

#[test]
fn every_clients_gate_refuses_to_be_an_environment_this_machine_is_not() {
    let other = if std::env::consts::OS == "windows" {
        "ubuntu-latest"
    } else {
        "windows-latest"
    };
    let gate = project("");
    gate.write(
        "verify-matrix.yml",
        &format!("version: 1\nenvironments:\n  - {{ name: ci, runs-on: {other} }}\nchecks:\n  - {{ id: ok, run: \"true\" }}\nhook:\n  environments: [ci]\n"),
    );
    gate.commit_all("the hook names ci");
    for (client, input, field) in [
        ("gemini", after_agent("r1", false), "reason"),
        (
            "cursor",
            cursor_stop("r2", "completed", 0),
            "followup_message",
        ),
    ] {
        let (code, said) = hook(&gate, client, &input, &[]);
        assert_eq!(code, 0);
        let said: serde_json::Value = serde_json::from_str(&said).unwrap();
        assert!(
            said[field]
                .as_str()
                .unwrap_or_default()
                .contains("the gate names environments this machine is not"),
            "{client}: {said}"
        );
        assert!(
            !gate
                .path()
                .join("verify-matrix-results/verify-matrix-ci.json")
                .exists(),
            "{client}"
        );
    }
}

/// The gate's answer to `client`'s stop: whether it lets the stop through, and all it
/// said (the JSON answer and the hook's log).
fn stops(gate: &Gate, client: &str, session: &str) -> (bool, String) {
    let input = match client {
        "gemini" => after_agent(session, false),
        "cursor" => cursor_stop(session, "completed", 0),
        _ => stop(session, false),
    };
    let (code, stdout) = hook(gate, client, &input, &[]);
    assert_eq!(code, 0, "{stdout}");
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_default();
    let blocked = answer["decision"] == "block"
        || answer["decision"] == "deny"
        || answer["followup_message"].is_string();
    (!blocked, stdout)
}

/// The gate uses a working-copy change only where it is proven to strengthen the
/// committed manifest; every other change — however it is spelled, in whatever part of
/// the manifest — blocks, in each of the four clients.
#[test]
fn a_change_not_proven_a_strengthening_blocks_in_every_client() {
    let group = "  - id: all\n    all-of:\n      - { item: a, run: 'exit 1' }\n      - { item: b, run: 'true' }\n";
    let base = format!("{}{group}", manifest_text(""));
    let cases = [
        (
            "an item's command",
            base.replace("{ item: a, run: 'exit 1' }", "{ item: a, run: 'true' }"),
            "check `all`: `all-of` went from",
        ),
        (
            "an item's exit code",
            base.replace(
                "{ item: a, run: 'exit 1' }",
                "{ item: a, run: 'exit 1', exit-code: 1 }",
            ),
            "check `all`: `all-of` went from",
        ),
        (
            "an identity no machine here is",
            base.replace(
                "  - name: local\n",
                "  - name: local\n    runs-on: windows-latest\n",
            ),
            "environment `local`: `runs-on` was added",
        ),
        (
            "a detect rule",
            base.replace(
                "  - name: local\n",
                "  - name: local\n    detect: { os: windows }\n",
            ),
            "environment `local`: `detect` was added",
        ),
        (
            "a way in",
            base.replace(
                "  - name: local\n",
                "  - name: local\n    enter: { command: [env, 'BASH_ENV={repo}/evil.sh'] }\n",
            ),
            "environment `local`: `enter` was added",
        ),
    ];
    for client in ["claude-code", "codex", "gemini", "cursor"] {
        for (what, text, said) in &cases {
            let gate = project("");
            gate.write("verify-matrix.yml", &base);
            gate.commit_all("a group");
            let session = format!("{client}-{what}");
            begin(&gate, client, &session);
            gate.write("verify-matrix.yml", text);
            let (through, said_all) = stops(&gate, client, &session);
            assert!(!through, "{client}, {what}: {said_all}");
            assert!(said_all.contains(said), "{client}, {what}: {said_all}");
            assert!(
                !said_all.contains("VERIFIED ("),
                "{client}, {what}: {said_all}"
            );
        }
    }
}

/// A timing split's `list:` decides which tests a shard runs: changing it is no
/// strengthening.
#[test]
fn a_splits_listing_changed_blocks() {
    let gate = project("    shards: 2\n");
    let text = manifest_text("    shards: 2\n").replace(
        "  - id: lint\n",
        "  - id: py\n    run: 'cat {tests_file}'\n    split: timing\n    list: 'printf \"a\\nb\\n\"'\n    reports: r.xml\n  - id: lint\n",
    );
    gate.write("verify-matrix.yml", &text);
    gate.commit_all("a split");
    begin(&gate, "claude-code", "list");
    gate.write(
        "verify-matrix.yml",
        &text.replace("printf \"a\\nb\\n\"", "printf \"b\\n\""),
    );
    let (through, said) = stops(&gate, "claude-code", "list");
    assert!(!through, "{said}");
    assert!(said.contains("check `py`: `list` went from"), "{said}");
}

/// What the committed manifest names is read from the commit too: deleting the Compose
/// file a way in reads does not make the committed manifest unreadable (the trust
/// stays), and a Compose file changed in the working copy is a changed way in.
#[test]
fn the_files_a_way_in_reads_are_the_committed_ones() {
    let compose = "services:\n  dev:\n    image: debian:12\n";
    let text = manifest_text("    enter: { compose: { service: dev } }\n");
    let gate = project("");
    gate.write("compose.yaml", compose);
    gate.write("verify-matrix.yml", &text);
    gate.commit_all("a compose way in");
    begin(&gate, "claude-code", "compose");
    // The Compose file's service made to run something else.
    gate.write(
        "compose.yaml",
        &format!("{compose}    entrypoint: ['true']\n"),
    );
    let (through, said) = stops(&gate, "claude-code", "compose");
    assert!(!through, "{said}");
    assert!(
        said.contains(
            "`compose.yaml`, which a way in (`enter`) reads, differs from the committed one"
        ),
        "{said}"
    );
    // Deleted, with the manifest weakened: still judged against the commit, blocked.
    std::fs::remove_file(gate.path().join("compose.yaml")).unwrap();
    gate.write(
        "verify-matrix.yml",
        &text.replace(
            UNIT.trim_end(),
            &format!("{}\n    required: false", UNIT.trim_end()),
        ),
    );
    let (through, said) = stops(&gate, "claude-code", "compose");
    assert!(!through, "{said}");
    assert!(!said.contains("was used as it is"), "{said}");
    assert!(said.contains("compose.yaml"), "{said}");
}

/// At a person's terminal (script(1) gives it one): `hook WORD` in the gate's project,
/// answered WORD; what it printed.
fn at_a_terminal(gate: &Gate, word: &str) -> String {
    let bin = assert_cmd::cargo::cargo_bin("cargo-verify-matrix");
    let out = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{} hook {word}", bin.display()),
            "/dev/null",
        ])
        .current_dir(gate.path())
        .env("XDG_STATE_HOME", gate.state.path())
        .env("NO_COLOR", "1")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(format!("{word}\n").as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{said}");
    said
}

/// The weakened manifest, `unit` made optional.
fn optional_unit() -> String {
    manifest_text("").replace(
        UNIT.trim_end(),
        &format!("{}\n    required: false", UNIT.trim_end()),
    )
}

/// What the gate trusts is taken at the session's start and kept outside the
/// repository: rewriting history afterwards (amended, the reflog expired, the objects
/// pruned), or replacing the starting commit, changes nothing it judges by.
#[test]
fn history_rewritten_or_replaced_after_the_start_changes_nothing() {
    let gate = project("");
    begin(&gate, "claude-code", "rewrite");
    gate.write("verify-matrix.yml", &optional_unit());
    gate.git(&["add", "-A"]);
    gate.git(&["commit", "-q", "--amend", "-m", "manifest"]);
    gate.git(&["reflog", "expire", "--expire=now", "--all"]);
    gate.git(&["gc", "-q", "--prune=now"]);
    let (through, said) = stops(&gate, "claude-code", "rewrite");
    assert!(!through, "{said}");
    assert!(said.contains("check `unit` was made optional"), "{said}");

    let gate = project("");
    begin(&gate, "claude-code", "replace");
    let start = gate.git(&["rev-parse", "HEAD"]).trim().to_owned();
    gate.write("verify-matrix.yml", &optional_unit());
    gate.commit_all("optional");
    let weak = gate.git(&["rev-parse", "HEAD"]).trim().to_owned();
    gate.git(&["replace", "-f", &start, &weak]);
    let (through, said) = stops(&gate, "claude-code", "replace");
    assert!(!through, "{said}");
    assert!(said.contains("check `unit` was made optional"), "{said}");
}

/// Every object the gate reads is hashed against its id: a loose object overwritten
/// with another manifest under the committed one's id (say, by an agent of an earlier
/// session) is found out when the next session starts, and its stops are blocked.
#[test]
fn an_object_that_does_not_hash_to_its_id_is_never_trusted() {
    let gate = project("");
    let blob = gate
        .git(&["rev-parse", "HEAD:verify-matrix.yml"])
        .trim()
        .to_owned();
    let object = gate
        .path()
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    let forged = optional_unit();
    let written = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zlib, os\nbody = open(sys.argv[2], 'rb').read()\nos.chmod(sys.argv[1], 0o644)\nopen(sys.argv[1], 'wb').write(zlib.compress(b'blob %d\\0' % len(body) + body))",
        ])
        .arg(&object)
        .arg(gate.write("forged.yml", &forged))
        .status()
        .unwrap();
    assert!(written.success());
    // git itself shows the forgery as the commit's manifest.
    assert!(
        gate.git(&["show", "HEAD:verify-matrix.yml"])
            .contains("required: false")
    );
    gate.write("verify-matrix.yml", &forged);
    std::fs::remove_file(gate.path().join("forged.yml")).unwrap();
    let (through, said) = stops(&gate, "claude-code", "forged");
    assert!(!through, "{said}");
    assert!(
        said.contains("does not hash to its id: the repository's objects were altered"),
        "{said}"
    );
}

/// A session that sends no start event is judged by what a person pinned (`hook pin`,
/// at a terminal), never by the commit at its first stop, which the agent may have
/// made; with nothing pinned, its stop is blocked with what to set up.
#[test]
fn without_a_session_start_the_pinned_manifest_is_trusted() {
    let gate = project("");
    gate.write("verify-matrix.yml", &optional_unit());
    gate.commit_all("the agent's own commit, before its first stop");
    gate.started.borrow_mut().insert("codex".to_owned());
    let (through, said) = stops(&gate, "codex", "codex");
    assert!(!through, "{said}");
    assert!(
        said.contains("Register the hook for the client's session-start event")
            && said.contains("hook pin"),
        "{said}"
    );
    // Pinned by a person before the agent's session.
    let gate = project("");
    let said = at_a_terminal(&gate, "pin");
    assert!(said.contains("Pinned (kept in"), "{said}");
    gate.write("verify-matrix.yml", &optional_unit());
    gate.commit_all("the agent's own commit, before its first stop");
    gate.started.borrow_mut().insert("codex".to_owned());
    let (through, said) = stops(&gate, "codex", "codex");
    assert!(!through, "{said}");
    assert!(said.contains("check `unit` was made optional"), "{said}");
    // An agent's command (no terminal) cannot pin.
    let out = gate
        .std_cmd()
        .args(["hook", "pin"])
        .env("XDG_STATE_HOME", gate.state.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("asks a person at a terminal"));
}

/// The repository's own configuration cannot move the gate: a `core.worktree` the agent
/// sets neither changes the root (nor so the session kept for it), and a manifest in
/// Cargo.toml is read as text, never through a `cargo` the repository chooses.
#[cfg(unix)]
#[test]
fn the_repositorys_own_configuration_does_not_move_the_gate() {
    let gate = project("");
    begin(&gate, "claude-code", "worktree");
    let elsewhere = tempfile::tempdir().unwrap();
    gate.git(&[
        "config",
        "core.worktree",
        &elsewhere.path().display().to_string(),
    ]);
    gate.write("verify-matrix.yml", &optional_unit());
    let (through, said) = stops(&gate, "claude-code", "worktree");
    assert!(!through, "{said}");
    assert!(said.contains("check `unit` was made optional"), "{said}");

    let gate = project("");
    std::fs::remove_file(gate.path().join("verify-matrix.yml")).unwrap();
    gate.write(
        "Cargo.toml",
        "[package]\nname = \"p\"\nversion = \"0.1.0\"\n\n[package.metadata.verify-matrix]\nversion = 1\nenvironments = [{ name = \"local\" }]\nchecks = [{ id = \"unit\", run = \"exit 1\" }]\n",
    );
    gate.commit_all("a Cargo.toml manifest");
    begin(&gate, "claude-code", "cargo");
    // A `cargo` on PATH that leaves a mark: the gate never runs it.
    let bin = tempfile::tempdir().unwrap();
    let mark = bin.path().join("ran");
    let fake = bin.path().join("cargo");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\ntouch {}\nexit 1\n", mark.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let out = assert_cmd::Command::from_std({
        let mut cmd = hook_cmd(&gate, "claude-code", &[]);
        cmd.env("PATH", path);
        cmd
    })
    .write_stdin(stop("cargo", false))
    .output()
    .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .contains("- unit in local: FAIL (exit 1)"),
        "{answer}"
    );
    assert!(!mark.exists(), "the gate ran the repository's `cargo`");
}
