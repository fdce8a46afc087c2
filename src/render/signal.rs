//! The agent signals of docs/formats.md §6 (READY_FOR_REVIEW, AUDIT_PASSED) and the
//! INFRA_BLOCKED blocks of §5, as plain text a coordinator reads line by line.

use std::fmt::Write as _;

use super::markdown::{infra_blocked_block, run_label, strict_row};
use super::{Quoted, RenderError};
use crate::results::{Report, Row, RowResult};

/// What a signal says beyond the matrix, given by the agent that sends it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignalInfo {
    /// The task the signal is about.
    pub task_id: Option<String>,
    /// Paths of the files the change modified.
    pub files: Vec<String>,
    /// Tests written, each `FILE: what it tests`.
    pub tests: Vec<String>,
    /// The closing line (`Summary:`, or `Conclusion:` in an audit).
    pub summary: Option<String>,
}

/// One line of quoted text: line breaks would let it forge the signal's own lines.
fn one_line(report: &Quoted, text: &str) -> String {
    report
        .quote(text)
        .split('\n')
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

fn task_id(
    report: &Quoted,
    info: &SignalInfo,
    format: &'static str,
) -> Result<String, RenderError> {
    info.task_id
        .as_deref()
        .map(|t| one_line(report, t))
        .filter(|t| !t.is_empty())
        .ok_or(RenderError::NoTaskId(format))
}

fn list(report: &Quoted, title: &str, items: &[String], out: &mut String) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title}:");
    for item in items {
        let _ = writeln!(out, "- {}", one_line(report, item));
    }
    out.push('\n');
}

/// The matrix header and the strict rows.
fn matrix(report: &Report, out: &mut String) {
    out.push_str("Environment Verification Matrix:\n");
    out.push_str("| Check | Environment | Exit Code | Result |\n");
    out.push_str("|-------|-------------|-----------|--------|\n");
    for row in &report.rows {
        strict_row(row, out);
    }
    out.push('\n');
}

/// READY_FOR_REVIEW: the agent's claim that its work is done, with the real matrix. For
/// a report that is not VERIFIED it says so (and lists why), so a coordinator rejects it.
pub fn ready_for_review(report: &Quoted, info: &SignalInfo) -> Result<String, RenderError> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "READY_FOR_REVIEW: {}\n",
        task_id(report, info, "signal")?
    );
    list(report, "Files Modified", &info.files, &mut out);
    list(report, "Tests Written", &info.tests, &mut out);
    matrix(report, &mut out);
    if !report.missing.is_empty() {
        for m in &report.missing {
            let _ = writeln!(
                out,
                "Missing: {} in {} ({})",
                m.check,
                m.environment,
                one_line(report, &m.reason)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(out, "Environments Tested: {}", report.tested_list());
    if report.claims_verified() {
        out.push_str("All Required Environments: VERIFIED\n");
    } else {
        out.push_str("All Required Environments: NOT VERIFIED\n");
        if let Some(partial) = report.partial {
            let _ = writeln!(out, "- {}", partial.line());
        }
        for reason in &report.reasons {
            let _ = writeln!(out, "- {}", one_line(report, reason));
        }
    }
    if let Some(summary) = &info.summary {
        let _ = writeln!(out, "\nSummary: {}", one_line(report, summary));
    }
    Ok(out)
}

/// The most reasons an AUDIT_PASSED refusal names.
const REFUSAL_REASONS: usize = 10;

/// AUDIT_PASSED: only for a VERIFIED report.
pub fn audit_passed(report: &Quoted, info: &SignalInfo) -> Result<String, RenderError> {
    let task = task_id(report, info, "audit")?;
    if !report.claims_verified() {
        // The first few reasons: a huge matrix can have thousands, and this is one line.
        let shown: Vec<&str> = report
            .reasons
            .iter()
            .take(REFUSAL_REASONS)
            .map(String::as_str)
            .collect();
        let reasons = match report.reasons.len() {
            0 => String::new(),
            n if n > REFUSAL_REASONS => {
                format!(": {}; … and {} more", shown.join("; "), n - REFUSAL_REASONS)
            }
            _ => format!(": {}", shown.join("; ")),
        };
        return Err(RenderError::AuditRefused {
            verdict: match report.partial {
                Some(partial) => partial.line(),
                None => report.verdict.as_str().to_owned(),
            },
            reasons,
        });
    }
    let mut out = String::new();
    let _ = writeln!(out, "AUDIT_PASSED: {task}\n");
    out.push_str("Requirements Verification:\n");
    for check in report.checks_in_order() {
        let rows: Vec<&Row> = report.rows.iter().filter(|r| r.check == check).collect();
        let optional = rows.iter().any(|r| !r.required);
        let _ = writeln!(
            out,
            "- {check}: {}{}",
            evidence(&rows),
            if optional { " (optional)" } else { "" }
        );
    }
    for item in &report.manual {
        let _ = writeln!(out, "- {}: awaiting manual review ({})", item.id, item.kind);
    }
    out.push('\n');
    matrix(report, &mut out);
    let _ = writeln!(out, "Environments Verified: {}", report.tested_list());
    out.push_str("All Required Environments: CONFIRMED\n");
    let conclusion = match &info.summary {
        Some(text) => one_line(report, text),
        None => {
            let required = report
                .checks_in_order()
                .into_iter()
                .filter(|c| report.rows.iter().any(|r| r.check == *c && r.required))
                .count();
            format!(
                "All {required} required checks passed in every required environment ({}).",
                report.tested_list()
            )
        }
    };
    let _ = writeln!(out, "\nConclusion: {conclusion}");
    Ok(out)
}

/// What a check's rows show, grouped by environment: "42 tests passed in linux, macos",
/// "40 tests passed (1 flaky) (junit report) in windows".
fn evidence(rows: &[&Row]) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for row in rows {
        let what = match (&row.detail.test_counts, row.result) {
            // From the runner's report: its counts, and the flaky tests among them.
            (Some(c), RowResult::Pass) if row.detail.tests.is_some() => {
                let flaky = if c.flaky > 0 {
                    format!(" ({} flaky)", c.flaky)
                } else {
                    String::new()
                };
                format!(
                    "{} passed{flaky} ({} report)",
                    super::text::counted(c.passed, "test", "tests"),
                    c.runner
                )
            }
            (Some(c), RowResult::Pass) => {
                format!("{} passed", super::text::counted(c.passed, "test", "tests"))
            }
            (_, RowResult::Pass) => format!("exit {}", row.exit_code),
            (_, RowResult::Fail) => format!("failed with exit {}", row.exit_code),
        };
        match groups.iter_mut().find(|(w, _)| *w == what) {
            Some((_, envs)) => envs.push(&row.environment),
            None => groups.push((what, vec![&row.environment])),
        }
    }
    if groups.is_empty() {
        return "no result".to_owned();
    }
    groups
        .iter()
        .map(|(what, envs)| format!("{what} in {}", envs.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One INFRA_BLOCKED block per environment with no results, labelled with the task (or
/// the run when no task is given).
pub fn infra_blocked(report: &Quoted, info: &SignalInfo) -> Result<String, RenderError> {
    if report.infra_blocked.is_empty() {
        return Err(RenderError::NothingBlocked);
    }
    let label = match &info.task_id {
        Some(task) => one_line(report, task),
        None => run_label(report),
    };
    let blocks: Vec<String> = report
        .infra_blocked
        .iter()
        .map(|b| infra_blocked_block(&label, b, usize::MAX))
        .collect();
    Ok(blocks.join("\n"))
}
