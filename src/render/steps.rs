//! `--format steps`: the verification report the hub stores for a task whose manifest is
//! its `verification_steps` (see [`crate::manifest::steps`]).
//!
//! ```json
//! {"task_id": "T-42", "run_number": 1, "status": "fail", "started_at": 1795000000000,
//!  "duration_ms": 812, "timeout_ms": 60000,
//!  "checks": [{"type": "command_succeeds", "target": "npm test", "description": "tests",
//!              "status": "fail", "output": "…", "duration_ms": 790}],
//!  "summary": {"total": 1, "passed": 0, "failed": 1, "errors": 0, "timed_out": 0}}
//! ```
//!
//! A task with `skip_verification` is `skip` with no checks; one without steps is
//! `auto_pass`. When the global timeout expires, the check it stopped and the steps that
//! never started are `timeout`, and the steps that finished keep their own status. The
//! task's `status` is `pass` only when the report is VERIFIED.

use serde::Serialize;

use super::view::Tails;
use super::{Quoted, RenderOptions};
use crate::manifest::{CheckKind, Manifest, TestSpec};
use crate::results::report::MissingKind;
use crate::results::{RUN_TIMEOUT_STOP, Status, Verdict};

/// What `--format steps` needs beyond the report: the steps (from the manifest) and the
/// run's facts (from its result files).
#[derive(Debug, Clone, Default)]
pub struct StepsInfo {
    pub task_id: Option<String>,
    /// The workflow attempt the results came from, else 1.
    pub run_number: u32,
    /// When the earliest environment's run started, in milliseconds since the epoch.
    pub started_at_ms: Option<u64>,
    pub duration_ms: u64,
    /// The run timeout, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Some environment's run ended at its run timeout.
    pub timed_out: bool,
    /// `skip: true` (`skip_verification`).
    pub skip: bool,
    pub steps: Vec<Step>,
}

/// One step: a check of the manifest, as the hub names it.
#[derive(Debug, Clone)]
pub struct Step {
    pub id: String,
    /// `file_exists`, `test_passes`, `git_clean`, `command_succeeds`; other kinds of
    /// check by their manifest key (`not-file`, `all-of`, …).
    pub kind: String,
    pub target: String,
    pub description: Option<String>,
}

impl StepsInfo {
    /// The steps of `manifest`: its automated checks, in order (manual items are not
    /// steps).
    pub fn steps_of(manifest: &Manifest) -> Vec<Step> {
        manifest
            .checks
            .iter()
            .filter(|c| !c.kind.is_manual())
            .map(|check| {
                let (kind, target) = match &check.kind {
                    CheckKind::File { pattern, .. } => ("file_exists", pattern.clone()),
                    CheckKind::Test(TestSpec::Auto) => ("test_passes", "auto".to_owned()),
                    CheckKind::Test(TestSpec::Command(cmd)) => ("test_passes", cmd.clone()),
                    CheckKind::GitClean { path } => ("git_clean", path.clone()),
                    CheckKind::Run(cmd) => ("command_succeeds", cmd.clone()),
                    other => (other.key(), other.describe()),
                };
                Step {
                    id: check.id.to_string(),
                    kind: kind.to_owned(),
                    target,
                    description: check.name.clone(),
                }
            })
            .collect()
    }
}

#[derive(Serialize)]
struct StepsReport<'a> {
    task_id: Option<&'a str>,
    run_number: u32,
    status: &'static str,
    started_at: Option<u64>,
    duration_ms: u64,
    timeout_ms: Option<u64>,
    checks: Vec<StepResult<'a>>,
    summary: Summary,
}

#[derive(Serialize)]
struct StepResult<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    target: &'a str,
    description: Option<&'a str>,
    status: &'static str,
    output: String,
    duration_ms: u64,
}

#[derive(Serialize, Default)]
struct Summary {
    total: usize,
    passed: usize,
    failed: usize,
    errors: usize,
    timed_out: usize,
}

/// The hub's report of `report`, pretty-printed, with a final newline; each check's
/// output is its log's last lines (`options.tail_lines`, at most 16 KiB read).
pub fn render(report: &Quoted, options: &RenderOptions, info: &StepsInfo) -> String {
    let mut checks = Vec::new();
    if !info.skip {
        // Each step's pairs looked up, never searched for: a manifest of many checks
        // and environments may be rendered this way too.
        let index = report.index();
        for step in &info.steps {
            for env in &report.environments {
                if let Some(row) = index.row(&step.id, env) {
                    let d = &row.detail;
                    let status = match d.status {
                        Status::Pass => "pass",
                        Status::Fail => "fail",
                        _ if d.timed_out || d.summary.starts_with(RUN_TIMEOUT_STOP) => "timeout",
                        _ => "error",
                    };
                    // What the command printed (its log's tail, as the hub keeps the
                    // output); the summary when it printed nothing or has no log.
                    let output = report
                        .log_tail(options, d, Tails::SHORT)
                        .unwrap_or_else(|| d.summary.to_string());
                    checks.push(entry(step, status, output, d.duration_ms));
                } else if let Some(missing) = index.missing(&step.id, env) {
                    let status = match report.missing_kind(missing) {
                        MissingKind::NotRun if info.timed_out => "timeout",
                        MissingKind::NotRun => "skip",
                        MissingKind::FailedToRun | MissingKind::NoResult => "error",
                    };
                    checks.push(entry(step, status, missing.reason.clone(), 0));
                }
            }
        }
    }
    let mut summary = Summary {
        total: checks.len(),
        ..Summary::default()
    };
    for check in &checks {
        match check.status {
            "pass" => summary.passed += 1,
            "fail" => summary.failed += 1,
            "error" => summary.errors += 1,
            "timeout" => summary.timed_out += 1,
            _ => {}
        }
    }
    let status = if info.skip {
        "skip"
    } else if info.steps.is_empty() {
        "auto_pass"
    } else if summary.timed_out > 0 {
        "timeout"
    } else if summary.errors > 0 {
        "error"
    } else if report.verdict == Verdict::Verified && report.partial.is_none() {
        "pass"
    } else {
        "fail"
    };
    let out = StepsReport {
        task_id: info.task_id.as_deref(),
        run_number: info.run_number.max(1),
        status,
        started_at: info.started_at_ms,
        duration_ms: if info.skip { 0 } else { info.duration_ms },
        timeout_ms: info.timeout_ms,
        checks,
        summary,
    };
    let mut text = serde_json::to_string_pretty(&out).unwrap_or_default();
    text.push('\n');
    text
}

fn entry<'a>(
    step: &'a Step,
    status: &'static str,
    output: String,
    duration_ms: u64,
) -> StepResult<'a> {
    StepResult {
        kind: &step.kind,
        target: &step.target,
        description: step.description.as_deref(),
        status,
        output,
        duration_ms,
    }
}
