//! What each (check, environment) cell of a grid shows, decided once for every format:
//! the grids of the markdown matrix and of the HTML page map these states to their own
//! symbols, so the same outcome reads the same everywhere.

use std::collections::HashMap;
use std::time::Duration;

use crate::results::format_duration;
use crate::results::report::{Missing, MissingKind, PairIndex};
use crate::results::{Report, Row, RowResult};

/// One cell of a grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// The pair passed; its test count when the log or report gave one.
    Pass { tests: Option<u64>, flaky: bool },
    /// A required check failed.
    Fail,
    /// An optional check failed: advisory, never a blocker.
    Advisory,
    /// The check errored before it had an exit code (no row; the result says ERROR).
    Error,
    /// A required pair has no result.
    Missing,
    /// A required pair was not run (a fail-fast stop, a run timeout, an interrupt).
    NotRun,
    /// The check is not required in this environment.
    NotRequired,
}

impl Cell {
    /// The state of `check` in `environment`.
    pub fn of(report: &Report, index: &PairIndex<'_>, check: &str, environment: &str) -> Cell {
        match index.row(check, environment) {
            Some(row) => Cell::of_row(row),
            None => match index.missing(check, environment) {
                Some(m) => Cell::of_missing(report, m),
                None => Cell::NotRequired,
            },
        }
    }

    /// The state of a required pair without a row.
    pub fn of_missing(report: &Report, missing: &Missing) -> Cell {
        match report.missing_kind(missing) {
            MissingKind::FailedToRun => Cell::Error,
            MissingKind::NotRun => Cell::NotRun,
            MissingKind::NoResult => Cell::Missing,
        }
    }

    /// The state of an executed pair.
    pub fn of_row(row: &Row) -> Cell {
        match row.result {
            RowResult::Pass => Cell::Pass {
                tests: row.detail.tests_executed,
                flaky: row.detail.flaky,
            },
            RowResult::Fail if row.required => Cell::Fail,
            RowResult::Fail => Cell::Advisory,
        }
    }

    /// How a failed row's block is marked: `❌`, or for an optional check `❕` and
    /// ` (optional)` (advisory, as in the grid).
    pub fn failure_mark(row: &Row) -> (&'static str, &'static str) {
        match Cell::of_row(row) {
            Cell::Advisory => ("❕", " (optional)"),
            _ => ("❌", ""),
        }
    }

    /// The markdown grid's text: `✅ 218`, `✅ flaky`, `❌`, `❕ optional`, `⚠️`, `–`.
    pub fn markdown(self) -> String {
        match self {
            Cell::Pass { tests, flaky } => {
                let mut text = "✅".to_owned();
                if let Some(n) = tests {
                    text.push_str(&format!(" {n}"));
                }
                if flaky {
                    text.push_str(" flaky");
                }
                text
            }
            Cell::Fail => "❌".to_owned(),
            Cell::Error => "❌ error".to_owned(),
            Cell::Advisory => "❕ optional".to_owned(),
            Cell::Missing => "⚠️".to_owned(),
            Cell::NotRun => "⚠️ not run".to_owned(),
            Cell::NotRequired => "–".to_owned(),
        }
    }

    /// The HTML grid's CSS class and text.
    pub fn html(self) -> (&'static str, String) {
        match self {
            Cell::Pass { tests, flaky } => {
                let mut text = "✅ PASS".to_owned();
                if let Some(n) = tests {
                    text.push_str(&format!(" · {n} tests"));
                }
                if flaky {
                    text.push_str(" · flaky");
                }
                ("pass", text)
            }
            Cell::Fail => ("fail", "❌ FAIL".to_owned()),
            Cell::Error => ("fail", "❌ ERROR".to_owned()),
            Cell::Advisory => ("advisory", "❕ FAIL (optional)".to_owned()),
            Cell::Missing => ("missing", "⚠️ MISSING".to_owned()),
            Cell::NotRun => ("missing", "⚠️ NOT RUN".to_owned()),
            Cell::NotRequired => ("na", "–".to_owned()),
        }
    }

    /// Whether the cell stands in no way of the verdict and needs no attention.
    pub fn is_clean(self) -> bool {
        matches!(self, Cell::Pass { .. } | Cell::NotRequired)
    }
}

/// Whether `check` is optional, as its executed pairs say.
pub fn is_optional(report: &Report, index: &PairIndex<'_>, check: &str) -> bool {
    report
        .environments
        .iter()
        .find_map(|env| index.row(check, env))
        .is_some_and(|r| !r.required)
}

/// The line at the top of a matrix: pairs passed of expected, failed, optional failures,
/// missing, tests run (summed), and how long the longest environment took. `None` when
/// no pair was expected.
pub fn summary_line(report: &Report) -> Option<String> {
    let expected = report.rows.len() + report.missing.len();
    if expected == 0 {
        return None;
    }
    let count =
        |cell: fn(Cell) -> bool| report.rows.iter().filter(|r| cell(Cell::of_row(r))).count();
    let passed = count(|c| matches!(c, Cell::Pass { .. }));
    // A pair that errored before it had an exit code failed; it is not missing.
    let errored = report
        .missing
        .iter()
        .filter(|m| report.missing_kind(m) == MissingKind::FailedToRun)
        .count();
    let mut line = format!("{passed} of {expected} pairs passed");
    for (n, what) in [
        (count(|c| c == Cell::Fail) + errored, "failed"),
        (count(|c| c == Cell::Advisory), "optional failed"),
        (report.missing.len() - errored, "missing"),
    ] {
        if n > 0 {
            line.push_str(&format!(" · {n} {what}"));
        }
    }
    // Tests, not test runs: a suite of 1,991 tests run in 2 environments is "1,991
    // tests × 2 environments", never 3,982 tests.
    let mut tests_in: HashMap<&str, u64> = HashMap::new();
    for row in &report.rows {
        if let Some(n) = row.detail.tests_executed {
            *tests_in.entry(row.environment.as_str()).or_default() += n;
        }
    }
    let mut totals: Vec<u64> = tests_in.values().copied().collect();
    totals.sort_unstable();
    let tests = |n: u64| format!("{} {}", thousands(n), if n == 1 { "test" } else { "tests" });
    match totals.as_slice() {
        [] => {}
        [one] => line.push_str(&format!(" · {}", tests(*one))),
        [first, .., last] if first == last => line.push_str(&format!(
            " · {} × {} environments",
            tests(*first),
            totals.len()
        )),
        all => line.push_str(&format!(
            " · {} test runs in {} environments",
            thousands(all.iter().sum()),
            all.len()
        )),
    }
    // Each environment's time, in one pass over the rows.
    let mut per_environment: HashMap<&str, u64> = HashMap::new();
    for row in &report.rows {
        *per_environment.entry(row.environment.as_str()).or_default() += row.detail.duration_ms;
    }
    let longest = report
        .environments
        .iter()
        .map(|env| per_environment.get(env.as_str()).copied().unwrap_or(0))
        .max()
        .unwrap_or(0);
    if !report.rows.is_empty() {
        line.push_str(&format!(
            " · {}",
            format_duration(Duration::from_millis(longest))
        ));
    }
    Some(line)
}

/// `n` with its thousands separated: `1,991`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_991), "1,991");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
