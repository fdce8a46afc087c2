//! A report compared with its baseline (the base branch's report): which failures are
//! new and which were there before, which pairs were fixed or went missing, and — the
//! guard against a suite that silently shrinks — the test gates that ran fewer tests
//! than the base by more than `tests-may-drop` allows, and the tests that vanished.

use std::borrow::Cow;
use std::collections::HashSet;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use compact_str::CompactString;

use super::report::{Report, RowResult, Verdict};
use super::schema::{Status, TestReport, TestResult, test_identity};
use crate::manifest::{FailOn, Manifest};

/// The most vanished test names listed per pair (all are counted).
const VANISHED_LISTED: usize = 20;

/// What the comparison with the baseline found (the report's `baseline`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The base report's commit, workflow run and manifest.
    pub commit: Option<String>,
    pub run_id: Option<String>,
    /// The base's branch, when known (a base read from the history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub manifest_digest: String,
    /// The manifest's `fail-on`.
    #[serde(default)]
    pub fail_on: FailOn,
    /// Whether `fail-on: new` accepts this report's failures: every one is pre-existing
    /// and nothing else is wrong. The verdict stays NOT VERIFIED; the exit code is 0 and
    /// the check run neutral.
    #[serde(default)]
    pub accepted: bool,
    /// Failing now, passing on the base.
    pub new_failures: Vec<PairRef>,
    /// Failing now and on the base.
    pub pre_existing: Vec<PairRef>,
    /// Passing now, failing on the base.
    pub fixed: Vec<PairRef>,
    /// Missing now, with a result on the base.
    pub newly_missing: Vec<PairRef>,
    /// Test gates that ran fewer tests than the base by more than allowed.
    pub test_drops: Vec<TestDrop>,
    /// Tests the base's runner report listed and this one does not.
    pub vanished: Vec<Vanished>,
    /// Pairs with no counterpart on the base (a check or environment it did not have).
    pub not_compared: Vec<PairRef>,
}

/// One pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairRef {
    pub check: String,
    pub environment: String,
    /// For a pair that failed on the base too, what makes its failure new: tests that
    /// fail now and did not there, or a failure of another kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A test gate that ran fewer tests than the base allowed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestDrop {
    pub check: String,
    pub environment: String,
    /// Tests executed on the base, and now.
    pub base: u64,
    pub head: u64,
    /// `tests-may-drop`, in percent.
    pub allowed_percent: f64,
    /// Of the base's distinct tests, how many vanished (they count toward the drop:
    /// a suite shrunk to a few tests run many times is still a shrunk suite).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub vanished: u64,
    /// The base's distinct tests, when vanished ones are counted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub base_distinct: u64,
    /// The pair is gone from the matrix: its check or its environment is no longer
    /// judged (a check renamed, an environment no longer expected).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gone: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The tests of a pair that the base listed and this run does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vanished {
    pub check: String,
    pub environment: String,
    pub count: u64,
    /// The first of them, `suite › name`.
    pub tests: Vec<String>,
}

impl Baseline {
    /// The base as messages name it: `main @abc1234` (or `main (run 7)`, `main`) when
    /// its branch is known; else `the baseline (abc1234)`, `the baseline (run 7)`, or
    /// `the baseline`.
    pub fn label(&self) -> String {
        if let Some(branch) = &self.branch {
            return match (&self.commit, &self.run_id) {
                (Some(commit), _) => {
                    format!("{branch} @{}", commit.chars().take(7).collect::<String>())
                }
                (None, Some(run)) => format!("{branch} (run {run})"),
                (None, None) => branch.clone(),
            };
        }
        match (&self.commit, &self.run_id) {
            (Some(commit), _) => format!(
                "the baseline ({})",
                commit.chars().take(7).collect::<String>()
            ),
            (None, Some(run)) => format!("the baseline (run {run})"),
            (None, None) => "the baseline".to_owned(),
        }
    }
}

/// A pair's result on the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseResult {
    Pass,
    Fail,
    /// Required, and no result arrived.
    Missing,
}

/// One pair of the base, as the comparison needs it.
#[derive(Debug, Clone)]
pub struct BasePair<'a> {
    pub result: BaseResult,
    pub tests_executed: Option<u64>,
    /// What the failure was, for a failing pair: the check's status and exit code.
    pub status: Option<Status>,
    pub exit_code: Option<i32>,
    /// The tests its runner report listed.
    pub tests: Vec<BaseTest<'a>>,
}

/// One test the base's runner report listed.
#[derive(Debug, Clone)]
pub struct BaseTest<'a> {
    pub suite: Cow<'a, str>,
    pub name: Cow<'a, str>,
    /// Its identity when the names are not the runner's ([`TestResult::id`]).
    pub id: Option<Cow<'a, str>>,
    /// It failed (or ended in an error).
    pub failed: bool,
}

impl BaseTest<'_> {
    fn identity(&self) -> CompactString {
        match &self.id {
            Some(id) => CompactString::from(id.as_ref()),
            None => test_identity(&self.suite, &self.name),
        }
    }
}

/// What a report is compared with: the base branch's report, or its latest run in the
/// history. Borrows from a report; owns what a database read.
#[derive(Debug, Clone, Default)]
pub struct Base<'a> {
    pub commit: Option<String>,
    pub run_id: Option<String>,
    /// The branch, when known (the history records it; a report does not).
    pub branch: Option<String>,
    pub manifest_digest: String,
    /// By check, then environment (`Cow<str>` keys look up by `&str`).
    pairs: FxHashMap<Cow<'a, str>, FxHashMap<Cow<'a, str>, BasePair<'a>>>,
}

impl<'a> Base<'a> {
    /// A base with no pairs yet.
    pub fn new(
        commit: Option<String>,
        run_id: Option<String>,
        branch: Option<String>,
        manifest_digest: String,
    ) -> Base<'a> {
        Base {
            commit,
            run_id,
            branch,
            manifest_digest,
            pairs: FxHashMap::default(),
        }
    }

    /// The base's pair `(check, environment)`.
    pub fn insert(&mut self, check: Cow<'a, str>, environment: Cow<'a, str>, pair: BasePair<'a>) {
        self.pairs
            .entry(check)
            .or_default()
            .insert(environment, pair);
    }

    /// Adds a test the base's pair `(check, environment)` listed (none when the pair is
    /// not in the base).
    pub fn add_test(&mut self, check: &str, environment: &str, test: BaseTest<'a>) {
        if let Some(pair) = self
            .pairs
            .get_mut(check)
            .and_then(|envs| envs.get_mut(environment))
        {
            pair.tests.push(test);
        }
    }

    fn pair(&self, check: &str, environment: &str) -> Option<&BasePair<'a>> {
        self.pairs.get(check)?.get(environment)
    }

    /// The base that `report` is.
    pub fn of_report(report: &'a Report) -> Base<'a> {
        let mut base = Base::new(
            report.source.commit.clone(),
            report.source.run_id.clone(),
            None,
            report.manifest.digest.clone(),
        );
        for row in &report.rows {
            let tests = row.detail.tests.as_ref().map_or_else(Vec::new, |t| {
                t.cases
                    .iter()
                    .map(|c| BaseTest {
                        suite: Cow::Borrowed(c.suite.as_str()),
                        name: Cow::Borrowed(c.name.as_str()),
                        id: c.id.as_deref().map(Cow::Borrowed),
                        failed: c.outcome.is_failure(),
                    })
                    .collect()
            });
            base.insert(
                Cow::Borrowed(row.check.as_str()),
                Cow::Borrowed(row.environment.as_str()),
                BasePair {
                    result: match row.result {
                        RowResult::Pass => BaseResult::Pass,
                        RowResult::Fail => BaseResult::Fail,
                    },
                    tests_executed: row.detail.tests_executed,
                    status: Some(row.detail.status),
                    exit_code: row.detail.exit_code,
                    tests,
                },
            );
        }
        for missing in &report.missing {
            base.insert(
                Cow::Borrowed(missing.check.as_str()),
                Cow::Borrowed(missing.environment.as_str()),
                BasePair {
                    result: BaseResult::Missing,
                    tests_executed: None,
                    status: None,
                    exit_code: None,
                    tests: Vec::new(),
                },
            );
        }
        base
    }
}

/// Compares `head` (judged against `manifest`) with `base`, pair by pair where check
/// and environment match.
pub fn compare(head: &Report, base: &Base<'_>, manifest: &Manifest) -> Baseline {
    let mut b = Baseline {
        commit: base.commit.clone(),
        run_id: base.run_id.clone(),
        branch: base.branch.clone(),
        manifest_digest: base.manifest_digest.clone(),
        fail_on: manifest.fail_on,
        accepted: false,
        new_failures: Vec::new(),
        pre_existing: Vec::new(),
        fixed: Vec::new(),
        newly_missing: Vec::new(),
        test_drops: Vec::new(),
        vanished: Vec::new(),
        not_compared: Vec::new(),
    };
    let pair = |check: &str, environment: &str| PairRef {
        check: check.to_owned(),
        environment: environment.to_owned(),
        why: None,
    };
    // Each check's allowance, looked up once: a large matrix has a row per pair.
    let allowances: FxHashMap<&str, Option<f64>> = manifest
        .checks
        .iter()
        .map(|c| (c.id.as_str(), c.drop_allowed()))
        .collect();
    for row in &head.rows {
        let (check, env) = (row.check.as_str(), row.environment.as_str());
        let Some(base_pair) = base.pair(check, env) else {
            b.not_compared.push(pair(check, env));
            continue;
        };
        let was = match base_pair.result {
            BaseResult::Pass => RowResult::Pass,
            BaseResult::Fail => RowResult::Fail,
            BaseResult::Missing => continue,
        };
        match (row.result, was) {
            (RowResult::Fail, RowResult::Pass) => b.new_failures.push(pair(check, env)),
            (RowResult::Fail, RowResult::Fail) => match failure_news(row, base_pair) {
                None => b.pre_existing.push(pair(check, env)),
                Some(why) => b.new_failures.push(PairRef {
                    why: Some(why),
                    ..pair(check, env)
                }),
            },
            (RowResult::Pass, RowResult::Fail) => b.fixed.push(pair(check, env)),
            (RowResult::Pass, RowResult::Pass) => {}
        }
        let allowed = allowances.get(check).copied().flatten();
        let mut drop = None;
        if let (Some(allowed), Some(was), Some(now)) =
            (allowed, base_pair.tests_executed, row.detail.tests_executed)
            && (now as f64) < (was as f64) * (1.0 - allowed / 100.0)
        {
            drop = Some(TestDrop {
                check: check.to_owned(),
                environment: env.to_owned(),
                base: was,
                head: now,
                allowed_percent: allowed,
                vanished: 0,
                base_distinct: 0,
                gone: false,
            });
        }
        if let Some(now) = &row.detail.tests
            && !base_pair.tests.is_empty()
            // A list cut short (left_out) cannot tell what vanished.
            && now.left_out == 0
        {
            let gone = vanished(now, &base_pair.tests);
            let count = gone.count;
            if count > 0 {
                // Vanished tests count toward the drop.
                if let Some(allowed) = allowed
                    && (count as f64) > (gone.base_distinct as f64) * allowed / 100.0
                {
                    let drop = drop.get_or_insert_with(|| TestDrop {
                        check: check.to_owned(),
                        environment: env.to_owned(),
                        base: base_pair.tests_executed.unwrap_or(gone.base_distinct),
                        head: row.detail.tests_executed.unwrap_or_default(),
                        allowed_percent: allowed,
                        vanished: 0,
                        base_distinct: 0,
                        gone: false,
                    });
                    drop.vanished = count;
                    drop.base_distinct = gone.base_distinct;
                }
                b.vanished.push(Vanished {
                    check: check.to_owned(),
                    environment: env.to_owned(),
                    count,
                    tests: gone.named,
                });
            }
        }
        b.test_drops.extend(drop);
    }
    for missing in &head.missing {
        if base
            .pair(&missing.check, &missing.environment)
            .is_some_and(|p| p.result != BaseResult::Missing)
        {
            b.newly_missing
                .push(pair(&missing.check, &missing.environment));
        }
    }
    // A pair whose tests ran on the base and that is no pair of this matrix at all (its
    // check renamed or dropped, its environment no longer expected): every one of its
    // tests is gone, never passed over because nothing here is compared with it.
    if head.partial.is_none() {
        let here: HashSet<(&str, &str)> = head
            .rows
            .iter()
            .map(|r| (r.check.as_str(), r.environment.as_str()))
            .chain(
                head.missing
                    .iter()
                    .map(|m| (m.check.as_str(), m.environment.as_str())),
            )
            .collect();
        let mut gone: Vec<TestDrop> = base
            .pairs
            .iter()
            .flat_map(|(check, envs)| envs.iter().map(move |(env, p)| (check, env, p)))
            .filter(|(check, env, p)| {
                p.tests_executed.is_some_and(|n| n > 0) && !here.contains(&(&***check, &***env))
            })
            .map(|(check, env, p)| TestDrop {
                check: check.to_string(),
                environment: env.to_string(),
                base: p.tests_executed.unwrap_or_default(),
                head: 0,
                allowed_percent: 0.0,
                vanished: 0,
                base_distinct: 0,
                gone: true,
            })
            .collect();
        gone.sort_by(|a, b| (&a.check, &a.environment).cmp(&(&b.check, &b.environment)));
        b.test_drops.extend(gone);
    }
    b
}

/// The base's tests that a run no longer lists, by identity.
struct Gone {
    /// How many distinct tests vanished.
    count: u64,
    /// The first of them, as people name them ([`super::test_label`]).
    named: Vec<String>,
    /// The base's distinct tests.
    base_distinct: u64,
}

/// What vanished of `base` from `now`. Names are compared as the runner wrote them; a
/// base whose names were rewritten for display (quoted) is compared by identity.
fn vanished(now: &TestReport, base: &[BaseTest<'_>]) -> Gone {
    let by_identity = base.iter().any(|t| t.id.is_some());
    let mut named = Vec::new();
    let mut count = 0u64;
    let mut seen: HashSet<CompactString> = HashSet::new();
    let mut note = |test: &BaseTest<'_>| {
        count += 1;
        if named.len() < VANISHED_LISTED {
            named.push(super::test_label(&test.suite, &test.name));
        }
    };
    if by_identity {
        let present: HashSet<CompactString> = now.cases.iter().map(TestResult::identity).collect();
        for test in base {
            let identity = test.identity();
            if seen.insert(identity.clone()) && !present.contains(&identity) {
                note(test);
            }
        }
    } else {
        let present: HashSet<(&str, &str)> = now
            .cases
            .iter()
            .map(|c| (c.suite.as_str(), c.name.as_str()))
            .collect();
        let mut seen_names: HashSet<(&str, &str)> = HashSet::new();
        for test in base {
            let key = (test.suite.as_ref(), test.name.as_ref());
            if seen_names.insert(key) && !present.contains(&key) {
                note(test);
            }
        }
        return Gone {
            count,
            named,
            base_distinct: seen_names.len() as u64,
        };
    }
    Gone {
        count,
        named,
        base_distinct: seen.len() as u64,
    }
}

/// Why a pair that fails now and failed on the base is a new failure (`None`: the same
/// failure). With the runners' reports on both sides, the failing tests are compared:
/// one failing now that did not there is new. A failure of another kind — failing tests
/// there, a build break (no failing test) here, or the other way round; a report on one
/// side only; another status or exit code without reports — is new.
fn failure_news(row: &super::report::Row, base: &BasePair<'_>) -> Option<String> {
    let head_tests = row.detail.tests.as_deref();
    let base_listed = !base.tests.is_empty();
    match (head_tests, base_listed) {
        (Some(now), true) => {
            let was: HashSet<CompactString> = base
                .tests
                .iter()
                .filter(|t| t.failed)
                .map(BaseTest::identity)
                .collect();
            let failing: Vec<&TestResult> = now
                .cases
                .iter()
                .filter(|c| c.outcome.is_failure())
                .collect();
            if failing.is_empty() != was.is_empty() {
                return Some(if failing.is_empty() {
                    "its tests failed on the base; now it fails with no failing test (a failure of another kind, such as a build break)".to_owned()
                } else {
                    "it failed with no failing test on the base; now tests fail".to_owned()
                });
            }
            let new: Vec<&&TestResult> = failing
                .iter()
                .filter(|c| !was.contains(&c.identity()))
                .collect();
            match new.as_slice() {
                [] => None,
                [one] => Some(format!(
                    "`{} › {}` fails, and did not on the base",
                    one.suite, one.name
                )),
                [first, ..] => Some(format!(
                    "{} tests fail that did not on the base (`{} › {}`, …)",
                    new.len(),
                    first.suite,
                    first.name
                )),
            }
        }
        (Some(_), false) | (None, true) => Some(
            "a runner report on one side only: the failures cannot be told to be the same"
                .to_owned(),
        ),
        (None, false) => {
            let same = base.status.is_none_or(|s| s == row.detail.status)
                && base.exit_code == row.detail.exit_code;
            (!same).then(|| {
                format!(
                    "it failed with {} on the base; now with {}",
                    describe_failure(base.status, base.exit_code),
                    describe_failure(Some(row.detail.status), row.detail.exit_code)
                )
            })
        }
    }
}

fn describe_failure(status: Option<Status>, exit_code: Option<i32>) -> String {
    let code = exit_code.map_or_else(|| "no exit code".to_owned(), |c| format!("exit {c}"));
    match status {
        Some(status) => format!("{} ({code})", status.as_str()),
        None => code,
    }
}

impl Report {
    /// Records the comparison with the baseline; a test gate that ran fewer tests than
    /// the base allowed makes the verdict NOT VERIFIED, unless weakenings are allowed
    /// (`--allow-weakening`, call [`Report::apply_trust`] first). Under `fail-on: new`, a report
    /// whose only problems are failures the base had too is accepted (exit 0, a neutral
    /// check run) while its verdict stays NOT VERIFIED.
    pub fn apply_baseline(&mut self, mut baseline: Baseline) {
        let base = baseline.label();
        // A maintainer's `--allow-weakening` (the pull request's label) accepts a smaller
        // suite: the drops stay listed, they do not fail the verdict.
        let drops_allowed = self.weakening_allowed;
        for drop in baseline.test_drops.iter().filter(|_| !drops_allowed) {
            if drop.gone {
                self.reasons.push(format!(
                    "{} in {} ran {} test{} on {base}, and is no pair of this matrix (its check or environment is gone; see --allow-weakening)",
                    drop.check,
                    drop.environment,
                    drop.base,
                    if drop.base == 1 { "" } else { "s" },
                ));
                continue;
            }
            let fewer = drop.head < drop.base;
            let ran = format!(
                "ran {} test{}; {base} ran {}",
                drop.head,
                if drop.head == 1 { "" } else { "s" },
                drop.base,
            );
            let lost = format!(
                "{} of the {} distinct tests {base} ran vanished",
                drop.vanished, drop.base_distinct
            );
            let what = match (fewer, drop.vanished > 0) {
                (true, true) => format!("{ran}, and {lost}"),
                (false, true) => lost,
                _ => ran,
            };
            self.reasons.push(format!(
                "{} in {} {what} (tests-may-drop: {}%)",
                drop.check, drop.environment, drop.allowed_percent
            ));
        }
        if !baseline.test_drops.is_empty() && !drops_allowed && self.verdict != Verdict::Skipped {
            self.verdict = Verdict::NotVerified;
        }
        baseline.accepted = baseline.fail_on == FailOn::New && self.only_pre_existing(&baseline);
        self.baseline = Some(baseline);
    }

    /// Whether the report is NOT VERIFIED only because of required pairs that failed on
    /// its baseline too (`false` without a baseline).
    pub fn only_pre_existing_failures(&self) -> bool {
        self.baseline
            .as_ref()
            .is_some_and(|b| self.only_pre_existing(b))
    }

    /// Whether the report is NOT VERIFIED only because of required pairs that failed on
    /// the base too: each reason is one of those pairs' failures (so no pair is missing,
    /// no environment blocked, nothing weakened, no test count dropped) and the run was
    /// whole.
    fn only_pre_existing(&self, baseline: &Baseline) -> bool {
        let pre: HashSet<(&str, &str)> = baseline
            .pre_existing
            .iter()
            .map(|p| (p.check.as_str(), p.environment.as_str()))
            .collect();
        let failing: Vec<&super::report::Row> = self
            .rows
            .iter()
            .filter(|r| r.required && r.result == RowResult::Fail)
            .collect();
        self.verdict == Verdict::NotVerified
            && !self.cancelled
            && !self.failed_to_run
            && self.partial.is_none()
            && !self.blocked_by_weakening()
            && (baseline.test_drops.is_empty() || self.weakening_allowed)
            && baseline.newly_missing.is_empty()
            && self.missing.is_empty()
            && self.infra_blocked.is_empty()
            && self.contradictions.is_empty()
            && !failing.is_empty()
            && self.reasons.len() == failing.len()
            && failing
                .iter()
                .all(|r| pre.contains(&(r.check.as_str(), r.environment.as_str())))
    }

    /// Whether `fail-on: new` accepted the report's failures (all pre-existing).
    pub fn failures_accepted(&self) -> bool {
        self.baseline.as_ref().is_some_and(|b| b.accepted)
    }
}
