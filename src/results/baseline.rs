//! A report compared with its baseline (the base branch's report): which failures are
//! new and which were there before, which pairs were fixed or went missing, and — the
//! guard against a suite that silently shrinks — the test gates that ran fewer tests
//! than the base by more than `tests-may-drop` allows, and the tests that vanished.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::report::{Report, RowResult, Verdict};
use crate::manifest::Manifest;

/// The most vanished test names listed per pair (all are counted).
const VANISHED_LISTED: usize = 20;

/// What the comparison with the baseline found (the report's `baseline`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The base report's commit, workflow run and manifest.
    pub commit: Option<String>,
    pub run_id: Option<String>,
    pub manifest_digest: String,
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
    /// The base as messages name it: `the baseline (abc1234)`, `the baseline (run 7)`,
    /// or `the baseline`.
    pub fn label(&self) -> String {
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

/// Compares `head` (judged against `manifest`) with `base`, pair by pair where check
/// and environment match.
pub fn compare(head: &Report, base: &Report, manifest: &Manifest) -> Baseline {
    let base_index = base.index();
    let mut b = Baseline {
        commit: base.source.commit.clone(),
        run_id: base.source.run_id.clone(),
        manifest_digest: base.manifest.digest.clone(),
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
    };
    // Each check's allowance, looked up once: a large matrix has a row per pair.
    let allowances: rustc_hash::FxHashMap<&str, Option<f64>> = manifest
        .checks
        .iter()
        .map(|c| (c.id.as_str(), c.drop_allowed()))
        .collect();
    for row in &head.rows {
        let (check, env) = (row.check.as_str(), row.environment.as_str());
        let Some(base_row) = base_index.row(check, env) else {
            if base_index.missing(check, env).is_none() {
                b.not_compared.push(pair(check, env));
            }
            continue;
        };
        match (row.result, base_row.result) {
            (RowResult::Fail, RowResult::Pass) => b.new_failures.push(pair(check, env)),
            (RowResult::Fail, RowResult::Fail) => b.pre_existing.push(pair(check, env)),
            (RowResult::Pass, RowResult::Fail) => b.fixed.push(pair(check, env)),
            (RowResult::Pass, RowResult::Pass) => {}
        }
        let allowed = allowances.get(check).copied().flatten();
        if let (Some(allowed), Some(was), Some(now)) = (
            allowed,
            base_row.detail.tests_executed,
            row.detail.tests_executed,
        ) && (now as f64) < (was as f64) * (1.0 - allowed / 100.0)
        {
            b.test_drops.push(TestDrop {
                check: check.to_owned(),
                environment: env.to_owned(),
                base: was,
                head: now,
                allowed_percent: allowed,
            });
        }
        if let (Some(was), Some(now)) = (&base_row.detail.tests, &row.detail.tests) {
            let present: HashSet<(&str, &str)> = now
                .cases
                .iter()
                .map(|c| (c.suite.as_str(), c.name.as_str()))
                .collect();
            let mut gone = was
                .cases
                .iter()
                .filter(|c| !present.contains(&(c.suite.as_str(), c.name.as_str())));
            let named: Vec<String> = gone
                .by_ref()
                .take(VANISHED_LISTED)
                .map(|c| format!("{} › {}", c.suite, c.name))
                .collect();
            let count = named.len() as u64 + gone.count() as u64;
            // A list cut short (left_out) cannot tell what vanished.
            if count > 0 && now.left_out == 0 {
                b.vanished.push(Vanished {
                    check: check.to_owned(),
                    environment: env.to_owned(),
                    count,
                    tests: named,
                });
            }
        }
    }
    for missing in &head.missing {
        if base_index
            .row(&missing.check, &missing.environment)
            .is_some()
        {
            b.newly_missing
                .push(pair(&missing.check, &missing.environment));
        }
    }
    b
}

impl Report {
    /// Records the comparison with the baseline; a test gate that ran fewer tests than
    /// the base allowed makes the verdict NOT VERIFIED.
    pub fn apply_baseline(&mut self, baseline: Baseline) {
        let base = baseline.label();
        for drop in &baseline.test_drops {
            self.reasons.push(format!(
                "{} in {} ran {} test{}; {base} ran {} (tests-may-drop: {}%)",
                drop.check,
                drop.environment,
                drop.head,
                if drop.head == 1 { "" } else { "s" },
                drop.base,
                drop.allowed_percent
            ));
        }
        if !baseline.test_drops.is_empty() && self.verdict != Verdict::Skipped {
            self.verdict = Verdict::NotVerified;
        }
        self.baseline = Some(baseline);
    }
}
