//! `hook claude-code` / `hook codex`: the Stop-hook gate, driven with the clients'
//! documented stdin JSON; the exact stdout and exit code of each answer.

mod common;

use common::Project;

/// A project whose `unit` check fails until the file `fixed` exists.
fn project(extra: &str) -> Project {
    Project::new(&format!(
        concat!(
            "version: 1\n",
            "environments:\n  - name: local\n{extra}",
            "checks:\n",
            "  - id: unit\n",
            "    run: \"test -f fixed || {{ echo 'assertion failed: left == right'; exit 1; }}\"\n",
            "  - id: lint\n",
            "    run: \"true\"\n",
        ),
        extra = extra
    ))
}

/// A Stop event of `session`; `active` is `stop_hook_active` (a stop that continues
/// after a block).
fn stop(session: &str, active: bool) -> String {
    format!(
        r#"{{"session_id":"{session}","transcript_path":"/tmp/t.jsonl","cwd":".","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":{active}}}"#
    )
}

/// Runs the hook with `input` on stdin: (exit code, stdout with durations as `Nms`).
fn hook(project: &Project, client: &str, input: &str, args: &[&str]) -> (i32, String) {
    let out = project
        .cmd()
        .args(["hook", client, "-q"])
        .args(args)
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
        r#"{"systemMessage":"verify-matrix: NOT VERIFIED. The stop was blocked 2 times in a row in this session; it is let through so that the session does not loop. Full results: verify-matrix-results/verify-matrix-local.json"}"#,
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
            r#"{"systemMessage":"verify-matrix: the hook's checks passed in local (1 pairs). Partial run: 1 of 4 required pairs; not a verdict"}"#,
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
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: local\nchecks:\n{checks}"
    ));
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
