//! What a coding agent reads when the Stop hook keeps it working: each required pair that
//! failed or has no result, with its summary, the path of its full log and the last
//! lines of that log, within a few kilobytes (the rest counted, never silently left out).

use super::Quoted;
use super::view::Tails;
use crate::results::RowResult;

/// The most characters of the text the agent is given.
pub const REASON_LIMIT: usize = 4096;

/// Lines of each failure's log shown (the last ones).
pub const TAIL_LINES: usize = 6;

/// The most characters of one log line shown.
const LINE_CHARS: usize = 200;

/// `intro`, then one block per required failure (failed rows, then pairs without a
/// result), then the report's other reasons when no pair explains the verdict, cut to
/// [`REASON_LIMIT`] with a count of what was left out and `more` (where to read it all).
/// `log_root` is the folder the rows' log paths are relative to, as the agent can open it.
pub fn block_reason(
    report: &Quoted,
    tails: &Tails,
    log_root: &str,
    intro: &str,
    more: &str,
) -> String {
    let mut blocks = Vec::new();
    for (index, row) in report.rows.iter().enumerate() {
        if row.result != RowResult::Fail || !row.required {
            continue;
        }
        let d = &row.detail;
        let mut block = format!(
            "- {} in {}: {} (exit {}): {}\n",
            row.check,
            row.environment,
            d.status.as_str(),
            row.exit_code,
            d.summary
        );
        if let Some(log) = &d.log_path {
            block.push_str(&format!("  log: {}\n", join(log_root, log)));
        }
        if let Some(tail) = tails.of(index) {
            let lines: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
            for line in &lines[lines.len().saturating_sub(TAIL_LINES)..] {
                block.push_str(&format!("  | {}\n", cut(line, LINE_CHARS)));
            }
        }
        blocks.push(block);
    }
    for missing in &report.missing {
        let state = report.missing_kind(missing).word();
        blocks.push(format!(
            "- {} in {}: {state}: {}\n",
            missing.check, missing.environment, missing.reason
        ));
    }
    if blocks.is_empty() {
        blocks.extend(report.reasons.iter().map(|r| format!("- {r}\n")));
    }
    let mut text = format!("{intro}\n");
    let footer = |left: usize| {
        if left == 0 {
            format!("Full results: {more}")
        } else {
            format!("… and {left} more; full results: {more}")
        }
    };
    let total = blocks.len();
    for (shown, block) in blocks.iter().enumerate() {
        // Room is kept for the longest footer.
        if text.len() + block.len() + footer(total).len() > REASON_LIMIT {
            text.push_str(&footer(total - shown));
            return text;
        }
        text.push_str(block);
    }
    text.push_str(&footer(0));
    text
}

/// `log` under `root` (a log path is relative to the run's folder).
fn join(root: &str, log: &str) -> String {
    if root.is_empty() || root == "." {
        log.to_owned()
    } else {
        format!("{}/{log}", root.trim_end_matches('/'))
    }
}

/// At most `chars` characters of `line`, marked when cut.
fn cut(line: &str, chars: usize) -> String {
    match line.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn long_lines_are_cut_on_a_character_boundary() {
        assert_eq!(cut("ééé", 2), "éé…");
        assert_eq!(cut("abc", 3), "abc");
    }
}
