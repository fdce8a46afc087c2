//! The hub's `verification_steps` contract: a task file run as a manifest and rendered
//! with `--format steps`, compared with golden files (`fixtures/steps/NAME.task.json` →
//! `NAME.expected.json`; times set to 0, durations in text to `<d>`). With
//! `UPDATE_GOLDEN=1` the golden files are written instead.

mod common;

use common::{Project, repo_root};

/// Runs the task `name` in a fresh project holding `files`, and renders it as the hub's
/// report: (exit code of `run`, the report with its times normalised).
fn run_task(name: &str, files: &[(&str, &str)]) -> (i32, String) {
    let project = Project::empty();
    let task =
        std::fs::read_to_string(repo_root().join(format!("fixtures/steps/{name}.task.json")))
            .unwrap();
    project.write("task.json", &task);
    for (path, text) in files {
        project.write(path, text);
    }
    let run = project
        .cmd()
        .args(["-q", "run", "--manifest", "task.json"])
        .output()
        .unwrap();
    let rendered = render_steps(&project, &[]);
    assert_eq!(
        rendered.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    (run.status.code().unwrap(), normalise(&rendered.stdout))
}

/// `render --manifest task.json --format steps` of the project's run, with `args`.
fn render_steps(project: &Project, args: &[&str]) -> std::process::Output {
    project
        .cmd()
        .args(["render", "--manifest", "task.json", "--format", "steps"])
        .args(args)
        .arg("verify-matrix-results")
        .output()
        .unwrap()
}

/// Times and durations set to 0, durations inside texts to `<d>`.
fn normalise(stdout: &[u8]) -> String {
    let mut value: serde_json::Value = serde_json::from_slice(stdout).expect("one JSON object");
    assert!(value["started_at"].as_u64().is_some(), "{value}");
    value["started_at"] = 0.into();
    value["duration_ms"] = 0.into();
    let durations = regex::Regex::new(r"\b\d+(\.\d+)?(ms|s)\b").unwrap();
    for check in value["checks"].as_array_mut().unwrap() {
        check["duration_ms"] = 0.into();
        let output = check["output"].as_str().unwrap().to_owned();
        check["output"] = durations.replace_all(&output, "<d>").into_owned().into();
    }
    let mut text = serde_json::to_string_pretty(&value).unwrap();
    text.push('\n');
    text
}

fn golden(name: &str, actual: &str) {
    common::golden(&format!("fixtures/steps/{name}.expected.json"), actual);
}

#[test]
fn each_step_type_passes_fails_and_errs_as_the_hub_expects() {
    let (code, report) = run_task(
        "mixed",
        &[
            ("README.md", "hello\n"),
            (
                "check.sh",
                "echo 'expected 3, got 4'\necho 'at check.sh line 2'\nexit 2\n",
            ),
        ],
    );
    assert_eq!(code, 1, "the run fails");
    golden("mixed", &report);
}

#[test]
fn the_global_timeout_marks_the_unfinished_steps_and_keeps_the_finished_ones() {
    let (_, report) = run_task("timeout", &[]);
    golden("timeout", &report);
}

#[test]
fn skip_verification_is_skip_and_no_steps_is_auto_pass() {
    let (code, report) = run_task("skip", &[]);
    assert_eq!(code, 0);
    golden("skip", &report);
    let (code, report) = run_task("no-steps", &[]);
    assert_eq!(code, 0);
    golden("no-steps", &report);
}

#[test]
fn a_passing_task_is_pass_and_the_task_id_comes_from_the_flag_first() {
    let (_, report) = run_task("pass", &[("dist/app.js", "")]);
    golden("pass", &report);
    let project = Project::empty();
    project.write(
        "task.json",
        r#"{"task_id": "T-1", "verification_steps": [{"type": "command_succeeds", "target": "true"}]}"#,
    );
    project
        .cmd()
        .args(["-q", "run", "--manifest", "task.json"])
        .assert()
        .success();
    let out = render_steps(&project, &["--task-id", "OTHER"]);
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["task_id"], "OTHER");
    assert_eq!(value["status"], "pass");
}

#[test]
fn a_broken_task_is_refused_with_its_positions() {
    let project = Project::empty();
    project.write(
        "task.json",
        "{\n  \"verification_steps\": [\n    {\"type\": \"lint_passes\", \"target\": \"x\"},\n    {\"type\": \"command_succeeds\"}\n  ],\n  \"verification_timeout_ms\": 0\n}\n",
    );
    project.plan_refuses(
        "task.json",
        &[
            "error: unknown step type `lint_passes`; expected one of: file_exists, test_passes, git_clean, command_succeeds\n --> task.json:3:14 (verification_steps[0].type)",
            "error: a `command_succeeds` step needs a `target`\n --> task.json:4:5 (verification_steps[1].target)",
            "error: `verification_timeout_ms` must be a whole number of milliseconds above zero, not 0\n --> task.json:6:30 (verification_timeout_ms)",
            "error: `task.json` has 3 problems; nothing was run",
        ],
    );
}

#[test]
fn a_merged_report_alone_cannot_be_rendered_as_steps() {
    let project = Project::empty();
    project.write(
        "task.json",
        r#"{"verification_steps": [{"type": "command_succeeds", "target": "true"}]}"#,
    );
    project.report_alone_refused_as("task.json", "steps");
}
