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
    /// The pair passed; its test count when the log or report gave one, and how many
    /// tests fewer than the base it ran (vanished, or its count dropped), if any.
    Pass {
        tests: Option<u64>,
        flaky: bool,
        dropped: Option<u64>,
        /// How many shards it is split into (1: it ran whole).
        shards: u32,
        /// Failed tests its quarantine held back.
        quarantined: u64,
    },
    /// A required check failed; how many of its tests failed, of how many, when its
    /// runner's report said.
    Fail {
        failed: Option<(u64, u64)>,
        shards: u32,
    },
    /// An optional check failed, errored, or has no result: advisory, never a blocker.
    Advisory(Trouble),
    /// The check errored before it had an exit code (no row; the result says ERROR).
    Error,
    /// A required pair has no result.
    Missing,
    /// A required pair was not run (a fail-fast stop, a run timeout, an interrupt).
    NotRun,
    /// The check is not required in this environment.
    NotRequired,
}

/// What went wrong with an optional check's pair (it never blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trouble {
    /// It ran and failed.
    Failed,
    /// It errored before it had an exit code.
    Error,
    /// Nothing reported it.
    NoResult,
    /// It was not run (a fail-fast stop, a run timeout, an interrupt).
    NotRun,
}

impl Trouble {
    /// The word for it in the texts: `failed`, `errored`, `has no result`, `was not run`.
    pub fn verb(self) -> &'static str {
        match self {
            Trouble::Failed => "failed",
            Trouble::Error => "errored",
            Trouble::NoResult => "has no result",
            Trouble::NotRun => "was not run",
        }
    }
}

impl Cell {
    /// The state of `check` in `environment`.
    pub fn of(report: &Report, index: &PairIndex<'_>, check: &str, environment: &str) -> Cell {
        match index.row(check, environment) {
            Some(row) => match Cell::of_row(row) {
                Cell::Pass {
                    tests,
                    flaky,
                    shards,
                    quarantined,
                    ..
                } => Cell::Pass {
                    tests,
                    flaky,
                    dropped: dropped(report, check, environment),
                    shards,
                    quarantined,
                },
                cell => cell,
            },
            None => match index.missing(check, environment) {
                Some(m) => Cell::of_missing(report, m),
                None => Cell::NotRequired,
            },
        }
    }

    /// The state of a required pair without a row.
    pub fn of_missing(report: &Report, missing: &Missing) -> Cell {
        match (report.missing_kind(missing), missing.required) {
            (MissingKind::FailedToRun, true) => Cell::Error,
            (MissingKind::NotRun, true) => Cell::NotRun,
            (MissingKind::NoResult, true) => Cell::Missing,
            (MissingKind::FailedToRun, false) => Cell::Advisory(Trouble::Error),
            (MissingKind::NotRun, false) => Cell::Advisory(Trouble::NotRun),
            (MissingKind::NoResult, false) => Cell::Advisory(Trouble::NoResult),
        }
    }

    /// The state of an executed pair.
    pub fn of_row(row: &Row) -> Cell {
        // How many ways the check is split (a shard that never reported still counts).
        let shards = row
            .detail
            .sharded
            .as_ref()
            .and_then(|s| s.parts.first_shard())
            .map_or(1, |shard| shard.count.max(1));
        match row.result {
            RowResult::Pass => Cell::Pass {
                tests: row.detail.tests_executed,
                flaky: row.detail.flaky,
                dropped: None,
                shards,
                quarantined: row
                    .detail
                    .tests
                    .as_ref()
                    .and(row.detail.test_counts.as_ref())
                    .map_or(0, |c| c.quarantined),
            },
            RowResult::Fail if row.required => Cell::Fail {
                shards,
                failed: row
                    .detail
                    .tests
                    .as_ref()
                    .and(row.detail.test_counts.as_ref())
                    .filter(|c| c.failed > 0)
                    .map(|c| (c.failed, row.detail.tests_executed.unwrap_or(c.failed))),
            },
            RowResult::Fail => Cell::Advisory(Trouble::Failed),
        }
    }

    /// How a failed row's block is marked: `❌`, or for an optional check `🟡` and
    /// ` (optional)` (advisory, as in the grid).
    pub fn failure_mark(row: &Row) -> (&'static str, &'static str) {
        match Cell::of_row(row) {
            Cell::Advisory(_) => (ADVISORY, " (optional)"),
            _ => ("❌", ""),
        }
    }

    /// The markdown grid's text: `✅ 218`, `✅ 5 ↓1` (one test fewer than the base),
    /// `✅ flaky`, `✅ 40 🧪 2` (two failures quarantined), `❌ 2 of 40`, `❌`, `🟡 failed` (an optional check's; `🟡 error`,
    /// `🟡 no result`, `🟡 not run`), `⚠️ no result`, `–`.
    pub fn markdown(self) -> String {
        match self {
            Cell::Pass {
                tests,
                flaky,
                dropped,
                shards,
                quarantined,
            } => {
                let mut text = "✅".to_owned();
                if let Some(n) = tests {
                    text.push_str(&format!(" {}", thousands(n)));
                }
                if let Some(n) = dropped {
                    text.push_str(&format!(" ↓{}", thousands(n)));
                }
                if flaky {
                    text.push_str(" flaky");
                }
                if quarantined > 0 {
                    text.push_str(&format!(" {QUARANTINED} {}", thousands(quarantined)));
                }
                text + &in_shards(shards)
            }
            Cell::Fail {
                failed: Some((failed, of)),
                shards,
            } => format!(
                "❌ {} of {}{}",
                thousands(failed),
                thousands(of),
                in_shards(shards)
            ),
            Cell::Fail {
                failed: None,
                shards,
            } => format!("❌{}", in_shards(shards)),
            Cell::Error => "❌ error".to_owned(),
            Cell::Advisory(trouble) => format!(
                "{ADVISORY} {}",
                match trouble {
                    Trouble::Failed => "failed",
                    Trouble::Error => "error",
                    Trouble::NoResult => "no result",
                    Trouble::NotRun => "not run",
                }
            ),
            Cell::Missing => "⚠️ no result".to_owned(),
            Cell::NotRun => "⚠️ not run".to_owned(),
            Cell::NotRequired => "–".to_owned(),
        }
    }

    /// The HTML grid's CSS class and text.
    pub fn html(self) -> (&'static str, String) {
        match self {
            Cell::Pass {
                tests,
                flaky,
                dropped,
                shards,
                quarantined,
            } => {
                let mut text = "✅ PASS".to_owned();
                if let Some(n) = tests {
                    text.push_str(&format!(
                        " · {} {}",
                        thousands(n),
                        if n == 1 { "test" } else { "tests" }
                    ));
                }
                if let Some(n) = dropped {
                    text.push_str(&format!(" · ↓{} against the base", thousands(n)));
                }
                if flaky {
                    text.push_str(" · flaky");
                }
                if quarantined > 0 {
                    text.push_str(&format!(
                        " · {QUARANTINED} {} quarantined",
                        thousands(quarantined)
                    ));
                }
                if shards > 1 {
                    text.push_str(&format!(" · {shards} shards"));
                }
                ("pass", text)
            }
            Cell::Fail {
                failed: Some((failed, of)),
                shards,
            } => (
                "fail",
                format!(
                    "❌ FAIL · {} of {} {}{}",
                    thousands(failed),
                    thousands(of),
                    if of == 1 { "test" } else { "tests" },
                    if shards > 1 {
                        format!(" · {shards} shards")
                    } else {
                        String::new()
                    }
                ),
            ),
            Cell::Fail { failed: None, .. } => ("fail", "❌ FAIL".to_owned()),
            Cell::Error => ("fail", "❌ ERROR".to_owned()),
            Cell::Advisory(trouble) => (
                "advisory",
                format!(
                    "{ADVISORY} {} (optional)",
                    match trouble {
                        Trouble::Failed => "FAIL",
                        Trouble::Error => "ERROR",
                        Trouble::NoResult => "MISSING",
                        Trouble::NotRun => "NOT RUN",
                    }
                ),
            ),
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

/// What the symbols of the cells in `cells` mean, each said once, in a fixed order:
/// `✅ passed (tests run) · ❌ failed (tests failed of run) · …`.
pub fn legend(cells: &[Cell]) -> String {
    let has = |f: fn(&Cell) -> bool| cells.iter().any(f);
    let mut parts = Vec::new();
    if has(|c| matches!(c, Cell::Pass { .. })) {
        parts.push(if has(|c| matches!(c, Cell::Pass { tests: Some(_), .. })) {
            "✅ passed (tests run)"
        } else {
            "✅ passed"
        });
    }
    if has(|c| {
        matches!(
            c,
            Cell::Pass {
                dropped: Some(_),
                ..
            }
        )
    }) {
        parts.push("↓ tests fewer than the base");
    }
    if has(|c| {
        matches!(
            c,
            Cell::Fail {
                failed: Some(_),
                ..
            }
        )
    }) {
        parts.push("❌ failed (tests failed of run)");
    } else if has(|c| matches!(c, Cell::Fail { .. } | Cell::Error)) {
        parts.push("❌ failed");
    }
    if has(|c| matches!(c, Cell::Advisory(Trouble::Failed))) {
        parts.push("🟡 optional check failed (does not block)");
    }
    if has(|c| matches!(c, Cell::Advisory(Trouble::Error))) {
        parts.push("🟡 error: optional check errored (does not block)");
    }
    if has(|c| matches!(c, Cell::Advisory(Trouble::NoResult | Trouble::NotRun))) {
        parts.push("🟡 no result / not run: optional check (does not block)");
    }
    if has(|c| *c == Cell::Missing) {
        parts.push("⚠️ no result (blocks)");
    }
    if has(|c| *c == Cell::NotRun) {
        parts.push("⚠️ not run (blocks)");
    }
    if has(|c| {
        matches!(
            c,
            Cell::Pass { shards: 2.., .. } | Cell::Fail { shards: 2.., .. }
        )
    }) {
        parts.push("×N split across N shards");
    }
    if has(|c| *c == Cell::NotRequired) {
        parts.push("– not required there");
    }
    parts.join(" · ")
}

/// ` ×3` when a pair ran in 3 shards; nothing when it ran whole.
fn in_shards(shards: u32) -> String {
    if shards > 1 {
        format!(" ×{shards}")
    } else {
        String::new()
    }
}

/// The mark of an optional check that failed: advisory, never a blocker (a glyph that
/// reads on white and on dark backgrounds).
pub const ADVISORY: &str = "🟡";

/// The mark of failed tests a quarantine held back.
pub const QUARANTINED: &str = "🧪";

/// How many tests fewer than its base `check` ran in `environment`: the tests that
/// vanished, else how far its count dropped; `None` when nothing did (or no base).
fn dropped(report: &Report, check: &str, environment: &str) -> Option<u64> {
    let b = report.baseline.as_ref()?;
    let is = |c: &str, e: &str| c == check && e == environment;
    let vanished = b
        .vanished
        .iter()
        .find(|v| is(&v.check, &v.environment))
        .map(|v| v.count)
        .filter(|n| *n > 0);
    vanished.or_else(|| {
        b.test_drops
            .iter()
            .find(|d| is(&d.check, &d.environment))
            .map(|d| d.base.saturating_sub(d.head))
            .filter(|n| *n > 0)
    })
}

/// Whether `check` is optional, as its pairs say (executed or not).
pub fn is_optional(report: &Report, index: &PairIndex<'_>, check: &str) -> bool {
    report.environments.iter().any(|env| {
        index.row(check, env).is_some_and(|r| !r.required)
            || index.missing(check, env).is_some_and(|m| !m.required)
    })
}

/// The line at the top of a matrix: required pairs passed of expected, failed and
/// missing, then the optional pairs apart (they never block), tests run (tests, not test
/// runs), and how long the longest environment took. `None` when no pair was expected.
pub fn summary_line(report: &Report) -> Option<String> {
    let expected = report.rows.len() + report.missing.len();
    if expected == 0 {
        return None;
    }
    // A missing pair of an optional check is optional (it says so; reports written
    // before it was said count it as required).
    let optional_missing = |m: &&Missing| !m.required;
    let required_rows = report.rows.iter().filter(|r| r.required);
    let count = |cell: fn(Cell) -> bool| {
        report
            .rows
            .iter()
            .filter(|r| r.required && cell(Cell::of_row(r)))
            .count()
    };
    let passed = count(|c| matches!(c, Cell::Pass { .. }));
    // A pair that errored before it had an exit code failed; it is not missing.
    let (errored, missing): (Vec<&Missing>, Vec<&Missing>) = report
        .missing
        .iter()
        .filter(|m| !optional_missing(m))
        .partition(|m| report.missing_kind(m) == MissingKind::FailedToRun);
    let required = required_rows.count() + errored.len() + missing.len();
    let optional = expected - required;
    let mut line = format!(
        "{passed} of {required} {}{} passed",
        if optional > 0 { "required " } else { "" },
        plural_word(required, "pair", "pairs")
    );
    for (n, what) in [
        (
            count(|c| matches!(c, Cell::Fail { .. })) + errored.len(),
            "failed",
        ),
        (missing.len(), "missing"),
    ] {
        if n > 0 {
            line.push_str(&format!(" · {n} {what}"));
        }
    }
    if optional > 0 {
        let optional_rows = report.rows.iter().filter(|r| !r.required);
        let (ok, failed): (Vec<&Row>, Vec<&Row>) =
            optional_rows.partition(|r| r.result == RowResult::Pass);
        // An optional pair that errored before it had an exit code failed; one with no
        // result (or not run) is missing.
        let (errored, absent): (Vec<&Missing>, Vec<&Missing>) = report
            .missing
            .iter()
            .filter(optional_missing)
            .partition(|m| report.missing_kind(m) == MissingKind::FailedToRun);
        let parts: Vec<String> = [
            (ok.len(), "passed"),
            (failed.len() + errored.len(), "failed"),
            (absent.len(), "missing"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        line.push_str(&format!(" · optional: {}", parts.join(", ")));
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
            " · longest environment {}",
            format_duration(Duration::from_millis(longest))
        ));
    }
    Some(line)
}

fn plural_word(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
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
