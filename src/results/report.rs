//! The report (docs/formats.md §3): expected pairs from the manifest, results from partial
//! result files, coverage and the verdict. One code path serves a single environment's
//! run and a merge of many.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::io::{Probe, ResultFileError};
use super::schema::{CheckResult, PartialResult, Source, Status, one_line_summary};
use crate::exit_code;
use crate::manifest::compare::ManifestChange;
use crate::manifest::validate::EXIT_CODES;
use crate::manifest::{Check, EnvName, Manifest};
use crate::plan;

/// The verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    Verified,
    NotVerified,
    Skipped,
}

impl Verdict {
    /// The spelling in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Verified => "VERIFIED",
            Verdict::NotVerified => "NOT_VERIFIED",
            Verdict::Skipped => "SKIPPED",
        }
    }
}

/// PASS or FAIL: the only results the strict matrix shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RowResult {
    Pass,
    Fail,
}

impl RowResult {
    /// The spelling in the matrix.
    pub fn as_str(self) -> &'static str {
        match self {
            RowResult::Pass => "PASS",
            RowResult::Fail => "FAIL",
        }
    }
}

/// An executed (check, environment) pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub check: String,
    pub environment: String,
    pub required: bool,
    pub required_exit_code: Option<i32>,
    pub exit_code: i32,
    pub result: RowResult,
    pub detail: CheckResult,
}

/// An expected pair with no executed result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missing {
    pub check: String,
    pub environment: String,
    /// Why it has no row, as a state (the reason says it in words). Reports of format 1
    /// lack it; their reader works it out from the reasons.
    #[serde(default)]
    pub kind: MissingKind,
    pub reason: String,
}

/// An environment with no result at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfraBlocked {
    pub environment: String,
    pub checks: Vec<String>,
}

/// Why an executed pair failed, in the words every format uses: a timeout, a refusal,
/// an ineffective gate and left-over processes say so (their exit code may be 0);
/// anything else "failed" with its exit code.
fn failure_reason(id: &str, env: &str, result: &CheckResult, exit: i32) -> String {
    if result.timed_out {
        format!("{id} timed out in {env} (exit {exit})")
    } else if let Some(why) = &result.refused {
        format!("{id} was refused in {env}: {why}")
    } else if let Some(why) = &result.ineffective_reason {
        format!("{id} in {env}: the gate was ineffective ({why}), exit {exit}")
    } else if !result.leaked.is_empty() {
        format!("{id} in {env} left processes running (exit {exit})")
    } else {
        format!("{id} failed in {env} (exit {exit})")
    }
}

/// A check that passed in some environments and failed in others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disagreement {
    pub check: String,
    pub passed_in: Vec<String>,
    pub failed_in: Vec<String>,
}

/// A result whose claims contradict its own facts or the trusted manifest (e.g. PASS
/// with an exit code the manifest does not accept). It counts as FAIL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contradiction {
    pub check: String,
    pub environment: String,
    pub reason: String,
}

/// A manual item awaiting review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manual {
    pub id: String,
    pub kind: String,
    pub text: String,
}

/// Where the manifest a report was judged against came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ManifestOrigin {
    /// Found in the checked-out tree (`verify-matrix.yml` from the current folder up).
    Tree,
    /// Given with `--manifest`.
    Given,
    /// The copy embedded in the results (written by the runs).
    Embedded,
}

impl ManifestOrigin {
    /// For people: "from the checked-out tree".
    pub fn describe(self) -> &'static str {
        match self {
            ManifestOrigin::Tree => "from the checked-out tree",
            ManifestOrigin::Given => "given with --manifest",
            ManifestOrigin::Embedded => "embedded in the results",
        }
    }
}

/// The manifest a report is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportManifest {
    pub path: String,
    pub digest: String,
    /// Where it came from (absent in reports written before this field existed).
    #[serde(default)]
    pub origin: Option<ManifestOrigin>,
    /// The digest of the manifest the results were produced from, when the report was
    /// judged against another (trusted) one.
    #[serde(default)]
    pub results_digest: Option<String>,
    /// The digest of the trusted manifest the results' manifest was compared with, if
    /// any (`--base-manifest`, or this one when they differ).
    #[serde(default)]
    pub compared_with: Option<String>,
}

/// How the manifest a report used relates to a trusted one, decided by the caller
/// (which knows where each came from).
#[derive(Debug, Clone, Default)]
pub struct ManifestTrust {
    pub origin: Option<ManifestOrigin>,
    /// The results' own manifest, when the report was judged against another.
    pub results_digest: Option<String>,
    /// The trusted manifest compared with, and what the results' manifest changed.
    pub compared_with: Option<String>,
    pub changes: Vec<ManifestChange>,
    /// Whether weakenings are allowed (`--allow-weakening`).
    pub allow_weakening: bool,
}

/// A run that did not cover every required pair of its manifest (`run --check`, a
/// subset of the environments, a fail-fast stop, a timeout, an interrupt): its output
/// says what ran and gives no verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartialRun {
    /// Required pairs of the manifest that ran (have a result other than not run).
    pub pairs_run: usize,
    /// Required pairs of the manifest.
    pub pairs_required: usize,
}

impl PartialRun {
    /// The line shown instead of the verdict.
    pub fn line(&self) -> String {
        format!(
            "Partial run: {} of {} required pairs; not a verdict",
            self.pairs_run, self.pairs_required
        )
    }
}

/// The merged report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub format_version: u32,
    pub manifest: ReportManifest,
    pub source: Source,
    pub environments: Vec<String>,
    pub environments_tested: Vec<String>,
    pub rows: Vec<Row>,
    pub missing: Vec<Missing>,
    pub infra_blocked: Vec<InfraBlocked>,
    pub disagreements: Vec<Disagreement>,
    /// Results that contradict their facts or the manifest (absent from reports written
    /// before this field existed).
    #[serde(default)]
    pub contradictions: Vec<Contradiction>,
    /// What the results' manifest changed against a trusted one (weakenings first).
    #[serde(default)]
    pub manifest_changes: Vec<ManifestChange>,
    /// Whether weakenings were allowed (`--allow-weakening`).
    #[serde(default)]
    pub weakening_allowed: bool,
    /// Each environment's workflow-run attempt its results came from, where recorded
    /// (a re-run's legs are attempt 2 and up).
    #[serde(default)]
    pub attempts: BTreeMap<String, u32>,
    /// The human `name:` of each check that has one (manifest text).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub check_names: BTreeMap<String, String>,
    pub manual: Vec<Manual>,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    /// The workflow run was cancelled before the report (`report --cancelled`): the
    /// verdict is NOT VERIFIED and the check run's conclusion `cancelled`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// A required pair errored before producing an exit code (it has no row), or the
    /// results could not be judged at all: a failure, not only a gap. Reports of format
    /// 1 lack it; their reader works it out from the reasons.
    #[serde(default)]
    pub failed_to_run: bool,
    /// The automated checks in manifest order, for renders that list checks. Not in the
    /// file format; a report read from JSON falls back to the order of its rows.
    #[serde(skip)]
    pub check_order: Vec<String>,
    /// Set for a run that did not cover its manifest: renders show no verdict line.
    /// Never in the file format (a merge judges every pair of the manifest).
    #[serde(skip)]
    pub partial: Option<PartialRun>,
}

impl Report {
    /// The report over every environment the manifest declares.
    pub fn build(manifest: &Manifest, partials: &[PartialResult]) -> Report {
        Report::build_for(manifest, partials, &plan::environment_names(manifest))
    }

    /// The report over `environments` only (e.g. the share one `run` executed).
    pub fn build_for(
        manifest: &Manifest,
        partials: &[PartialResult],
        environments: &[EnvName],
    ) -> Report {
        let mut by_pair: BTreeMap<(&str, &str), Vec<&CheckResult>> = BTreeMap::new();
        for partial in partials {
            for check in &partial.checks {
                by_pair
                    .entry((check.command_id.as_str(), partial.environment.as_str()))
                    .or_default()
                    .push(check);
            }
        }
        let has_results = |env: &EnvName| partials.iter().any(|p| p.environment == env.as_str());

        let mut report = Report {
            source: partials
                .first()
                .map(|p| p.source.clone())
                .unwrap_or_default(),
            environments: environments.iter().map(|e| e.to_string()).collect(),
            environments_tested: environments
                .iter()
                .filter(|e| has_results(e))
                .map(|e| e.to_string())
                .collect(),
            attempts: partials
                .iter()
                .filter_map(|p| Some((p.environment.clone(), p.source.run_attempt?)))
                .collect(),
            check_order: manifest
                .checks
                .iter()
                .filter(|c| !c.kind.is_manual())
                .map(|c| c.id.to_string())
                .collect(),
            check_names: manifest
                .checks
                .iter()
                .filter(|c| !c.kind.is_manual())
                .filter_map(|c| Some((c.id.to_string(), c.name.clone()?)))
                .collect(),
            ..Report::empty(&manifest.path.display().to_string(), &manifest.digest)
        };
        if manifest.skip {
            // Nothing was meant to run: no pair is missing, nothing is blocked.
            report.verdict = Verdict::Skipped;
            report.reasons =
                vec!["the manifest says `skip: true`: nothing was verified".to_owned()];
            return report;
        }
        let mut failures = Vec::new();
        let mut gaps = Vec::new();

        for check in &manifest.checks {
            if check.kind.is_manual() {
                report.manual.push(Manual {
                    id: check.id.to_string(),
                    kind: check.kind.key().to_owned(),
                    text: check.kind.describe(),
                });
                continue;
            }
            let (mut passed_in, mut failed_in) = (Vec::new(), Vec::new());
            for env in plan::environments_of(check, environments) {
                let (id, env_name) = (check.id.as_str(), env.as_str());
                let found = by_pair
                    .get(&(id, env_name))
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                let blocking = check.required;
                let Some(claimed) = found.first() else {
                    let reason = if has_results(env) {
                        format!("{NO_RESULT_IN}{env_name} results")
                    } else {
                        NO_RESULTS.to_owned()
                    };
                    if has_results(env) && blocking {
                        gaps.push(format!("{id} in {env_name}: {reason}"));
                    }
                    report.missing.push(Missing {
                        check: id.to_owned(),
                        environment: env_name.to_owned(),
                        kind: MissingKind::NoResult,
                        reason,
                    });
                    continue;
                };
                let conflicting = found
                    .iter()
                    .any(|r| r.status != claimed.status || r.exit_code != claimed.exit_code);
                // The facts decide, against the trusted manifest: never the claim alone.
                let (first, contradictions) = rederive(check, claimed);
                if !contradictions.is_empty() {
                    let reason = contradictions.join("; ");
                    if blocking {
                        let failure = format!("the result contradicts its facts: {reason}");
                        failures.push(if first.exit_code.is_none() {
                            report.failed_to_run = true;
                            format!("{}{failure}", failed_to_run_prefix(id, env_name))
                        } else {
                            format!("{id} in {env_name}: {failure}")
                        });
                    }
                    report.contradictions.push(Contradiction {
                        check: id.to_owned(),
                        environment: env_name.to_owned(),
                        reason,
                    });
                }
                match (first.status, first.exit_code) {
                    (Status::NotRun, _) if !conflicting => {
                        if blocking {
                            gaps.push(format!("{id} in {env_name}: {}", first.summary));
                        }
                        report.missing.push(Missing {
                            check: id.to_owned(),
                            environment: env_name.to_owned(),
                            kind: MissingKind::NotRun,
                            reason: first.summary.clone(),
                        });
                    }
                    // No exit code (it errored before it had one, or claims what it
                    // cannot show): no row, never a made-up code, and a failure.
                    (_, None) => {
                        let why = if conflicting {
                            "conflicting results reported"
                        } else {
                            first.summary.as_str()
                        };
                        if blocking {
                            report.failed_to_run = true;
                            if contradictions.is_empty() {
                                failures
                                    .push(format!("{}{why}", failed_to_run_prefix(id, env_name)));
                            }
                        }
                        failed_in.push(env_name.to_owned());
                        report.missing.push(Missing {
                            check: id.to_owned(),
                            environment: env_name.to_owned(),
                            kind: MissingKind::FailedToRun,
                            reason: format!("{FAILED_TO_RUN}{why}"),
                        });
                    }
                    (status, Some(exit)) => {
                        let pass = status == Status::Pass && !conflicting;
                        if pass {
                            passed_in.push(env_name.to_owned());
                        } else {
                            failed_in.push(env_name.to_owned());
                            if blocking && contradictions.is_empty() {
                                failures.push(if conflicting {
                                    format!("{id} in {env_name}: conflicting results reported")
                                } else {
                                    failure_reason(id, env_name, &first, exit)
                                });
                            }
                        }
                        report.rows.push(Row {
                            check: id.to_owned(),
                            environment: env_name.to_owned(),
                            required: check.required,
                            required_exit_code: check.expect.required_code(),
                            exit_code: exit,
                            result: if pass {
                                RowResult::Pass
                            } else {
                                RowResult::Fail
                            },
                            detail: first.as_ref().clone(),
                        });
                    }
                }
            }
            if !passed_in.is_empty() && !failed_in.is_empty() {
                report.disagreements.push(Disagreement {
                    check: check.id.to_string(),
                    passed_in,
                    failed_in,
                });
            }
        }
        for env in environments.iter().filter(|e| !has_results(e)) {
            let checks: Vec<String> = plan::runnable_checks(manifest, env)
                .map(|c| c.id.to_string())
                .collect();
            if plan::runnable_checks(manifest, env).any(|c| c.required) {
                gaps.push(format!("{env}: no results"));
            }
            report.infra_blocked.push(InfraBlocked {
                environment: env.to_string(),
                checks,
            });
        }
        report.verdict = if failures.is_empty() && gaps.is_empty() {
            Verdict::Verified
        } else {
            Verdict::NotVerified
        };
        report.reasons = failures;
        report.reasons.extend(gaps);
        report
    }

    /// A NOT VERIFIED report for a run whose results could not be judged at all (the
    /// manifest does not load, no result arrived), so that publishing it replaces any
    /// earlier verdict: no pair, no environment, the `reason`.
    pub fn unjudged(manifest_path: &str, reason: &str) -> Report {
        Report {
            verdict: Verdict::NotVerified,
            reasons: vec![reason.to_owned()],
            failed_to_run: true,
            ..Report::empty(manifest_path, "")
        }
    }

    /// A VERIFIED report about nothing: no environment, no pair, no reason.
    fn empty(manifest_path: &str, digest: &str) -> Report {
        Report {
            format_version: REPORT_FORMAT_VERSION,
            manifest: ReportManifest {
                path: manifest_path.to_owned(),
                digest: digest.to_owned(),
                origin: None,
                results_digest: None,
                compared_with: None,
            },
            source: Source::default(),
            environments: Vec::new(),
            environments_tested: Vec::new(),
            rows: Vec::new(),
            missing: Vec::new(),
            infra_blocked: Vec::new(),
            disagreements: Vec::new(),
            contradictions: Vec::new(),
            manifest_changes: Vec::new(),
            weakening_allowed: false,
            attempts: BTreeMap::new(),
            check_names: BTreeMap::new(),
            manual: Vec::new(),
            verdict: Verdict::Verified,
            reasons: Vec::new(),
            cancelled: false,
            failed_to_run: false,
            check_order: Vec::new(),
            partial: None,
        }
    }

    /// Marks the report partial when `partials` do not cover every required pair of
    /// `manifest` (every environment it declares) with a result that ran.
    pub fn mark_partial(&mut self, manifest: &Manifest, partials: &[PartialResult]) {
        if manifest.skip {
            return;
        }
        let ran: HashSet<(&str, &str)> = partials
            .iter()
            .flat_map(|p| {
                p.checks
                    .iter()
                    .filter(|c| c.status != Status::NotRun)
                    .map(move |c| (c.command_id.as_str(), p.environment.as_str()))
            })
            .collect();
        let (mut pairs_run, mut pairs_required) = (0, 0);
        let environments = plan::environment_names(manifest);
        for (check, env) in plan::expected_pairs(manifest, &environments) {
            pairs_required += 1;
            pairs_run += usize::from(ran.contains(&(check.id.as_str(), env.as_str())));
        }
        if pairs_run < pairs_required {
            self.partial = Some(PartialRun {
                pairs_run,
                pairs_required,
            });
        }
    }

    /// Marks a report made after the workflow run was cancelled: whatever results
    /// arrived, the run did not finish, so this is no verdict for its commit.
    pub fn mark_cancelled(&mut self) {
        self.cancelled = true;
        self.verdict = Verdict::NotVerified;
        self.reasons.insert(
            0,
            "cancelled: the workflow run was cancelled before it finished; re-run it for a verdict"
                .to_owned(),
        );
    }

    /// Records where the manifest came from and what the results' manifest changed
    /// against a trusted one. Weakenings that are in effect (the report was judged
    /// against the results' own manifest) make the verdict NOT VERIFIED unless allowed;
    /// judged against the trusted manifest itself, they are only listed.
    pub fn apply_trust(&mut self, trust: ManifestTrust) {
        self.manifest.origin = trust.origin;
        self.manifest.results_digest = trust.results_digest;
        self.manifest.compared_with = trust.compared_with;
        self.manifest_changes = trust.changes;
        self.weakening_allowed = trust.allow_weakening;
        if self.blocked_by_weakening() {
            for change in self.manifest_changes.iter().filter(|c| c.weakens) {
                self.reasons.push(format!(
                    "the manifest is weaker than the trusted one: {} (not allowed; see --allow-weakening)",
                    change.change
                ));
            }
            self.verdict = Verdict::NotVerified;
        }
    }

    /// Whether the verdict is NOT VERIFIED because the manifest the results were judged
    /// against weakens the trusted one, and that was not allowed.
    pub fn blocked_by_weakening(&self) -> bool {
        self.manifest.results_digest.is_none()
            && !self.weakening_allowed
            && self.manifest_changes.iter().any(|c| c.weakens)
    }

    /// Reads a report file (probed as `probe`): format 2, or format 1 upgraded.
    pub fn read(
        path: &std::path::Path,
        bytes: &[u8],
        probe: &Probe,
    ) -> Result<Report, ResultFileError> {
        let mut report: Report = probe.parse_versioned(path, bytes, &[1, REPORT_FORMAT_VERSION])?;
        if report.format_version == 1 {
            report.upgrade_from_v1();
        }
        Ok(report)
    }

    /// Why `missing` has no row.
    pub fn missing_kind(&self, missing: &Missing) -> MissingKind {
        missing.kind
    }

    /// Reads a report of format 1, which kept these states in prose: each missing
    /// pair's kind from its reason (and whether its environment reported at all), and
    /// whether a required pair failed to run from the reasons. The report is format 2
    /// afterwards.
    pub fn upgrade_from_v1(&mut self) {
        let reasons = std::mem::take(&mut self.reasons);
        let mut failed_to_run = false;
        for missing in &mut self.missing {
            let before_running = || {
                let prefix = failed_to_run_prefix(&missing.check, &missing.environment);
                reasons.iter().any(|r| r.starts_with(&prefix))
            };
            missing.kind = if missing.reason.starts_with(FAILED_TO_RUN) {
                MissingKind::FailedToRun
            } else if self
                .infra_blocked
                .iter()
                .any(|b| b.environment == missing.environment)
                || missing.reason == NO_RESULTS
                || missing.reason.starts_with(NO_RESULT_IN)
            {
                MissingKind::NoResult
            } else if before_running() {
                MissingKind::FailedToRun
            } else {
                MissingKind::NotRun
            };
            failed_to_run |= before_running();
        }
        self.reasons = reasons;
        self.failed_to_run |= failed_to_run;
        self.format_version = REPORT_FORMAT_VERSION;
    }

    /// Whether the report may say `All Required Environments: VERIFIED`: VERIFIED, over
    /// every required pair of its manifest (not a partial run).
    pub fn claims_verified(&self) -> bool {
        self.verdict == Verdict::Verified && self.partial.is_none()
    }

    /// Whether a required pair failed (as opposed to only missing).
    pub fn has_failures(&self) -> bool {
        self.failed_to_run
            || self.blocked_by_weakening()
            || self
                .rows
                .iter()
                .any(|r| r.required && r.result == RowResult::Fail)
    }

    /// The checks that have a row or a missing entry, in manifest order when known.
    pub fn checks_in_order(&self) -> Vec<&str> {
        let present: HashSet<&str> = self
            .rows
            .iter()
            .map(|r| r.check.as_str())
            .chain(self.missing.iter().map(|m| m.check.as_str()))
            .collect();
        let mut seen = HashSet::new();
        self.check_order
            .iter()
            .map(String::as_str)
            .chain(self.rows.iter().map(|r| r.check.as_str()))
            .chain(self.missing.iter().map(|m| m.check.as_str()))
            .filter(|name| present.contains(name) && seen.insert(*name))
            .collect()
    }

    /// Checks the names a report read from a file carries: every check and environment
    /// name must be one a manifest can declare (`[A-Za-z0-9][A-Za-z0-9._-]*`), so that a
    /// tampered report cannot break the matrix's lines or inject markup. Returns the
    /// first bad name.
    pub fn invalid_name(&self) -> Option<&str> {
        let valid = crate::manifest::is_valid_name;
        let names = self
            .environments
            .iter()
            .chain(&self.environments_tested)
            .map(String::as_str)
            .chain(
                self.rows
                    .iter()
                    .flat_map(|r| [r.check.as_str(), r.environment.as_str()]),
            )
            .chain(
                self.missing
                    .iter()
                    .flat_map(|m| [m.check.as_str(), m.environment.as_str()]),
            )
            .chain(self.infra_blocked.iter().flat_map(|b| {
                std::iter::once(b.environment.as_str()).chain(b.checks.iter().map(String::as_str))
            }))
            .chain(self.disagreements.iter().flat_map(|d| {
                std::iter::once(d.check.as_str())
                    .chain(d.passed_in.iter().chain(&d.failed_in).map(String::as_str))
            }))
            .chain(
                self.manual
                    .iter()
                    .flat_map(|m| [m.id.as_str(), m.kind.as_str()]),
            );
        names.into_iter().find(|n| !valid(n))
    }

    /// An index of the rows and missing entries by (check, environment), for renders
    /// that look pairs up cell by cell.
    pub fn index(&self) -> PairIndex<'_> {
        PairIndex {
            rows: self
                .rows
                .iter()
                .map(|r| ((r.check.as_str(), r.environment.as_str()), r))
                .collect(),
            missing: self
                .missing
                .iter()
                .map(|m| ((m.check.as_str(), m.environment.as_str()), m))
                .collect(),
        }
    }

    /// The environments whose results came from a re-run (attempt 2 and up), with the
    /// attempt, in environment order.
    pub fn reruns(&self) -> Vec<(&str, u32)> {
        self.environments
            .iter()
            .filter_map(|env| {
                let attempt = *self.attempts.get(env)?;
                (attempt > 1).then_some((env.as_str(), attempt))
            })
            .collect()
    }

    /// The environments with results, for the `Environments Tested:` line ("none" when
    /// there are none).
    pub fn tested_list(&self) -> String {
        if self.environments_tested.is_empty() {
            "none".to_owned()
        } else {
            self.environments_tested.join(", ")
        }
    }

    /// The missing pairs of environments that did report (those of environments with no
    /// results at all are in `infra_blocked`).
    pub fn missing_beside_results(&self) -> Vec<&Missing> {
        self.missing
            .iter()
            .filter(|m| !self.is_infra_blocked(&m.environment))
            .collect()
    }

    /// Whether `env` has no results at all.
    pub fn is_infra_blocked(&self, env: &str) -> bool {
        self.infra_blocked.iter().any(|b| b.environment == env)
    }

    /// The exit code the verdict maps to (DESIGN.md §3).
    pub fn exit_code(&self) -> i32 {
        match self.verdict {
            Verdict::Verified | Verdict::Skipped => exit_code::OK,
            Verdict::NotVerified if self.has_failures() => exit_code::FAILED,
            Verdict::NotVerified => exit_code::INCOMPLETE,
        }
    }
}

/// The rows and missing entries of a report by (check, environment).
pub struct PairIndex<'a> {
    rows: HashMap<(&'a str, &'a str), &'a Row>,
    missing: HashMap<(&'a str, &'a str), &'a Missing>,
}

impl<'a> PairIndex<'a> {
    /// The executed pair's row.
    pub fn row(&self, check: &str, environment: &str) -> Option<&'a Row> {
        self.rows.get(&(check, environment)).copied()
    }

    /// The expected pair's missing entry.
    pub fn missing(&self, check: &str, environment: &str) -> Option<&'a Missing> {
        self.missing.get(&(check, environment)).copied()
    }
}

/// Re-derives a result from its facts and the trusted manifest's `check`: the status
/// from the exit code, the manifest's expectation, effectiveness, timeout, leaks and
/// refusal; the fields the manifest owns from the manifest. Returns the result as the
/// facts have it, and each contradiction between the claims and the facts.
fn rederive<'a>(check: &Check, claimed: &'a CheckResult) -> (Cow<'a, CheckResult>, Vec<String>) {
    let mut contradictions = Vec::new();
    let required_code = check.expect.required_code();
    if claimed.required_exit_code != required_code {
        contradictions.push(format!(
            "it records the required exit code as {}, the manifest says {}",
            describe_code(claimed.required_exit_code),
            describe_code(required_code)
        ));
    }
    if check.must_be_effective && !claimed.must_be_effective {
        contradictions.push(
            "it records the gate as not having to be effective, the manifest says it must be"
                .to_owned(),
        );
    }
    // A pass needs an exit code a process can have (POSIX statuses, 128+N for signal N;
    // Windows' 32-bit codes are recorded as they are, and never pass).
    if let Some(code) = claimed.exit_code
        && !EXIT_CODES.contains(&code)
        && claimed.status == Status::Pass
    {
        contradictions.push(format!(
            "exit code {code} is outside {}..={}",
            EXIT_CODES.start(),
            EXIT_CODES.end()
        ));
    }
    if claimed.status == Status::Pass {
        let mut why_not = Vec::new();
        match claimed.exit_code {
            None => why_not.push("it has no exit code".to_owned()),
            Some(code) if !check.expect.accepts(code) => why_not.push(format!(
                "exit code {code} does not pass ({})",
                match required_code {
                    Some(want) => format!("required {want}"),
                    None => "a failure was expected".to_owned(),
                }
            )),
            Some(_) => {}
        }
        if check.must_be_effective && claimed.gate_effective != Some(true) {
            why_not.push("the gate was not shown effective".to_owned());
        }
        if claimed.timed_out {
            why_not.push("it timed out".to_owned());
        }
        if !claimed.leaked.is_empty() {
            why_not.push("it left processes running".to_owned());
        }
        if claimed.refused.is_some() {
            why_not.push("it was refused".to_owned());
        }
        if !why_not.is_empty() {
            contradictions.push(format!("it claims PASS, but {}", why_not.join(", ")));
        }
    }
    let owned_by_manifest = (check.required, required_code, check.must_be_effective);
    if contradictions.is_empty()
        && (
            claimed.required,
            claimed.required_exit_code,
            claimed.must_be_effective,
        ) == owned_by_manifest
    {
        return (Cow::Borrowed(claimed), contradictions);
    }
    let mut facts = claimed.clone();
    facts.required = check.required;
    facts.required_exit_code = required_code;
    facts.must_be_effective = check.must_be_effective;
    if !contradictions.is_empty() {
        if facts.status == Status::Pass {
            // No made-up exit code: without one there is no row.
            facts.status = if facts.exit_code.is_some() {
                Status::Fail
            } else {
                Status::Error
            };
        }
        facts.summary = one_line_summary(&format!(
            "contradicts its facts: {}",
            contradictions.join("; ")
        ));
    }
    (Cow::Owned(facts), contradictions)
}

fn describe_code(code: Option<i32>) -> String {
    code.map_or_else(|| "none (expect: failure)".to_owned(), |c| c.to_string())
}

/// The reason of a missing pair whose environment has no results at all.
const NO_RESULTS: &str = "no results";

/// The start of the reason of a missing pair whose environment has other results.
const NO_RESULT_IN: &str = "no result for this check in the ";

/// The start of the reason of a missing pair that errored before it had an exit code.
const FAILED_TO_RUN: &str = "failed to run: ";

/// The format version of reports: 2 keeps each missing pair's kind and whether a
/// required pair failed to run as fields (format 1 said them only in reasons; it is
/// still read). Partial results keep their own version
/// ([`FORMAT_VERSION`](super::schema::FORMAT_VERSION)).
pub const REPORT_FORMAT_VERSION: u32 = 2;

/// Why an expected pair has no row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingKind {
    /// No result was reported for it.
    #[default]
    NoResult,
    /// Reported as not run (fail-fast, run timeout, interruption).
    NotRun,
    /// It errored before it had an exit code (refused, could not start).
    FailedToRun,
}

/// The start of the reason given for a required pair that errored before it had an
/// exit code (how format 1 said it; see [`Report::upgrade_from_v1`]).
fn failed_to_run_prefix(check: &str, environment: &str) -> String {
    format!("{check} failed to run in {environment}: ")
}
