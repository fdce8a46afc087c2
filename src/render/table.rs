//! The terminal table (tabled): one row per expected pair, coloured on a terminal.

use anstyle::{AnsiColor, Style};
use tabled::builder::Builder;
use tabled::settings::Style as TableStyle;

use std::time::Duration;

use super::Quoted;
use crate::results::format_duration;
use crate::results::report::MissingKind;
use crate::results::{RowResult, Verdict};

/// Renders the report for a terminal; `color` adds ANSI colours.
pub fn render(report: &Quoted, color: bool) -> String {
    let paint = Paint(color);
    let mut out = format!("{}\n", table(report, paint));
    if report.rows.is_empty() && report.missing.is_empty() && report.manual.is_empty() {
        out.push_str("no checks defined: nothing to run\n");
    }
    for item in &report.manual {
        out.push_str(&format!(
            "awaiting review: {} ({}): {}\n",
            item.id, item.kind, item.text
        ));
    }
    for change in &report.manifest_changes {
        out.push_str(&format!(
            "manifest change: {}{}\n",
            change.change,
            if change.weakens { " (weakens)" } else { "" }
        ));
    }
    verdict_lines(report, paint, &mut out);
    out
}

/// ANSI colours, or plain text.
#[derive(Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn paint(self, text: &str, c: AnsiColor) -> String {
        if self.0 {
            let style = Style::new().fg_color(Some(c.into())).bold();
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_owned()
        }
    }
}

/// One row per expected pair: the executed ones, then those without a row.
fn table(report: &Quoted, paint: Paint) -> tabled::Table {
    let mut builder = Builder::default();
    builder.push_record(["Check", "Environment", "Exit", "Result", "Time", "Summary"]);
    for row in &report.rows {
        let d = &row.detail;
        let result = match (row.result, d.status) {
            (RowResult::Pass, _) if d.flaky => paint.paint("PASS (flaky)", AnsiColor::Yellow),
            (RowResult::Pass, _) => paint.paint("PASS", AnsiColor::Green),
            // The same words as the strict table: the summary says why (a timeout, an
            // ineffective gate, an error).
            (RowResult::Fail, _) if !row.required => paint.paint("FAIL", AnsiColor::Blue),
            (RowResult::Fail, _) => paint.paint("FAIL", AnsiColor::Red),
        };
        let check = if row.required {
            row.check.to_string()
        } else {
            format!("{} (optional)", row.check)
        };
        builder.push_record([
            check,
            row.environment.to_string(),
            row.exit_code.to_string(),
            result,
            format_duration(Duration::from_millis(d.duration_ms)),
            d.summary.to_string(),
        ]);
    }
    for m in &report.missing {
        // The grids' words: ERROR when it failed before it had an exit code (the
        // result's status), NOT RUN when it was not started, MISSING with no result.
        builder.push_record([
            m.check.clone(),
            m.environment.clone(),
            "–".to_owned(),
            match report.missing_kind(m) {
                MissingKind::FailedToRun => paint.paint("ERROR", AnsiColor::Red),
                MissingKind::NotRun => paint.paint("NOT RUN", AnsiColor::Yellow),
                MissingKind::NoResult => paint.paint("MISSING", AnsiColor::Yellow),
            },
            "–".to_owned(),
            m.reason.clone(),
        ]);
    }
    let mut table = builder.build();
    table.with(TableStyle::sharp());
    table
}

/// `Environments Tested:`, then the verdict (or, for a partial run, what ran) and its
/// reasons.
fn verdict_lines(report: &Quoted, paint: Paint, out: &mut String) {
    let tested = report.tested_list();
    out.push_str(&format!("Environments Tested: {tested}\n"));
    match report.partial {
        // What ran, never a verdict: the manifest has pairs this run did not cover.
        Some(partial) => out.push_str(&format!(
            "{}\n",
            paint.paint(&partial.line(), AnsiColor::Yellow)
        )),
        None => {
            let verdict = match report.verdict {
                Verdict::Verified => paint.paint("VERIFIED", AnsiColor::Green),
                Verdict::NotVerified => paint.paint("NOT VERIFIED", AnsiColor::Red),
                Verdict::Skipped => {
                    paint.paint("SKIPPED (skip: true; nothing verified)", AnsiColor::Yellow)
                }
            };
            out.push_str(&format!("All Required Environments: {verdict}\n"));
        }
    }
    if report.verdict == Verdict::NotVerified {
        for reason in &report.reasons {
            out.push_str(&format!("  - {reason}\n"));
        }
    }
}
