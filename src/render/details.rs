//! The failure details: one collapsed block per failed pair, with its test counts and
//! the tail of its log in a safe fence; alone, the text of a check run.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::cell::Cell;
use super::markdown::{Shape, shapes};
use super::provenance::blob_base;
use super::tests_view;
use super::text::{escape_html, escape_markdown, fence_for};
use super::view::Tails;
use super::{Quoted, RenderOptions};
use crate::results::baseline::{Baseline, PairRef};
use crate::results::{CheckResult, Report, RowResult, Status, TestOutcome};

/// The failure details alone (a check run's text), within `max_bytes`: log tails are
/// shortened, then dropped, then whole blocks left out with a count of what is missing.
pub fn failure_details(
    report: &Quoted,
    tails: &Tails,
    options: &RenderOptions,
    max_bytes: usize,
) -> String {
    let blob = blob_base(report, options);
    let mut out = String::new();
    for shape in shapes(options.tail_lines).into_iter().filter(|s| s.details) {
        out.clear();
        details(report, tails, shape, blob.as_deref(), &mut out);
        out = super::own::sealed(report, out);
        if out.len() <= max_bytes {
            return out;
        }
    }
    // Even without tails: keep the first blocks that fit.
    let blocks: Vec<&str> = out.split_inclusive("</details>\n\n").collect();
    let mut kept = String::new();
    for (i, block) in blocks.iter().enumerate() {
        let note = format!(
            "… and {} more failed pairs: see the full report.\n",
            blocks.len() - i
        );
        if kept.len() + block.len() + note.len() > max_bytes {
            if kept.len() + note.len() <= max_bytes {
                kept.push_str(&note);
            }
            break;
        }
        kept.push_str(block);
    }
    kept
}

/// One collapsed block per failed pair: its failing tests (from the runner's report,
/// linked under `blob`) and the log tail in a safe fence.
pub(super) fn details(
    report: &Report,
    tails: &Tails,
    shape: Shape,
    blob: Option<&str>,
    out: &mut String,
) {
    let failed = report
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.result == RowResult::Fail);
    // Each failure's standing against the baseline, when there is one.
    let standing = |list: fn(&Baseline) -> &Vec<PairRef>| -> HashMap<(&str, &str), Option<&str>> {
        report
            .baseline
            .as_ref()
            .map(|b| {
                list(b)
                    .iter()
                    .map(|p| ((p.check.as_str(), p.environment.as_str()), p.why.as_deref()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (new, old) = (standing(|b| &b.new_failures), standing(|b| &b.pre_existing));
    let base = report.baseline.as_ref().map(Baseline::label);
    for (index, row) in failed {
        let log = tails.of(index);
        let d = &row.detail;
        let (symbol, optional) = Cell::failure_mark(row);
        let _ = writeln!(
            out,
            "<details><summary>{symbol} {}{optional} in {}: {}</summary>\n",
            row.check,
            row.environment,
            // Raw HTML: markdown escapes would show, so entities (and no @mention).
            escape_html(&d.summary).replace('@', "&#64;")
        );
        // The whole cause, when the one line above had to cut it.
        if let Some(cause) = &d.cause {
            let _ = writeln!(out, "- cause: {}", escape_markdown(cause));
        }
        // What runs it again here (an optional check's too).
        if let Some(command) = super::text::reproduce(row) {
            let _ = writeln!(out, "- reproduce: `{}`", command.replace('`', "'"));
        }
        // The summary says how long it took; attempts only when it was retried.
        if d.attempts > 1 {
            let _ = writeln!(out, "- attempts: {}", d.attempts);
        }
        // A required failure's standing is in the answer above the grid.
        if let Some(base) = base.as_ref().filter(|_| !row.required) {
            let pair = (row.check.as_str(), row.environment.as_str());
            let standing = if let Some(why) = new.get(&pair) {
                match why {
                    Some(why) => format!("new against {base}: {why}"),
                    None => format!("new: it passed on {base}"),
                }
            } else if old.contains_key(&pair) {
                format!("pre-existing: it fails on {base} too")
            } else {
                format!("not compared: {base} has no result for it")
            };
            let _ = writeln!(out, "- baseline: {}", escape_markdown(&standing));
        }
        if let Some(line) = tests_view::counts_line(d) {
            let _ = writeln!(out, "- tests: {}", escape_markdown(&line));
        }
        // A split check: which of its shards failed, and whether the split overlapped.
        if let Some(sharded) = &d.sharded {
            for part in sharded.parts.iter().filter(|p| p.status != Status::Pass) {
                let _ = writeln!(
                    out,
                    "- shard {} failed: {}",
                    part.shard,
                    escape_markdown(&part.summary)
                );
            }
            if sharded.overlap_count > 0 {
                let _ = writeln!(
                    out,
                    "- the split overlapped: {} test{} ran in more than one shard ({})",
                    sharded.overlap_count,
                    if sharded.overlap_count == 1 { "" } else { "s" },
                    escape_markdown(&sharded.overlapped.join(", "))
                );
            }
        }
        // Fewer tests listed once the tails had to go.
        let listed = if shape.tail_lines > 0 {
            tests_view::FAILING_LISTED
        } else {
            3
        };
        failing_tests(d, listed, blob, out);
        // Each fact once: the runner's report names the failing tests with their place
        // and message, so their log tail would only say it again (the whole log stays
        // in the report and the leg's artifact).
        let named = tests_view::failing_count(d) > 0;
        if let Some(log) = log.filter(|_| shape.tail_lines > 0 && !named) {
            let log = last_lines(log, shape.tail_lines);
            let fence = fence_for(log);
            let _ = writeln!(out, "\n{fence}text\n{log}\n{fence}");
        }
        out.push_str("\n</details>\n\n");
    }
}

/// The first `listed` failing tests of a pair, each with its place and message, and a
/// count of the rest.
fn failing_tests(d: &CheckResult, listed: usize, blob: Option<&str>, out: &mut String) {
    let total = tests_view::failing_count(d);
    if total == 0 {
        return;
    }
    let _ = writeln!(out, "\nFailing tests:\n");
    let mut shown = 0;
    for case in tests_view::failing(d).take(listed) {
        shown += 1;
        let mut line = format!("- {}", escape_markdown(&tests_view::test_name(case)));
        if case.outcome == TestOutcome::Error {
            line.push_str(" (error)");
        }
        line.push_str(&escape_markdown(&tests_view::history_note(case)));
        if case.quarantined {
            let _ = write!(line, " ({} quarantined)", super::cell::QUARANTINED);
        }
        match tests_view::place(case, blob) {
            Some((label, Some(url))) => {
                let _ = write!(line, " at [{}]({url})", escape_markdown(&label));
            }
            Some((label, None)) => {
                let _ = write!(line, " at {}", escape_markdown(&label));
            }
            None => {}
        }
        let message = tests_view::message_line(case);
        if !message.is_empty() {
            let _ = write!(line, ": {}", escape_markdown(&message));
        }
        let _ = writeln!(out, "{line}");
    }
    let rest = total.saturating_sub(shown);
    if rest > 0 {
        let _ = writeln!(
            out,
            "- … and {rest} more failing {}: see the full report",
            if rest == 1 { "test" } else { "tests" }
        );
    }
}

/// The last `n` lines of `text`.
pub(super) fn last_lines(text: &str, n: usize) -> &str {
    let mut start = text.len();
    for _ in 0..n {
        match text[..start].rfind('\n') {
            Some(i) => start = i,
            None => return text,
        }
    }
    &text[start + 1..]
}
