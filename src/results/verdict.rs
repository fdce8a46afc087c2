//! Judging results against the manifest: the expected pairs (from the plan), each
//! result's facts re-derived against the trusted manifest, coverage, and the verdict
//! with its reasons. One code path serves a single environment's run and a merge of
//! many.

use std::collections::HashSet;

use compact_str::CompactString;
use rustc_hash::FxHashMap;

use super::intake::{self, Checked};
use super::jobs::Jobs;
use super::report::{
    Contradiction, Disagreement, InfraBlocked, ManifestTrust, Manual, Missing, MissingKind,
    PartialRun, Report, Row, RowResult, Verdict,
};
use super::schema::{CheckResult, PartialResult, Status};
use crate::manifest::{Check, EnvName, Manifest};
use crate::plan;

impl Report {
    /// The report over every environment the manifest declares.
    pub fn build(manifest: &Manifest, partials: &[PartialResult]) -> Report {
        Report::build_for(manifest, partials, &plan::environment_names(manifest))
    }

    /// The report over `environments` only (e.g. the share one `run` executed). A
    /// shard's result is judged as it is (its run's report is of its own share).
    pub fn build_for(
        manifest: &Manifest,
        partials: &[PartialResult],
        environments: &[EnvName],
    ) -> Report {
        let checked = intake::admit(manifest, partials.to_vec(), &Jobs::NotChecked, None);
        Report::assemble(manifest, checked, environments)
    }

    /// [`Report::build`] taking the results: each row's detail is moved out of them
    /// rather than copied, and each partial result is let go once its rows have theirs,
    /// so a merge of GitHub's largest matrices holds each result once.
    pub fn build_from(manifest: &Manifest, partials: Vec<PartialResult>) -> Report {
        Report::build_checked(manifest, partials, &Jobs::NotChecked)
    }

    /// [`Report::build_from`], each leg also checked against the run's `jobs` as GitHub
    /// lists them: a leg that no job fits is not taken.
    pub fn build_checked(manifest: &Manifest, partials: Vec<PartialResult>, jobs: &Jobs) -> Report {
        Report::build_judged(manifest, partials, jobs, None)
    }

    /// [`Report::build_checked`] of results produced from `ran_by` (a pull request's
    /// manifest) and judged by `manifest` (the trusted one): a check `ran_by` runs
    /// otherwise is no evidence for `manifest`'s. A held result whose file cannot be
    /// read again (see [`Report::build_merged`]) makes it NOT VERIFIED, with the reason.
    pub fn build_judged(
        manifest: &Manifest,
        partials: Vec<PartialResult>,
        jobs: &Jobs,
        ran_by: Option<&Manifest>,
    ) -> Report {
        let (mut report, errors) = Report::judged(manifest, partials, jobs, ran_by);
        for error in errors {
            report.verdict = Verdict::NotVerified;
            report.failed_to_run = true;
            report.reasons.push(error.to_string());
        }
        report
    }

    /// [`Report::build_judged`] of what [`merge::collect_in`](super::merge::collect_in)
    /// read: a shard it held as its facts whose file does not read as it did the first
    /// time (malformed, or changed since) is the error that file would have been had it
    /// been read whole at first, never a shard left out.
    pub fn build_merged(
        manifest: &Manifest,
        partials: Vec<PartialResult>,
        jobs: &Jobs,
        ran_by: Option<&Manifest>,
    ) -> Result<Report, super::merge::MergeError> {
        let (report, errors) = Report::judged(manifest, partials, jobs, ran_by);
        match errors.into_iter().next() {
            Some(error) => Err(error),
            None => Ok(report),
        }
    }

    fn judged(
        manifest: &Manifest,
        partials: Vec<PartialResult>,
        jobs: &Jobs,
        ran_by: Option<&Manifest>,
    ) -> (Report, Vec<super::merge::MergeError>) {
        let environments = plan::environment_names(manifest);
        // Every result passes the intake first (where it ran, its claims re-derived from
        // its facts); only then are each sharded environment's shards made one result.
        let mut intake = intake::Intake::new(manifest, ran_by);
        let checked = intake.admit(partials, jobs);
        let checked = super::shards::combine(manifest, checked, &mut intake);
        let mut report = Report::assemble(manifest, checked, &environments);
        report.read_notes = intake.notes;
        for blocked in &mut report.infra_blocked {
            blocked.job_url = super::jobs::leg_job_url(jobs, &blocked.environment);
        }
        (report, intake.errors)
    }

    /// The report of `checked` results over `environments`, each row's detail moved
    /// out of the result it came from.
    fn assemble(manifest: &Manifest, checked: Vec<Checked>, environments: &[EnvName]) -> Report {
        let (report, judged) = Report::judge(manifest, &checked, environments);
        let mut report = report;
        let mut details: Vec<Option<Box<CheckResult>>> = vec![None; judged.len()];
        // The row of each result as reported, by partial and check.
        let mut rows: Vec<Vec<Option<usize>>> = checked
            .iter()
            .map(|p| vec![None; p.result().checks.len()])
            .collect();
        let mut heads = Vec::with_capacity(judged.len());
        for (row, j) in judged.into_iter().enumerate() {
            rows[j.at.0][j.at.1] = Some(row);
            heads.push(j.head);
        }
        for (partial, rows) in checked.into_iter().zip(rows) {
            for (check, row) in partial.into_result().checks.into_iter().zip(rows) {
                if let Some(row) = row {
                    details[row] = Some(check);
                }
            }
        }
        // Every row has its detail now: each (partial, check) is the result of one pair,
        // and each pair has at most one row.
        let rows = heads.len();
        report.rows = heads
            .into_iter()
            .zip(details)
            .filter_map(|(head, detail)| Some(head.with(detail?)))
            .collect();
        debug_assert_eq!(report.rows.len(), rows, "a row lost its detail");
        report
    }

    /// The report without its rows, and the rows as judged: each with its detail, or
    /// where the result it keeps as reported is among `checked` (the caller fills it).
    fn judge(
        manifest: &Manifest,
        checked: &[Checked],
        environments: &[EnvName],
    ) -> (Report, Vec<Judged>) {
        let results = Results::new(manifest, environments, checked);
        let mut judging = Judging::new(manifest, checked, environments);
        judging.rejected = checked
            .iter()
            .filter_map(|c| Some((c.place().environment.clone(), c.place().mismatch.clone()?)))
            .collect();
        // In the manifest's order of environments, whatever order the files came in
        // (results of environments it does not declare are not its places).
        let mut places: Vec<&super::report::Place> = checked
            .iter()
            .map(Checked::place)
            .filter(|p| manifest.environment(&p.environment).is_some())
            .collect();
        let position = |env: &str| {
            manifest
                .environments
                .iter()
                .position(|e| e.name.as_str() == env)
                .unwrap_or(usize::MAX)
        };
        places.sort_by_key(|p| position(&p.environment));
        // One place per environment and machine (a leg's results may be in several files).
        let mut distinct: Vec<super::report::Place> = Vec::with_capacity(places.len());
        for place in places {
            if !distinct.contains(place) {
                distinct.push(place.clone());
            }
        }
        judging.report.places = distinct;
        if manifest.skip {
            // Nothing was meant to run: no pair is missing, nothing is blocked.
            let mut report = judging.report;
            report.verdict = Verdict::Skipped;
            report.reasons =
                vec!["the manifest says `skip: true`: nothing was verified".to_owned()];
            return (report, Vec::new());
        }
        for check in &manifest.checks {
            judging.check(check, environments, &results);
        }
        for env in environments {
            if !judging.tested(env) {
                judging.blocked(manifest, env);
            }
        }
        let judged = std::mem::take(&mut judging.rows);
        (judging.finish(), judged)
    }

    /// Marks the report partial when `partials` do not cover every required pair of
    /// `manifest` (every environment it declares) with a result that ran.
    pub fn mark_partial(&mut self, manifest: &Manifest, partials: &[PartialResult]) {
        if manifest.skip {
            return;
        }
        let ran: HashSet<(&str, &str)> = partials
            .iter()
            .filter(|p| p.shard.is_none())
            .flat_map(|p| {
                p.checks
                    .iter()
                    .filter(|c| c.status != Status::NotRun)
                    .map(move |c| (c.command_id.as_str(), p.environment.as_str()))
            })
            .collect();
        // A split check's pair ran only once every one of its shards did.
        let mut slices: FxHashMap<(&str, &str), HashSet<u32>> = FxHashMap::default();
        for p in partials {
            let Some(leg) = p.shard else { continue };
            for c in p.checks.iter().filter(|c| c.status != Status::NotRun) {
                slices
                    .entry((c.command_id.as_str(), p.environment.as_str()))
                    .or_default()
                    .insert(leg.index);
            }
        }
        let (mut pairs_run, mut pairs_required) = (0, 0);
        let environments = plan::environment_names(manifest);
        for (check, env) in plan::expected_pairs(manifest, &environments) {
            pairs_required += 1;
            let key = (check.id.as_str(), env.as_str());
            let whole = ran.contains(&key);
            let sharded = manifest.environment(env.as_str()).is_some_and(|e| {
                let n = manifest.shards_of(check, e);
                slices
                    .get(&key)
                    .is_some_and(|got| (1..=n).all(|k| got.contains(&k)))
            });
            pairs_run += usize::from(whole || sharded);
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
}

/// Every result reported for each (check, environment) pair of the matrix: a dense
/// table of each pair's first result, and every result of the few pairs reported more
/// than once. Results for pairs outside the matrix are not kept: nothing asks for them.
struct Results<'a> {
    checks: FxHashMap<&'a str, usize>,
    environments: FxHashMap<&'a str, usize>,
    first: Vec<Option<Found<'a>>>,
    more: FxHashMap<usize, Vec<Found<'a>>>,
}

impl<'a> Results<'a> {
    fn new(
        manifest: &'a Manifest,
        environments: &'a [EnvName],
        checked: &'a [Checked],
    ) -> Results<'a> {
        let checks: FxHashMap<&str, usize> = manifest
            .checks
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.as_str(), i))
            .collect();
        let envs: FxHashMap<&str, usize> = environments
            .iter()
            .enumerate()
            .map(|(i, e)| (e.as_str(), i))
            .collect();
        let mut results = Results {
            first: vec![None; checks.len() * envs.len()],
            checks,
            environments: envs,
            more: FxHashMap::default(),
        };
        for (p, one) in checked.iter().enumerate() {
            if !one.taken() {
                continue;
            }
            let partial = one.result();
            let Some(&e) = results.environments.get(partial.environment.as_str()) else {
                continue;
            };
            for (c, check) in partial.checks.iter().enumerate() {
                let Some(&k) = results.checks.get(check.command_id.as_str()) else {
                    continue;
                };
                let at = k * results.environments.len() + e;
                let found = ((p, c), &**check);
                match &results.first[at] {
                    None => results.first[at] = Some(found),
                    Some(first) => results
                        .more
                        .entry(at)
                        .or_insert_with(|| vec![*first])
                        .push(found),
                }
            }
        }
        results
    }

    /// Every result reported for `check` in `env`, the first first.
    fn get(&self, check: &str, env: &str) -> &[Found<'a>] {
        let (Some(k), Some(e)) = (self.checks.get(check), self.environments.get(env)) else {
            return &[];
        };
        let at = k * self.environments.len() + e;
        match self.more.get(&at) {
            Some(all) => all,
            None => self.first[at].as_slice(),
        }
    }
}

/// A result, and where it is among the partial results (partial, check).
type Found<'a> = ((usize, usize), &'a CheckResult);

/// A row as judged, its detail given later: the result it keeps is among the checked
/// results at (partial, check), and the caller moves it into the row.
struct Judged {
    head: RowHead,
    at: (usize, usize),
}

/// A row but its detail.
struct RowHead {
    check: CompactString,
    environment: CompactString,
    required: bool,
    required_exit_code: Option<i32>,
    exit_code: i32,
    result: RowResult,
}

impl RowHead {
    fn with(self, detail: Box<CheckResult>) -> Row {
        Row {
            check: self.check,
            environment: self.environment,
            required: self.required,
            required_exit_code: self.required_exit_code,
            exit_code: self.exit_code,
            result: self.result,
            detail,
        }
    }
}

/// A verdict being worked out: the report filled in pair by pair, with the failures
/// and the gaps that will be its reasons (failures first).
struct Judging<'a> {
    report: Report,
    failures: Vec<String>,
    gaps: Vec<String>,
    /// The environments with a result file.
    tested: HashSet<&'a str>,
    /// The environments whose results came from a machine that is not them, and why.
    rejected: FxHashMap<String, String>,
    /// The rows as judged.
    rows: Vec<Judged>,
    /// The results as the intake admitted them (what each one's claims contradicted).
    checked: &'a [Checked],
}

impl<'a> Judging<'a> {
    fn new(manifest: &Manifest, checked: &'a [Checked], environments: &[EnvName]) -> Self {
        let tested: HashSet<&str> = checked
            .iter()
            .filter(|c| c.taken())
            .map(|c| c.result().environment.as_str())
            .collect();
        let partials = || checked.iter().map(Checked::result);
        let report = Report {
            source: partials()
                .next()
                .map(|p| p.source.clone())
                .unwrap_or_default(),
            environments: environments.iter().map(|e| e.to_string()).collect(),
            environments_tested: environments
                .iter()
                .filter(|e| tested.contains(e.as_str()))
                .map(|e| e.to_string())
                .collect(),
            attempts: partials()
                .filter_map(|p| Some((p.environment.clone(), p.source.run_attempt?)))
                .collect(),
            // RFC 3339 UTC times of one form sort as text.
            finished_at: partials()
                .filter_map(|p| p.finished_at.clone())
                .filter(|t| crate::results::source::is_rfc3339_utc(t))
                .max(),
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
        Judging {
            report,
            failures: Vec::new(),
            gaps: Vec::new(),
            tested,
            rejected: FxHashMap::default(),
            rows: Vec::new(),
            checked,
        }
    }

    fn tested(&self, env: &EnvName) -> bool {
        self.tested.contains(env.as_str())
    }

    /// Judges `check` in each of `environments` in its scope; a manual check is listed
    /// for review.
    fn check(&mut self, check: &Check, environments: &[EnvName], results: &Results<'_>) {
        if check.kind.is_manual() {
            self.report.manual.push(Manual {
                id: check.id.to_string(),
                kind: check.kind.key().to_owned(),
                text: check.kind.describe(),
            });
            return;
        }
        let (mut passed_in, mut failed_in) = (Vec::new(), Vec::new());
        for env in plan::environments_of(check, environments) {
            let found = results.get(check.id.as_str(), env.as_str());
            match self.pair(check, env, found) {
                Some(true) => passed_in.push(env),
                Some(false) => failed_in.push(env),
                None => {}
            }
        }
        if !passed_in.is_empty() && !failed_in.is_empty() {
            let names = |envs: Vec<&EnvName>| envs.iter().map(|e| e.to_string()).collect();
            self.report.disagreements.push(Disagreement {
                check: check.id.to_string(),
                passed_in: names(passed_in),
                failed_in: names(failed_in),
            });
        }
    }

    /// Judges one pair: a row, or a missing entry. Whether it passed (`None` when it
    /// neither passed nor failed: no result, not run).
    fn pair(&mut self, check: &Check, env: &EnvName, found: &[Found<'_>]) -> Option<bool> {
        let (id, env_name) = (check.id.as_str(), env.as_str());
        let Some(&(at, claimed)) = found.first() else {
            self.no_result(check, env);
            return None;
        };
        let conflicting = found
            .iter()
            .any(|(_, r)| r.status != claimed.status || r.exit_code != claimed.exit_code);
        // The intake re-derived every result from its facts against the trusted
        // manifest: never the claim alone decides.
        let first = claimed;
        let contradictions = self.checked[at.0].contradictions_of(id);
        let contradicted = contradictions.is_some();
        if let Some(reason) = contradictions {
            self.contradicted(check, env, first.exit_code.is_none(), reason.to_owned());
        }
        match (first.status, first.exit_code) {
            (Status::NotRun, _) if !conflicting => {
                if check.required {
                    self.gaps
                        .push(format!("{id} in {env_name}: {}", first.why()));
                }
                self.missing(check, env, MissingKind::NotRun, first.why().to_owned());
                None
            }
            // No exit code (it errored before it had one, or claims what it cannot
            // show): no row, never a made-up code, and a failure.
            (_, None) => {
                let why = if conflicting {
                    "conflicting results reported"
                } else {
                    first.why()
                };
                if check.required {
                    self.report.failed_to_run = true;
                    if !contradicted {
                        self.failures
                            .push(format!("{}{why}", failed_to_run_prefix(id, env_name)));
                    }
                }
                let reason = format!("{FAILED_TO_RUN}{why}");
                self.missing(check, env, MissingKind::FailedToRun, reason);
                Some(false)
            }
            (status, Some(exit)) => {
                let pass = status == Status::Pass && !conflicting;
                if !pass && check.required && !contradicted {
                    self.failures.push(if conflicting {
                        format!("{id} in {env_name}: conflicting results reported")
                    } else {
                        failure_reason(
                            id,
                            env_name,
                            first,
                            exit,
                            &self.checked[at.0].result().runner.os,
                        )
                    });
                }
                let head = RowHead {
                    check: id.into(),
                    environment: env_name.into(),
                    required: check.required,
                    required_exit_code: check.expect.required_code(),
                    exit_code: exit,
                    result: if pass {
                        RowResult::Pass
                    } else {
                        RowResult::Fail
                    },
                };
                self.rows.push(Judged { head, at });
                Some(pass)
            }
        }
    }

    /// A pair nothing reported.
    fn no_result(&mut self, check: &Check, env: &EnvName) {
        let (id, env_name) = (check.id.as_str(), env.as_str());
        let reason = if self.tested(env) && self.report.manifest.path == super::FILES_MANIFEST {
            // Read from report files: that environment's files hold no report of it.
            format!(
                "{NO_RESULT_IN}{env_name} results: no report file of `{id}` for {env_name} matched"
            )
        } else if self.tested(env) {
            // Its environment's leg ran and did not run it: what was chosen (`run
            // --check`), or a result that lost it; the next step either way.
            format!(
                "{NO_RESULT_IN}{env_name} results: the leg did not run it (a run with `--check` runs only those); run `cargo verify-matrix run --env {env_name} --check {id}` and merge again"
            )
        } else if let Some(why) = self.rejected.get(env_name) {
            format!("{FROM_ANOTHER_MACHINE}{why}")
        } else {
            NO_RESULTS.to_owned()
        };
        if self.tested(env) && check.required {
            self.gaps.push(format!("{id} in {env_name}: {reason}"));
        }
        self.missing(check, env, MissingKind::NoResult, reason);
    }

    /// A result whose claim its facts or the manifest contradict: a failure of a
    /// required check, listed either way.
    fn contradicted(&mut self, check: &Check, env: &EnvName, no_exit_code: bool, reason: String) {
        let (id, env_name) = (check.id.as_str(), env.as_str());
        if check.required {
            let failure = format!("the result contradicts its facts: {reason}");
            self.failures.push(if no_exit_code {
                self.report.failed_to_run = true;
                format!("{}{failure}", failed_to_run_prefix(id, env_name))
            } else {
                format!("{id} in {env_name}: {failure}")
            });
        }
        self.report.contradictions.push(Contradiction {
            check: id.to_owned(),
            environment: env_name.to_owned(),
            reason,
        });
    }

    fn missing(&mut self, check: &Check, env: &EnvName, kind: MissingKind, reason: String) {
        self.report.missing.push(Missing {
            check: check.id.to_string(),
            environment: env.to_string(),
            kind,
            reason,
            required: check.required,
        });
    }

    /// An environment with no result file: every check it runs is blocked.
    fn blocked(&mut self, manifest: &Manifest, env: &EnvName) {
        let checks: Vec<String> = plan::runnable_checks(manifest, env)
            .map(|c| c.id.to_string())
            .collect();
        if let Some(why) = self.rejected.get(env.as_str()) {
            // Results arrived, from a machine that is not the environment: not taken,
            // and not an unavailable environment either.
            if plan::runnable_checks(manifest, env).any(|c| c.required) {
                self.gaps.push(format!(
                    "{env}: not verified: its results were not taken: {why}"
                ));
            }
            return;
        }
        if plan::runnable_checks(manifest, env).any(|c| c.required) {
            if self.report.manifest.path == super::FILES_MANIFEST {
                // Read from report files: no file of that environment matched.
                self.gaps.push(format!(
                    "{env}: no results: no report file of {env} matched"
                ));
            } else {
                self.gaps.push(format!("{env}: no results"));
            }
        }
        self.report.infra_blocked.push(InfraBlocked {
            environment: env.to_string(),
            checks,
            job_url: None,
        });
    }

    fn finish(self) -> Report {
        let mut report = self.report;
        report.verdict = if self.failures.is_empty() && self.gaps.is_empty() {
            Verdict::Verified
        } else {
            Verdict::NotVerified
        };
        report.reasons = self.failures;
        report.reasons.extend(self.gaps);
        report
    }
}

/// Why an executed pair failed, in the words every format uses: a timeout, a refusal,
/// an ineffective gate and left-over processes say so (their exit code may be 0);
/// anything else "failed" with its exit code.
fn failure_reason(id: &str, env: &str, result: &CheckResult, exit: i32, os: &str) -> String {
    // A split check names the shard that failed.
    let failed_shard = result
        .sharded
        .as_ref()
        .and_then(|s| s.parts.iter().find(|p| p.status != Status::Pass))
        .map(|p| format!("{env} (shard {})", p.shard));
    let env = failed_shard.as_deref().unwrap_or(env);
    if result.timed_out {
        format!("{id} timed out in {env} (exit {exit})")
    } else if let Some(why) = &result.refused {
        format!("{id} was refused in {env}: {why}")
    } else if let Some(why) = &result.ineffective_reason {
        format!("{id} in {env}: the gate was ineffective ({why}), exit {exit}")
    } else if !result.leaked.is_empty() {
        format!("{id} in {env} left processes running (exit {exit})")
    } else if let Some(meaning) = super::cause::exit_meaning_on(exit, os) {
        // What the code itself says (never the log's text: reasons are the verdict's).
        format!("{id} failed in {env}: {meaning} (exit {exit})")
    } else {
        format!("{id} failed in {env} (exit {exit})")
    }
}

/// The reason of a missing pair whose environment has no results at all.
pub(super) const NO_RESULTS: &str = "no results";

/// The start of the reason of a missing pair whose environment's results came from a
/// machine that is not it.
pub(super) const FROM_ANOTHER_MACHINE: &str = "its results were not taken: ";

/// The start of the reason of a missing pair whose environment has other results.
pub(super) const NO_RESULT_IN: &str = "no result for this check in the ";

/// The start of the reason of a missing pair that errored before it had an exit code.
pub(super) const FAILED_TO_RUN: &str = "failed to run: ";

/// The start of the reason given for a required pair that errored before it had an
/// exit code (how format 1 said it; see [`Report::upgrade_from_v1`]).
pub(super) fn failed_to_run_prefix(check: &str, environment: &str) -> String {
    format!("{check} failed to run in {environment}: ")
}
