//! The failure details: one collapsed block per failed pair, with its test counts and
//! the tail of its log in a safe fence; alone, the text of a check run.

use std::fmt::Write as _;

use super::cell::Cell;
use super::markdown::{Shape, shapes};
use super::text::{escape_html, fence_for};
use super::view::Tails;
use super::{Quoted, RenderOptions};
use crate::results::{Report, RowResult};

/// The failure details alone (a check run's text), within `max_bytes`: log tails are
/// shortened, then dropped, then whole blocks left out with a count of what is missing.
pub fn failure_details(
    report: &Quoted,
    tails: &Tails,
    options: &RenderOptions,
    max_bytes: usize,
) -> String {
    let mut out = String::new();
    for shape in shapes(options.tail_lines).into_iter().filter(|s| s.details) {
        out.clear();
        details(report, tails, shape, &mut out);
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

/// One collapsed block per failed pair, with the log tail in a safe fence.
pub(super) fn details(report: &Report, tails: &Tails, shape: Shape, out: &mut String) {
    let failed = report
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.result == RowResult::Fail);
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
        let _ = writeln!(out, "- duration: {} ms", d.duration_ms);
        let _ = writeln!(out, "- attempts: {}", d.attempts);
        if let Some(counts) = &d.test_counts {
            let _ = writeln!(
                out,
                "- tests: {} passed, {} failed, {} skipped ({})",
                counts.passed, counts.failed, counts.skipped, counts.runner
            );
        }
        if let Some(log) = log.filter(|_| shape.tail_lines > 0) {
            let log = last_lines(log, shape.tail_lines);
            let fence = fence_for(log);
            let _ = writeln!(out, "\n{fence}text\n{log}\n{fence}");
        }
        out.push_str("\n</details>\n\n");
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
