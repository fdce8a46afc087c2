//! The AoT loop's verifier contract: a base case (its state file's front matter, a YAML
//! file, or a bare base case) run as a manifest and answered with `--format aot`,
//! compared with golden files (`fixtures/aot/NAME.*` → `NAME[.case].expected.json`;
//! durations in texts set to `<d>`). With `UPDATE_GOLDEN=1` the golden files are
//! written instead.

mod common;

use common::{Project, repo_root};

/// A project holding the fixture `fixture` at `at` and `files`.
fn fixture_project(fixture: &str, at: &str, files: &[(&str, &str)]) -> Project {
    let project = Project::empty();
    let text = std::fs::read_to_string(repo_root().join("fixtures/aot").join(fixture)).unwrap();
    project.write(at, &text);
    for (path, text) in files {
        project.write(path, text);
    }
    project
}

/// Runs the base case at `at` and answers for it: (exit code of `run`, the answer with
/// its durations normalised).
fn run_and_answer(project: &Project, at: &str) -> (i32, String) {
    let _ = std::fs::remove_dir_all(project.path().join("verify-matrix-results"));
    let run = project
        .cmd()
        .args(["-q", "run", "--manifest", at])
        .output()
        .unwrap();
    let answer = render_aot(project, at);
    assert_eq!(
        answer.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&answer.stderr)
    );
    (run.status.code().unwrap(), normalise(&answer.stdout))
}

/// `render --manifest AT --format aot` of the project's run.
fn render_aot(project: &Project, at: &str) -> std::process::Output {
    project
        .cmd()
        .args(["render", "--manifest", at, "--format", "aot"])
        .arg("verify-matrix-results")
        .output()
        .unwrap()
}

/// Durations inside texts set to `<d>`.
fn normalise(stdout: &[u8]) -> String {
    fn walk(value: &mut serde_json::Value, durations: &regex::Regex) {
        match value {
            serde_json::Value::String(text) => {
                *text = durations.replace_all(text, "<d>").into_owned();
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| walk(v, durations)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| walk(v, durations)),
            _ => {}
        }
    }
    let mut value: serde_json::Value = serde_json::from_slice(stdout).expect("one JSON object");
    walk(
        &mut value,
        &regex::Regex::new(r"\b\d+(\.\d+)?(ms|s)\b").unwrap(),
    );
    let mut text = serde_json::to_string_pretty(&value).unwrap();
    text.push('\n');
    text
}

fn golden(name: &str, actual: &str) {
    common::golden(&format!("fixtures/aot/{name}.expected.json"), actual);
}

const STATE: &str = ".claude/aot-loop-state.md";

#[test]
fn a_checklist_in_the_loops_state_file_fails_then_passes_with_its_whole_tree() {
    let project = fixture_project(
        "checklist.md",
        STATE,
        &[
            (
                "test.sh",
                "echo 'running 3 tests'\necho 'test result: ok. 3 passed; 0 failed'\n",
            ),
            ("src/login.js", "export const login = () => 200;\n"),
            ("audit.txt", "found 2 LOW vulnerabilities\n"),
            ("docs/index.md", "# Docs\n"),
        ],
    );
    let (code, answer) = run_and_answer(&project, STATE);
    assert_eq!(code, 1, "Logout is missing: the run fails");
    golden("checklist.fail", &answer);
    // The agent writes the missing file; the same base case now passes, and still asks
    // a person to confirm the assertion.
    project.write("src/logout.js", "export const logout = () => 204;\n");
    let (code, answer) = run_and_answer(&project, STATE);
    assert_eq!(code, 0);
    golden("checklist.pass", &answer);
}

/// An and-list runs as one shell command: `cd` carries across `&&`, as in a shell, so
/// `cd sub && sh check.sh` runs `sub/check.sh` (which fails), never the `check.sh`
/// beside the base case (which passes).
#[test]
fn an_and_list_runs_as_one_shell_command() {
    let project = fixture_project(
        "commands.yml",
        "base-case.yml",
        &[
            ("check.sh", "echo 'the wrong check.sh'\n"),
            ("sub/check.sh", "echo 'error: no entry point' >&2\nexit 1\n"),
        ],
    );
    let (code, answer) = run_and_answer(&project, "base-case.yml");
    assert_eq!(code, 1);
    golden("commands", &answer);
    // In one step: `run --format aot` prints that answer, and nothing else on stdout.
    let out = project
        .cmd()
        .args(["run", "--manifest", "base-case.yml", "--format", "aot"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(normalise(&out.stdout), answer);
    // An exported variable carries across `&&` too.
    project.write(
        "strict.yml",
        "base_case:\n  type: command\n  value: \"export STRICT=1 && sh strict.sh\"\n",
    );
    project.write(
        "strict.sh",
        "test \"$STRICT\" = 1 || exit 0\necho strict; exit 1\n",
    );
    let (code, answer) = run_and_answer(&project, "strict.yml");
    assert_eq!(code, 1, "{answer}");
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["passed"], false, "{answer}");
}

#[test]
fn run_answers_for_the_loops_state_file_in_one_step() {
    let project = fixture_project(
        "checklist.md",
        STATE,
        &[
            ("test.sh", "echo ok\n"),
            ("src/login.js", ""),
            ("src/logout.js", ""),
            ("audit.txt", ""),
            ("docs/index.md", ""),
        ],
    );
    let out = project
        .cmd()
        .args(["run", "--manifest", STATE, "--format", "aot"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(answer["passed"], true, "{answer:#}");
    // Log paths as `render --format aot verify-matrix-results` gives them.
    assert_eq!(
        answer["checklist"][1]["group"][0]["group"][1]["log_path"],
        "verify-matrix-results/logs/local/item-2.1.2.log"
    );
    assert!(
        project
            .path()
            .join("verify-matrix-results/logs/local/item-2.1.2.log")
            .exists()
    );
}

#[test]
fn a_single_command_answers_with_its_output() {
    let project = fixture_project(
        "single.yml",
        "base-case.yml",
        &[("test.sh", "echo 'Tests: 42 passed, 42 total'\n")],
    );
    let (code, answer) = run_and_answer(&project, "base-case.yml");
    assert_eq!(code, 0);
    golden("single", &answer);
}

#[test]
fn judgment_items_are_skipped_and_never_a_pass() {
    let project = fixture_project("assertion.yml", "base-case.yml", &[]);
    let (_, answer) = run_and_answer(&project, "base-case.yml");
    golden("assertion", &answer);
    let project = fixture_project("judged-only.yml", "base-case.yml", &[]);
    let (_, answer) = run_and_answer(&project, "base-case.yml");
    golden("judged-only", &answer);
}

#[test]
fn a_group_that_claims_a_pass_its_items_deny_is_no_pass() {
    let project = fixture_project(
        "commands.yml",
        "base-case.yml",
        &[("test.sh", ""), ("build.sh", ""), ("lint.sh", "")],
    );
    project.write(
        "base-case.yml",
        "base_case:\n  checklist:\n    - item: Both\n      group:\n        - {item: A, check: {type: command, value: 'true'}}\n        - {item: B, check: {type: command, value: 'false'}}\n",
    );
    project
        .cmd()
        .args(["-q", "run", "--manifest", "base-case.yml"])
        .assert()
        .code(1);
    // A forged result: the group says PASS, its own items say otherwise.
    let path = "verify-matrix-results/verify-matrix-local.json";
    let mut forged = project.json(path);
    forged["checks"][0]["status"] = "PASS".into();
    forged["checks"][0]["exit_code"] = 0.into();
    project.write(path, &forged.to_string());
    let answer: serde_json::Value =
        serde_json::from_slice(&render_aot(&project, "base-case.yml").stdout).unwrap();
    assert_eq!(answer["passed"], false, "{answer:#}");
    let group = &answer["checklist"][0];
    assert_eq!(group["passed"], false, "{group:#}");
    // The claim its items deny never reaches the answer: the group's result is
    // re-derived from its items as it is read.
    assert_eq!(group["evidence"], "AND group: 1/2 passed");
    assert_eq!(group["group"][1]["passed"], false);
}

#[test]
fn a_broken_base_case_is_refused_with_its_positions() {
    let project = Project::empty();
    project.write(
        "base-case.yml",
        "base_case:\n  checklist:\n    - item: Tests\n      check: {type: lint, value: x}\n    - item: Build\n      check:\n        type: command\n    - check: {type: file, value: a}\n",
    );
    project.plan_refuses(
        "base-case.yml",
        &[
            "error: unknown check type `lint`; expected one of: command, not_command, file, not_file, assertion, quality\n --> base-case.yml:4:21 (base_case.checklist[0].check.type)",
            "error: a `command` check needs a `value`\n --> base-case.yml:",
            "error: an item needs an `item:` naming it\n --> base-case.yml:8:7 (base_case.checklist[2])",
            "error: `base-case.yml` has 3 problems; nothing was run",
        ],
    );
}

#[test]
fn the_dialect_can_be_named_and_a_wrong_one_is_a_clear_error() {
    let project = Project::empty();
    project.write("bare.yml", "type: command\nvalue: 'true'\n");
    project.write(
        "verify-matrix.yml",
        "version: 1\nenvironments: [{name: local}]\nchecks: [{id: a, run: 'true'}]\n",
    );
    project.write("notes.md", "# Notes\nno front matter here\n");
    let plan = |args: &[&str]| {
        let out = project.cmd().arg("plan").args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, out) = plan(&["--manifest", "bare.yml", "--dialect", "aot"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("base-case"), "{out}");
    // Accepted before the command too, like --manifest.
    let out = project
        .cmd()
        .args(["--dialect", "aot", "--manifest", "bare.yml", "plan"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let (code, out) = plan(&["--manifest", "verify-matrix.yml", "--dialect", "aot"]);
    assert_eq!(code, Some(4), "{out}");
    assert!(out.contains("--dialect aot: no base case"), "{out}");
    let (code, out) = plan(&["--manifest", "bare.yml", "--dialect", "steps"]);
    assert_eq!(code, Some(4), "{out}");
    assert!(out.contains("--dialect steps: not a hub task"), "{out}");
    let (code, out) = plan(&["--manifest", "bare.yml", "--dialect", "verify-matrix"]);
    assert_eq!(code, Some(4), "{out}");
    assert!(out.contains("version"), "{out}");
    let (code, out) = plan(&["--manifest", "notes.md"]);
    assert_eq!(code, Some(4), "{out}");
    assert!(
        out.contains("a Markdown manifest is read by its YAML front matter"),
        "{out}"
    );
}

#[test]
fn a_merged_report_alone_cannot_be_answered_for() {
    let project = Project::empty();
    project.write("base-case.yml", "type: command\nvalue: 'true'\n");
    project.report_alone_refused_as("base-case.yml", "aot");
}
