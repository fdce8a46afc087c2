//! The Environment Verification Matrix as markdown (FORMATS.md §5): marker, verdict
//! heading, the grid for people, the strict table and lines, then failure details.

use std::fmt::Write as _;

use super::RenderOptions;
use super::text::{escape_markdown, fence_for};
use crate::results::logs::{resolve_log, tail};
use crate::results::{Report, RowResult, Verdict};

/// The hidden marker line that identifies our comment for `key`.
pub fn marker(key: &str) -> String {
    format!("<!-- cargo-verify-matrix:{key} -->")
}

/// Renders the whole markdown document.
pub fn render(report: &Report, options: &RenderOptions) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", marker(&options.key));
    let heading = match report.verdict {
        Verdict::Verified => "✅ Environment Verification Matrix: VERIFIED",
        Verdict::NotVerified => "❌ Environment Verification Matrix: NOT VERIFIED",
        Verdict::Skipped => "⏭️ Environment Verification Matrix: SKIPPED",
    };
    let _ = writeln!(out, "## {heading}\n");
    if report.verdict == Verdict::Skipped {
        let _ = writeln!(
            out,
            "**SKIPPED**: the manifest says `skip: true`; nothing was run or verified.\n"
        );
    }
    grid(report, &mut out);
    strict(report, &mut out);
    manual(report, &mut out);
    details(report, options, &mut out);
    out
}

/// The grid for people: checks as rows, environments as columns.
fn grid(report: &Report, out: &mut String) {
    let checks = report.checks_in_order();
    if checks.is_empty() {
        let _ = writeln!(out, "_No checks to run: no checks defined._\n");
        return;
    }
    let _ = write!(out, "| Check |");
    for env in &report.environments {
        let _ = write!(out, " {env} |");
    }
    let _ = write!(out, "\n|-------|");
    for _ in &report.environments {
        let _ = write!(out, ":---:|");
    }
    out.push('\n');
    for check in checks {
        let optional = report
            .rows
            .iter()
            .find(|r| r.check == check)
            .is_some_and(|r| !r.required);
        let label = if optional {
            format!("{check} (optional)")
        } else {
            check.to_owned()
        };
        let _ = write!(out, "| {label} |");
        for env in &report.environments {
            let row = report
                .rows
                .iter()
                .find(|r| r.check == check && r.environment == *env);
            let missing = report
                .missing
                .iter()
                .any(|m| m.check == check && m.environment == *env);
            let cell = match row {
                Some(r) if r.result == RowResult::Pass && r.detail.flaky => "✅ flaky",
                Some(r) if r.result == RowResult::Pass => "✅",
                Some(_) => "❌",
                None if missing => "⚠️",
                None => "–",
            };
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    out.push('\n');
}

/// The strict table and the lines below it, exactly as FORMATS.md §5 gives them.
fn strict(report: &Report, out: &mut String) {
    out.push_str("| Check | Environment | Exit Code | Result |\n");
    out.push_str("|-------|-------------|-----------|--------|\n");
    for row in &report.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            row.check,
            row.environment,
            row.exit_code,
            row.result.as_str()
        );
    }
    out.push('\n');
    // Environments with no result at all get their own INFRA_BLOCKED block instead.
    let partial: Vec<_> = report
        .missing
        .iter()
        .filter(|m| !report.is_infra_blocked(&m.environment))
        .collect();
    if !partial.is_empty() {
        for m in partial {
            let _ = writeln!(
                out,
                "Missing: {} in {} ({})",
                m.check,
                m.environment,
                escape_markdown(&m.reason)
            );
        }
        out.push('\n');
    }
    for blocked in &report.infra_blocked {
        let _ = writeln!(out, "INFRA_BLOCKED: {}\n", run_label(report));
        let _ = writeln!(
            out,
            "Issue: Environment '{}' unavailable",
            blocked.environment
        );
        let _ = writeln!(
            out,
            "Cannot complete verification - environment required for:"
        );
        for check in &blocked.checks {
            let _ = writeln!(out, "- {check}");
        }
        out.push('\n');
    }
    let tested = report.tested_list();
    let _ = writeln!(out, "Environments Tested: {tested}");
    let verdict = if report.verdict == Verdict::Verified {
        "VERIFIED"
    } else {
        "NOT VERIFIED"
    };
    let _ = writeln!(out, "All Required Environments: {verdict}");
    if report.verdict != Verdict::Verified && !report.reasons.is_empty() {
        out.push('\n');
        for reason in &report.reasons {
            let _ = writeln!(out, "- {}", escape_markdown(reason));
        }
    }
    out.push('\n');
}

/// What identifies the run in an INFRA_BLOCKED block.
fn run_label(report: &Report) -> String {
    report
        .source
        .run_id
        .clone()
        .or_else(|| {
            report
                .source
                .commit
                .as_ref()
                .map(|c| c.chars().take(12).collect())
        })
        .unwrap_or_else(|| report.manifest.path.clone())
}

fn manual(report: &Report, out: &mut String) {
    if report.manual.is_empty() {
        return;
    }
    let _ = writeln!(out, "Awaiting review (not run, not counted):");
    for item in &report.manual {
        let _ = writeln!(
            out,
            "- {} ({}): {}",
            item.id,
            item.kind,
            escape_markdown(&item.text)
        );
    }
    out.push('\n');
}

/// One collapsed block per failed pair, with the log tail in a safe fence.
fn details(report: &Report, options: &RenderOptions, out: &mut String) {
    for row in report.rows.iter().filter(|r| r.result == RowResult::Fail) {
        let d = &row.detail;
        let _ = writeln!(
            out,
            "<details><summary>❌ {} in {}: {}</summary>\n",
            row.check,
            row.environment,
            escape_markdown(&d.summary)
        );
        let _ = writeln!(out, "- duration: {} ms", d.duration_ms);
        let _ = writeln!(out, "- attempts: {}", d.attempts);
        if let Some(counts) = &d.test_counts {
            let _ = writeln!(
                out,
                "- tests: {} passed, {} failed, {} skipped ({})",
                counts.passed, counts.failed, counts.skipped, counts.runner
            );
        }
        let log = options
            .log_root
            .as_deref()
            .zip(d.log_path.as_deref())
            .and_then(|(root, path)| resolve_log(root, path))
            .and_then(|path| tail(&path, options.tail_lines, 16 * 1024));
        if let Some(log) = log.filter(|l| !l.trim().is_empty()) {
            let fence = fence_for(&log);
            let _ = writeln!(out, "\n{fence}text\n{log}\n{fence}");
        }
        out.push_str("\n</details>\n\n");
    }
}
