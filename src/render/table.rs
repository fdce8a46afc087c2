//! The terminal table (tabled): one row per expected pair, coloured on a terminal.

use anstyle::{AnsiColor, Style};
use tabled::grid::IterGrid;
use tabled::grid::colors::NoColors;
use tabled::grid::config::{
    AlignmentHorizontal, CompactConfig, HorizontalLine, Indent, Sides, SpannedConfig,
};
use tabled::grid::dimension::{CompactGridDimension, DimensionValue, StaticDimension};
use tabled::grid::records::IterRecords;
use tabled::settings::Style as TableStyle;

use std::borrow::Cow;
use std::time::Duration;

use super::Quoted;
use crate::results::format_duration;
use crate::results::report::{Missing, MissingKind, Pair};
use crate::results::{Row, RowResult, Status, Verdict};

/// Renders the report for a terminal; `color` adds ANSI colours.
pub fn render(report: &Quoted, color: bool) -> String {
    let paint = Paint(color);
    let mut out = String::new();
    if report.rows.is_empty() && report.missing.is_empty() {
        // No pair to show: no table at all, and why.
        if report.manual.is_empty() {
            out.push_str(if report.verdict == Verdict::Skipped {
                "no check ran: the manifest says `skip: true`\n"
            } else {
                "no checks defined: nothing to run\n"
            });
        }
    } else {
        table(report, paint, &mut out);
        out.push('\n');
    }
    for item in &report.manual {
        out.push_str(&format!(
            "awaiting review: {} ({}): {}\n",
            item.id, item.kind, item.text
        ));
    }
    for place in &report.places {
        out.push_str(&format!("ran: {}\n", super::places::line(place)));
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
    fn paint<'a>(self, text: &'a str, c: AnsiColor) -> Cow<'a, str> {
        if self.0 {
            let style = Style::new().fg_color(Some(c.into())).bold();
            Cow::Owned(format!("{}{text}{}", style.render(), style.render_reset()))
        } else {
            Cow::Borrowed(text)
        }
    }
}

/// The table in two passes over the report (tabled's grid, the layout of its `sharp`
/// style): one to measure each column, one to write. Nothing is held per cell, so a
/// table of GitHub's largest matrix costs its text and one height per row.
fn table(report: &Quoted, paint: Paint, out: &mut String) {
    let compact = CompactConfig::new()
        .set_padding(Sides::new(
            Indent::spaced(1),
            Indent::spaced(1),
            Indent::zero(),
            Indent::zero(),
        ))
        .set_alignment_horizontal(AlignmentHorizontal::Left)
        .set_borders(TableStyle::sharp().into());
    // Widths with the padding, heights of the text alone (as the grid takes them).
    let (widths, heights) = CompactGridDimension::dimension(
        IterRecords::new(records(report, paint), COLUMNS, None),
        &compact,
    );
    let dims = StaticDimension::new(
        DimensionValue::List(widths),
        DimensionValue::Partial(heights, 1),
    );
    let mut config = SpannedConfig::from(compact);
    // The line under the header.
    config.insert_horizontal_line(1, HorizontalLine::full('─', '┼', '├', '┤'));
    let records = IterRecords::new(records(report, paint), COLUMNS, None);
    // Writing to a `String` cannot fail.
    let _ = IterGrid::new(records, config, dims, NoColors).build(&mut *out);
}

const COLUMNS: usize = 6;

/// The header, then one row per expected pair, executed or not, in manifest order, then
/// environment order. The cells borrow the report's texts.
fn records(report: &Quoted, paint: Paint) -> impl Iterator<Item = [Cow<'_, str>; COLUMNS]> {
    let header = ["Check", "Environment", "Exit", "Result", "Time", "Summary"].map(Cow::Borrowed);
    let pairs = report.pairs_in_order().map(move |pair| match pair {
        Pair::Row(row) => executed(row, paint),
        Pair::Missing(m) => not_executed(report, m, paint),
    });
    std::iter::once(header).chain(pairs)
}

/// An executed pair's cells. The result is the result file's own word, as the live
/// lines say it: `PASS`, `FAIL`, or `ERROR` for a check that errored with an exit code
/// (a timeout, processes left running); an optional check is marked so in both.
fn executed(row: &Row, paint: Paint) -> [Cow<'_, str>; COLUMNS] {
    let d = &row.detail;
    let word = match (row.result, d.status) {
        (RowResult::Pass, _) if d.flaky => "PASS (flaky)",
        (RowResult::Pass, _) => "PASS",
        (RowResult::Fail, Status::Error) => "ERROR",
        (RowResult::Fail, _) => "FAIL",
    };
    let colour = match row.result {
        RowResult::Pass if d.flaky => AnsiColor::Yellow,
        RowResult::Pass => AnsiColor::Green,
        RowResult::Fail if !row.required => AnsiColor::Blue,
        RowResult::Fail => AnsiColor::Red,
    };
    let check = label(&row.check, row.required);
    [
        check,
        Cow::Borrowed(row.environment.as_str()),
        Cow::Owned(row.exit_code.to_string()),
        paint.paint(word, colour),
        Cow::Owned(format_duration(Duration::from_millis(d.duration_ms))),
        Cow::Borrowed(d.summary.as_str()),
    ]
}

/// A check as the table names it: `docs (optional)` for an optional one.
fn label(check: &str, required: bool) -> Cow<'_, str> {
    if required {
        Cow::Borrowed(check)
    } else {
        Cow::Owned(format!("{check} (optional)"))
    }
}

/// A pair without a row: the grids' words, ERROR when it failed before it had an exit
/// code (the result's status), NOT RUN when it was not started, MISSING with no result.
fn not_executed<'r>(report: &'r Quoted, m: &'r Missing, paint: Paint) -> [Cow<'r, str>; COLUMNS] {
    let kind = report.missing_kind(m);
    let colour = match kind {
        _ if !m.required => AnsiColor::Blue,
        MissingKind::FailedToRun => AnsiColor::Red,
        MissingKind::NotRun | MissingKind::NoResult => AnsiColor::Yellow,
    };
    let check = label(&m.check, m.required);
    [
        check,
        Cow::Borrowed(m.environment.as_str()),
        Cow::Borrowed("–"),
        paint.paint(kind.word(), colour),
        Cow::Borrowed("–"),
        Cow::Borrowed(m.reason.as_str()),
    ]
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
        // The first required failure, run again here.
        if let Some(command) = report
            .rows
            .iter()
            .find(|r| r.required && r.result == RowResult::Fail)
            .and_then(super::text::reproduce)
        {
            out.push_str(&format!("reproduce: {command}\n"));
        }
    }
    if let Some(baseline) = &report.baseline {
        out.push_str(&format!(
            "{}\n",
            super::baseline_view::heading(report, baseline)
        ));
        if baseline.accepted {
            out.push_str(&format!(
                "  fail-on: new: every failure fails on {} too: accepted (exit 0)\n",
                baseline.label()
            ));
        }
    }
}
