//! Quarantine: which failed tests of a pair its check's `quarantine:` holds back, and
//! whether they are all that failed. One rule for `run`, which judges its own attempt,
//! and for the intake, which holds a claimed pass to the manifest it is judged by (a
//! result's own marks are never taken: they are worked out again here).
//!
//! A pair passes by its quarantine only when every failure is a test its report lists
//! as failed and an entry in force covers each, and its exit code is what a runner
//! gives for failed tests: a failure outside any test, an error (a test that could not
//! run: a collection error, a set-up, a package that did not build), one counted but
//! not listed, a test no entry names, or another exit code (a crash, a signal, a usage
//! error, no tests collected) keeps it failed. An entry past its `until`, or a glob that
//! matches every test, fails the pair whatever its tests did.

use chrono::NaiveDate;

use super::schema::{QuarantineUse, TestCounts, TestOutcome, TestReport, test_label};
use crate::manifest::{Check, Quarantine};

/// What a check's quarantine made of one pair's report.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Held {
    /// Failed tests an entry in force covers.
    pub held: u64,
    /// Whether the pair failed by held tests alone: some failed, each is listed, and
    /// an entry in force covers each.
    pub all_held: bool,
    /// Why the quarantine itself fails the pair: an entry past its date, a glob that
    /// matches every test.
    pub refused: Vec<String>,
}

/// Marks the tests of `report` that `check`'s quarantine holds back on `today` (a
/// result's own marks are cleared first), counts them in `counts`, and records in the
/// report what each entry matched and held back. A shard's `share` of the tests is not
/// the whole suite: a glob that matches all of its share is not refused there.
pub fn apply(
    check: &Check,
    counts: &mut TestCounts,
    report: &mut TestReport,
    today: NaiveDate,
    exit_code: Option<i32>,
    share: bool,
) -> Held {
    for case in &mut report.cases {
        case.quarantined = false;
    }
    report.quarantine.clear();
    counts.quarantined = 0;
    if check.quarantine.is_empty() {
        return Held::default();
    }
    let mut refused = Vec::new();
    let mut uses: Vec<QuarantineUse> = check
        .quarantine
        .iter()
        .map(|entry| QuarantineUse {
            test: entry.test.as_str().into(),
            reason: entry.reason.as_str().into(),
            until: entry.until.to_string().into(),
            owner: entry.owner.as_deref().map(Into::into),
            matched: 0,
            held: 0,
            expired: entry.expired(today),
        })
        .collect();
    let mut held = 0u64;
    let mut failed_listed = 0u64;
    for case in &mut report.cases {
        // As the comment names it, or whole (`suite › name` where the comment drops a
        // suite the name begins with).
        let label = test_label(&case.suite, &case.name);
        let whole = (!case.suite.is_empty()).then(|| format!("{} › {}", case.suite, case.name));
        let whole = whole.filter(|w| *w != label);
        // And as the comment and the history show it, neutralised (a `|` as `¦`, no
        // invisible characters, a claim phrase quoted): an entry copied from there.
        let shown = |text: &str| {
            let cleaned = crate::untrusted::neutralise::clean(text);
            let shown = crate::untrusted::neutralise::neutralise(&cleaned).into_owned();
            (shown != text).then_some(shown)
        };
        let shown: Vec<String> = std::iter::once(&label)
            .chain(whole.as_ref())
            .filter_map(|t| shown(t))
            .collect();
        let failed = case.outcome.is_failure();
        // An error is a test that could not run (or no test at all): never held back.
        let holdable = case.outcome == TestOutcome::Failed;
        // The first entry in force that matches holds it back.
        let mut holder = None;
        for (i, (entry, used)) in check.quarantine.iter().zip(uses.iter_mut()).enumerate() {
            if entry.matches(&label)
                || whole.as_deref().is_some_and(|w| entry.matches(w))
                || shown.iter().any(|s| entry.matches(s))
            {
                used.matched += 1;
                if holder.is_none() && !used.expired {
                    holder = Some(i);
                }
            }
        }
        if failed {
            failed_listed += 1;
            if let Some(i) = holder.filter(|_| holdable) {
                uses[i].held += 1;
                case.quarantined = true;
                held += 1;
            }
        }
    }
    let listed = report.cases.len() as u64;
    for (entry, used) in check.quarantine.iter().zip(&uses) {
        let seen = used.matched;
        if used.expired {
            refused.push(format!(
                "the quarantine of `{}` ended on {}{}",
                entry.test,
                entry.until,
                owner(entry)
            ));
        } else if entry.glob.is_some() && listed > 1 && seen == listed && !share {
            refused.push(format!(
                "the quarantine glob `{}` matches every test of the check: it would hide the whole suite",
                entry.test
            ));
        }
    }
    report.quarantine = uses;
    counts.quarantined = held;
    let all_held = refused.is_empty()
        && held > 0
        && held == failed_listed
        && counts.failed == failed_listed
        && check.expect.required_code() == Some(0)
        && exit_code.is_some_and(failed_tests_code);
    Held {
        held,
        all_held,
        refused,
    }
}

/// Whether a runner exits with `code` when only tests failed: 1 (pytest, go test,
/// jest, vitest, mocha with one failure, rspec, dotnet test, Playwright, gotestsum,
/// PHPUnit, prove), 100 (nextest), 101 (cargo test); or 0 (a runner that exits 0 while
/// its report lists failures). Any other code says something else went wrong.
pub fn failed_tests_code(code: i32) -> bool {
    matches!(code, 0 | 1 | 100 | 101)
}

/// ` (owner: …)`, when the entry names one.
fn owner(entry: &Quarantine) -> String {
    entry
        .owner
        .as_deref()
        .map_or_else(String::new, |o| format!(" (owner: {o})"))
}

/// The entry that holds back the test labelled `label` on `today`, if any.
pub fn entry_for<'a>(check: &'a Check, label: &str, today: NaiveDate) -> Option<&'a Quarantine> {
    check
        .quarantine
        .iter()
        .find(|e| !e.expired(today) && e.matches(label))
}
