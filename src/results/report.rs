//! The report (docs/formats.md §3): expected pairs from the manifest, results from partial
//! result files, coverage and the verdict. One code path serves a single environment's
//! run and a merge of many.

use std::collections::{BTreeMap, HashMap, HashSet};

use compact_str::CompactString;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::schema::{CheckResult, Source};
use crate::exit_code;
use crate::manifest::compare::ManifestChange;

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
    pub check: CompactString,
    pub environment: CompactString,
    pub required: bool,
    pub required_exit_code: Option<i32>,
    pub exit_code: i32,
    pub result: RowResult,
    /// Boxed: a report of a large matrix moves its rows around, and the result is
    /// most of a row's size.
    pub detail: Box<CheckResult>,
}

/// One expected pair of a report: executed, or not.
#[derive(Debug, Clone, Copy)]
pub enum Pair<'a> {
    Row(&'a Row),
    Missing(&'a Missing),
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
    /// Whether the check is required: an optional check's missing pair never blocks,
    /// and reads as optional everywhere. Reports written before it was recorded read
    /// as required.
    #[serde(default = "required_when_unsaid")]
    pub required: bool,
}

fn required_when_unsaid() -> bool {
    true
}

/// Where one environment's results came from: the facts its result records, what the
/// manifest declares it is, and, when they do not match, why its results were not
/// taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub environment: String,
    /// What the manifest declares (`runs on windows-latest (windows x86_64)`); absent
    /// for a variant, which any machine may be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
    /// The machine's facts, as its result recorded them (nothing known of a format-1
    /// result's).
    pub runner: super::schema::Runner,
    /// Why the results do not stand for the environment (they were not taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<String>,
    /// The job of the workflow run that GitHub says ran the leg (the cross-check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// The variables the manifest sets for the environment (its `env:`), which make a
    /// variant what it is: names and values, a secret's value masked.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variables: BTreeMap<String, String>,
}

/// An environment with no result at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfraBlocked {
    pub environment: String,
    pub checks: Vec<String>,
    /// The page of the job that was this environment's leg, when the run's jobs were
    /// read: its log says why it left no result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_url: Option<String>,
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
            "Partial run: {} of {} required {}; not a verdict",
            self.pairs_run,
            self.pairs_required,
            if self.pairs_required == 1 {
                "pair"
            } else {
                "pairs"
            }
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
    #[serde(serialize_with = "super::stream::serialize_rows")]
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
    /// The comparison with the baseline (`--baseline`), when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<super::baseline::Baseline>,
    /// The automated checks in manifest order, for renders that list checks. Not in the
    /// file format; a report read from JSON falls back to the order of its rows.
    #[serde(skip)]
    pub check_order: Vec<String>,
    /// Set for a run that did not cover its manifest: renders show no verdict line.
    /// Never in the file format (a merge judges every pair of the manifest).
    #[serde(skip)]
    pub partial: Option<PartialRun>,
    /// Notes about reading the results that only came out as the report was made (a
    /// shard's log paths, read with its checks), for the command to show as it shows
    /// the others. Never in the file format.
    #[serde(skip)]
    pub read_notes: Vec<String>,
    /// Where each environment's results came from (results of format 2 and up, and
    /// every environment whose results were not taken).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<Place>,
    /// When the last of its legs finished (RFC 3339, from the results): when the run
    /// happened, which a history records instead of the time of an import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

impl Report {
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
    pub(super) fn empty(manifest_path: &str, digest: &str) -> Report {
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
            finished_at: None,
            attempts: BTreeMap::new(),
            check_names: BTreeMap::new(),
            manual: Vec::new(),
            verdict: Verdict::Verified,
            reasons: Vec::new(),
            cancelled: false,
            failed_to_run: false,
            baseline: None,
            check_order: Vec::new(),
            partial: None,
            read_notes: Vec::new(),
            places: Vec::new(),
        }
    }

    /// Adds the pairs of `files` (a report of runner reports, `report --files`) to this
    /// report of the manifest's legs: one matrix, one verdict, VERIFIED only when both
    /// are. Their checks must differ: a check of the manifest is never answered by a
    /// file (nor a file's check by the manifest's legs).
    pub fn add_files(&mut self, files: Report) -> Result<(), String> {
        let mine: HashSet<&str> = self
            .check_order
            .iter()
            .map(String::as_str)
            .chain(self.rows.iter().map(|r| r.check.as_str()))
            .chain(self.missing.iter().map(|m| m.check.as_str()))
            .collect();
        if let Some(check) = files
            .check_order
            .iter()
            .map(String::as_str)
            .chain(files.rows.iter().map(|r| r.check.as_str()))
            .chain(files.missing.iter().map(|m| m.check.as_str()))
            .find(|c| mine.contains(c))
        {
            return Err(format!(
                "the files' check `{check}` is also a check of the manifest `{}`: name the files' checks apart with `{{check}}` in the glob (`reports/{{check}}/{{environment}}/*.xml`)",
                self.manifest.path
            ));
        }
        // A manifest that skipped its checks verified nothing: files that passed do not
        // make it VERIFIED (they may make it NOT VERIFIED).
        self.verdict = match (self.verdict, files.verdict) {
            (Verdict::NotVerified, _) | (_, Verdict::NotVerified) => Verdict::NotVerified,
            (Verdict::Skipped, _) | (_, Verdict::Skipped) => Verdict::Skipped,
            (Verdict::Verified, Verdict::Verified) => Verdict::Verified,
        };
        for env in files.environments {
            if !self.environments.contains(&env) {
                self.environments.push(env);
            }
        }
        for env in files.environments_tested {
            if !self.environments_tested.contains(&env) {
                self.environments_tested.push(env);
            }
        }
        self.check_order.extend(files.check_order);
        self.rows.extend(files.rows);
        self.missing.extend(files.missing);
        for blocked in files.infra_blocked {
            match self
                .infra_blocked
                .iter_mut()
                .find(|b| b.environment == blocked.environment)
            {
                Some(mine) => mine.checks.extend(blocked.checks),
                None => self.infra_blocked.push(blocked),
            }
        }
        self.disagreements.extend(files.disagreements);
        self.contradictions.extend(files.contradictions);
        self.check_names.extend(files.check_names);
        for reason in files.reasons {
            if !self.reasons.contains(&reason) {
                self.reasons.push(reason);
            }
        }
        self.cancelled |= files.cancelled;
        self.failed_to_run |= files.failed_to_run;
        // A file tells nothing of the machine that wrote it: an environment the legs
        // ran keeps their facts.
        for place in files.places {
            if !self
                .places
                .iter()
                .any(|p| p.environment == place.environment)
            {
                self.places.push(place);
            }
        }
        // Each list in manifest order, then environment order, as the pairs are read.
        let order = |names: &[String]| -> HashMap<String, usize> {
            names.iter().cloned().zip(0..).collect()
        };
        let (checks, envs) = (order(&self.check_order), order(&self.environments));
        let place = |check: &str, env: &str| {
            (
                checks.get(check).copied().unwrap_or(usize::MAX),
                envs.get(env).copied().unwrap_or(usize::MAX),
            )
        };
        self.rows
            .sort_by_key(|r| place(r.check.as_str(), r.environment.as_str()));
        self.missing
            .sort_by_key(|m| place(&m.check, &m.environment));
        Ok(())
    }

    /// Whether the verdict is NOT VERIFIED because the manifest the results were judged
    /// against weakens the trusted one, and that was not allowed.
    pub fn blocked_by_weakening(&self) -> bool {
        self.manifest.results_digest.is_none()
            && !self.weakening_allowed
            && self.manifest_changes.iter().any(|c| c.weakens)
    }

    /// Why `missing` has no row.
    pub fn missing_kind(&self, missing: &Missing) -> MissingKind {
        missing.kind
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
                .baseline
                .as_ref()
                .is_some_and(|b| !b.test_drops.is_empty())
            || self
                .rows
                .iter()
                .any(|r| r.required && r.result == RowResult::Fail)
    }

    /// Every expected pair, executed or not, in manifest order, then environment order:
    /// the rows and the missing entries interleaved where they belong (each list is in
    /// that order already).
    pub fn pairs_in_order(&self) -> impl Iterator<Item = Pair<'_>> {
        let checks: HashMap<&str, usize> = self
            .checks_in_order()
            .into_iter()
            .enumerate()
            .map(|(i, c)| (c, i))
            .collect();
        let envs: HashMap<&str, usize> = self
            .environments
            .iter()
            .enumerate()
            .map(|(i, e)| (e.as_str(), i))
            .collect();
        let place = move |check: &str, env: &str| {
            (
                checks.get(check).copied().unwrap_or(usize::MAX),
                envs.get(env).copied().unwrap_or(usize::MAX),
            )
        };
        let mut rows = self.rows.iter().peekable();
        let mut missing = self.missing.iter().peekable();
        std::iter::from_fn(move || match (rows.peek(), missing.peek()) {
            (Some(r), Some(m)) => {
                if place(&r.check, &r.environment) <= place(&m.check, &m.environment) {
                    rows.next().map(Pair::Row)
                } else {
                    missing.next().map(Pair::Missing)
                }
            }
            (Some(_), None) => rows.next().map(Pair::Row),
            (None, _) => missing.next().map(Pair::Missing),
        })
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

    /// Why the report contradicts itself, if it does: a row marked `PASS` whose own
    /// detail did not pass or whose exit code the row's required code does not accept,
    /// or a VERIFIED verdict beside a required row that failed, a contradiction, an
    /// environment with no results, a partial or cancelled run. A report comes from a
    /// file a pull request may have edited: one that cannot be true is not rendered.
    pub fn self_contradiction(&self) -> Option<String> {
        for row in &self.rows {
            let (check, env) = (&row.check, &row.environment);
            if row.result == RowResult::Pass {
                if row.detail.status != super::Status::Pass {
                    return Some(format!(
                        "{check} in {env} is PASS, and its detail says {}",
                        row.detail.status.as_str()
                    ));
                }
                if row.detail.exit_code != Some(row.exit_code) {
                    return Some(format!(
                        "{check} in {env} has exit code {} in its row and {:?} in its detail",
                        row.exit_code, row.detail.exit_code
                    ));
                }
                let accepted = match row.required_exit_code {
                    Some(code) => row.exit_code == code,
                    None => row.exit_code != 0,
                };
                if !accepted {
                    return Some(format!(
                        "{check} in {env} is PASS with exit code {}, which its required code does not accept",
                        row.exit_code
                    ));
                }
            }
        }
        if self.verdict != Verdict::Verified {
            return None;
        }
        let failed = self
            .rows
            .iter()
            .find(|r| r.required && r.result != RowResult::Pass)
            .map(|r| format!("{} in {} failed", r.check, r.environment));
        failed
            .or_else(|| {
                self.contradictions
                    .first()
                    .map(|c| format!("{} in {} contradicts its facts", c.check, c.environment))
            })
            .or_else(|| {
                self.infra_blocked
                    .first()
                    .map(|b| format!("{} has no results", b.environment))
            })
            .or_else(|| {
                self.partial
                    .as_ref()
                    .map(|_| "it is a partial run".to_owned())
            })
            .or_else(|| self.cancelled.then(|| "its run was cancelled".to_owned()))
            .or_else(|| {
                self.failed_to_run
                    .then(|| "a required pair failed to run".to_owned())
            })
            .map(|why| format!("it says VERIFIED, but {why}"))
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
        PairIndex::of(&self.rows, &self.missing)
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
            // `fail-on: new`, and every failure was there on the base too.
            Verdict::NotVerified if self.failures_accepted() => exit_code::OK,
            Verdict::NotVerified if self.has_failures() => exit_code::FAILED,
            Verdict::NotVerified => exit_code::INCOMPLETE,
        }
    }
}

/// The rows and missing entries of a report by (check, environment).
///
/// A matrix is mostly full, so each check and environment is numbered and the pairs
/// are a grid of positions (two `u32` a pair: 2 MB for GitHub's largest matrix, where a
/// map of pairs was 21 MB); a report whose pairs are a small part of its grid (many
/// checks, each in a few environments of many) is kept as a map of positions instead.
pub struct PairIndex<'a> {
    rows: &'a [Row],
    missing: &'a [Missing],
    // Hashed with Fx: a large matrix looks up every one of its pairs.
    checks: FxHashMap<&'a str, u32>,
    environments: FxHashMap<&'a str, u32>,
    cells: Cells,
}

/// Where each pair's row and missing entry are (`index + 1`; 0: none).
enum Cells {
    /// One cell per check and environment, check by check.
    Grid { rows: Vec<u32>, missing: Vec<u32> },
    /// Only the pairs there are.
    Map {
        rows: FxHashMap<(u32, u32), u32>,
        missing: FxHashMap<(u32, u32), u32>,
    },
}

impl<'a> PairIndex<'a> {
    fn of(rows: &'a [Row], missing: &'a [Missing]) -> PairIndex<'a> {
        let mut checks: FxHashMap<&'a str, u32> = FxHashMap::default();
        let mut environments: FxHashMap<&'a str, u32> = FxHashMap::default();
        let mut number = |check: &'a str, env: &'a str| {
            let next = u32::try_from(checks.len()).unwrap_or(u32::MAX);
            let c = *checks.entry(check).or_insert(next);
            let next = u32::try_from(environments.len()).unwrap_or(u32::MAX);
            (c, *environments.entry(env).or_insert(next))
        };
        let row_cells: Vec<(u32, u32)> = rows
            .iter()
            .map(|r| number(r.check.as_str(), r.environment.as_str()))
            .collect();
        let missing_cells: Vec<(u32, u32)> = missing
            .iter()
            .map(|m| number(m.check.as_str(), m.environment.as_str()))
            .collect();
        let width = environments.len();
        let grid = checks.len().saturating_mul(width);
        let pairs = rows.len() + missing.len();
        // A later entry of one pair stands, as a map collected from them would keep it.
        let at = |i: usize| u32::try_from(i + 1).unwrap_or(u32::MAX);
        let cells = if grid <= pairs.saturating_mul(4).max(4096) {
            let fill = |cells: &[(u32, u32)]| {
                let mut grid = vec![0u32; grid];
                for (i, &(c, e)) in cells.iter().enumerate() {
                    grid[c as usize * width + e as usize] = at(i);
                }
                grid
            };
            Cells::Grid {
                rows: fill(&row_cells),
                missing: fill(&missing_cells),
            }
        } else {
            let map = |cells: &[(u32, u32)]| {
                cells
                    .iter()
                    .enumerate()
                    .map(|(i, &cell)| (cell, at(i)))
                    .collect()
            };
            Cells::Map {
                rows: map(&row_cells),
                missing: map(&missing_cells),
            }
        };
        PairIndex {
            rows,
            missing,
            checks,
            environments,
            cells,
        }
    }

    /// Where the pair's row (`rows`) or missing entry is, plus one; 0 when it has none.
    fn cell(&self, check: &str, environment: &str, rows: bool) -> usize {
        let (Some(&c), Some(&e)) = (self.checks.get(check), self.environments.get(environment))
        else {
            return 0;
        };
        let at = match &self.cells {
            Cells::Grid { rows: r, missing } => {
                let grid = if rows { r } else { missing };
                grid[c as usize * self.environments.len() + e as usize]
            }
            Cells::Map { rows: r, missing } => {
                let map = if rows { r } else { missing };
                map.get(&(c, e)).copied().unwrap_or(0)
            }
        };
        at as usize
    }

    /// The executed pair's row.
    pub fn row(&self, check: &str, environment: &str) -> Option<&'a Row> {
        let at = self.cell(check, environment, true);
        at.checked_sub(1).and_then(|i| self.rows.get(i))
    }

    /// The expected pair's missing entry.
    pub fn missing(&self, check: &str, environment: &str) -> Option<&'a Missing> {
        let at = self.cell(check, environment, false);
        at.checked_sub(1).and_then(|i| self.missing.get(i))
    }
}

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

impl MissingKind {
    /// The word the tables and texts show for it: `ERROR`, `NOT RUN` or `MISSING`.
    pub fn word(self) -> &'static str {
        match self {
            MissingKind::FailedToRun => "ERROR",
            MissingKind::NotRun => "NOT RUN",
            MissingKind::NoResult => "MISSING",
        }
    }
}
