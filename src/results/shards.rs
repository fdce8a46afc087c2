//! The shards of a sharded environment, made one result: a (check, environment) pair
//! stands only when every shard of its check reported. The union of the shards'
//! results is the pair's: its status the worst of theirs, its tests all of theirs, its
//! effectiveness and `min-tests` judged on the union. A missing shard makes the pair
//! missing, named; a shard reported twice is a conflict.

use std::collections::BTreeMap;

use compact_str::CompactString;
use rustc_hash::FxHashMap;

use super::intake::{Checked, HeldReading, Intake};
use super::parts::{Folders, PartsWriter};
use super::report::Place;
use super::schema::{
    CheckResult, OVERLAP_SHOWN, Outcome, PartialResult, Shard, Sharded, Status, TestCounts,
    test_label,
};
use crate::manifest::{Check, Environment, Gate, Manifest};
use crate::plan;

/// `checked` results with the shards of each environment made one result; the rest
/// as they were. Shards whose results were not taken stay as they are (not taken), so
/// their environment's reason is kept. What a shard's claims contradicted stays with
/// the one result, said with its shard. A shard `merge` held as its facts has its
/// checks read (and admitted by `intake`) only when its environment is combined, on
/// whichever core takes that environment, so one environment's shards are held whole
/// at a time on each core.
pub(super) fn combine(
    manifest: &Manifest,
    checked: Vec<Checked>,
    intake: &mut Intake<'_>,
) -> Vec<Checked> {
    let mut out = Vec::with_capacity(checked.len());
    let mut legs: BTreeMap<String, Vec<Checked>> = BTreeMap::new();
    for mut one in checked {
        let partial = one.result();
        let sharded =
            partial.shard.is_some() && manifest.environment(&partial.environment).is_some();
        if !(sharded && one.taken()) {
            intake.read_held(&mut one);
            out.push(one);
            continue;
        }
        legs.entry(one.result().environment.clone())
            .or_default()
            .push(one);
    }
    if legs.is_empty() {
        return out;
    }
    // Why each shard of an environment was not taken, to name it where it is missing.
    let mut not_taken: FxHashMap<String, NotTaken> = FxHashMap::default();
    for one in &out {
        if let (Some(shard), Some(why)) = (one.result().shard, &one.place().mismatch) {
            not_taken
                .entry(one.result().environment.clone())
                .or_default()
                .entry(shard.index)
                .or_insert_with(|| why.clone());
        }
    }
    // Each environment's held shards read again, admitted and combined on every core,
    // one environment to a thread at a time: memory for a few environments' shards,
    // never all of them.
    intake.prepare(legs.keys().map(String::as_str));
    let legs: Vec<(String, Vec<Checked>, NotTaken)> = legs
        .into_iter()
        .map(|(name, shards)| {
            let why = not_taken.remove(&name).unwrap_or_default();
            (name, shards, why)
        })
        .collect();
    let shared: &Intake<'_> = intake;
    let combined = super::merge::in_parallel_owned(legs, |(name, mut shards, mut not_taken)| {
        let mut read = HeldReading::default();
        for one in &mut shards {
            shared.read_prepared(one, &mut read);
        }
        let mut out = Vec::new();
        combine_env(manifest, &name, shards, &mut not_taken, &mut out);
        (out, read)
    });
    for (combined, read) in combined {
        intake.absorb(read);
        out.extend(combined);
    }
    out
}

/// Why each shard of one environment (by its index) was not taken.
type NotTaken = FxHashMap<u32, String>;

/// The shards of environment `name` (each read and admitted) made one result, pushed
/// onto `out` with those not taken.
fn combine_env(
    manifest: &Manifest,
    name: &str,
    shards: Vec<Checked>,
    not_taken: &mut NotTaken,
    out: &mut Vec<Checked>,
) {
    let Some(env) = manifest.environment(name) else {
        return;
    };
    let mut taken = Vec::with_capacity(shards.len());
    let mut contradicted: Vec<(CompactString, String)> = Vec::new();
    for one in shards {
        if let (Some(shard), Some(why)) = (one.result().shard, &one.place().mismatch) {
            not_taken.entry(shard.index).or_insert_with(|| why.clone());
            out.push(one);
            continue;
        }
        let (partial, place, said) = one.into_parts();
        let shard = partial.shard.map(|s| s.to_string()).unwrap_or_default();
        contradicted.extend(
            said.into_iter()
                .map(|(id, why)| (id, format!("shard {shard}: {why}"))),
        );
        taken.push((partial, place));
    }
    if taken.is_empty() {
        return;
    }
    let (combined, place) = Combining::new(manifest, env, taken, not_taken).finish();
    // One line per check, its shards' in shard order.
    let mut joined: Vec<(CompactString, String)> = Vec::new();
    for (id, why) in contradicted {
        match joined.iter_mut().find(|(c, _)| *c == id) {
            Some((_, all)) => {
                all.push_str("; ");
                all.push_str(&why);
            }
            None => joined.push((id, why)),
        }
    }
    out.push(Checked::combined(combined, place, joined));
}

/// One shard's results: the file's own facts, and its checks, each taken out as its
/// pair is made (so a shard's results are let go as the union grows).
struct Leg {
    header: PartialResult,
    checks: Vec<Option<Box<CheckResult>>>,
    /// Where each check is among `checks`.
    positions: FxHashMap<CompactString, usize>,
}

impl Leg {
    fn new(mut partial: PartialResult) -> Leg {
        let checks: Vec<Option<Box<CheckResult>>> = std::mem::take(&mut partial.checks)
            .into_iter()
            .map(Some)
            .collect();
        let positions = checks
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((c.as_ref()?.command_id.clone(), i)))
            .collect();
        Leg {
            header: partial,
            checks,
            positions,
        }
    }

    /// Its result of `id`, taken out.
    fn take(&mut self, id: &str) -> Option<Box<CheckResult>> {
        let at = *self.positions.get(id)?;
        self.checks.get_mut(at)?.take()
    }
}

/// The shards of one environment being made one result.
struct Combining<'a> {
    manifest: &'a Manifest,
    env: &'a Environment,
    legs: u32,
    /// The shards taken, by index (more than one: reported twice).
    by_index: BTreeMap<u32, Vec<Leg>>,
    /// Shards that claim another split than the manifest's, and why they are not used.
    wrong: Vec<(u32, String)>,
    not_taken: &'a NotTaken,
    place: Place,
    /// The folders of the logs the environment's parts were made of.
    folders: Folders,
}

impl<'a> Combining<'a> {
    fn new(
        manifest: &'a Manifest,
        env: &'a Environment,
        shards: Vec<(PartialResult, Place)>,
        not_taken: &'a NotTaken,
    ) -> Combining<'a> {
        let legs = manifest.legs(env);
        let mut by_index: BTreeMap<u32, Vec<Leg>> = BTreeMap::new();
        let mut wrong = Vec::new();
        let mut place = None;
        for (partial, p) in shards {
            let Some(shard) = partial.shard else { continue };
            if shard.count != legs || shard.index == 0 || shard.index > legs {
                wrong.push((
                    shard.index,
                    format!(
                        "a result claims to be shard {shard} of {}, which the manifest splits into {legs}",
                        env.name
                    ),
                ));
                continue;
            }
            place.get_or_insert(p);
            by_index
                .entry(shard.index)
                .or_default()
                .push(Leg::new(partial));
        }
        Combining {
            manifest,
            env,
            legs,
            by_index,
            wrong,
            not_taken,
            folders: Folders::default(),
            place: place.unwrap_or_else(|| Place {
                environment: env.name.to_string(),
                declared: None,
                runner: Default::default(),
                mismatch: None,
                job: None,
                variables: Default::default(),
            }),
        }
    }

    /// The environment's one result, and its place (the first shard's machine).
    fn finish(mut self) -> (PartialResult, Place) {
        let mut checks = Vec::new();
        for check in plan::runnable_checks(self.manifest, &self.env.name) {
            if let Some(result) = self.check(check) {
                checks.push(Box::new(result));
            }
        }
        let all: Vec<&PartialResult> = self
            .by_index
            .values()
            .flatten()
            .map(|leg| &leg.header)
            .collect();
        let first = all.first().copied();
        let outcome = if all.iter().all(|p| p.outcome == Outcome::Complete)
            && (1..=self.legs).all(|k| self.by_index.contains_key(&k))
        {
            Outcome::Complete
        } else {
            Outcome::Interrupted
        };
        let mut source = first.map(|p| p.source.clone()).unwrap_or_default();
        source.run_attempt = all.iter().filter_map(|p| p.source.run_attempt).max();
        let combined = PartialResult {
            format_version: first.map_or(super::FORMAT_VERSION, |p| p.format_version),
            tool: first.map_or_else(super::Tool::current, |p| p.tool.clone()),
            manifest: match first {
                Some(p) => p.manifest.clone(),
                None => super::ManifestRef {
                    path: self.manifest.path.display().to_string(),
                    digest: self.manifest.digest.clone(),
                    content: (&self.manifest.content).into(),
                },
            },
            environment: self.env.name.to_string(),
            shard: None,
            source,
            runner: first.map(|p| p.runner.clone()).unwrap_or_default(),
            started_at: all
                .iter()
                .map(|p| p.started_at.clone())
                .min()
                .unwrap_or_default(),
            finished_at: if all.iter().all(|p| p.finished_at.is_some()) {
                all.iter().filter_map(|p| p.finished_at.clone()).max()
            } else {
                None
            },
            duration_ms: all.iter().map(|p| p.duration_ms).max().unwrap_or(0),
            outcome,
            checks,
            held: None,
        };
        (combined, self.place)
    }

    /// Why shard `k` of the environment has no result.
    fn why_missing(&self, k: u32) -> String {
        let env = &self.env.name;
        let shard = Shard {
            index: k,
            count: self.legs,
        };
        if let Some(why) = self.not_taken.get(&k) {
            return format!("shard {shard} of {env}: its results were not taken: {why}");
        }
        if let Some((_, why)) = self.wrong.iter().find(|(i, _)| *i == k) {
            return format!("shard {shard} of {env} has no result ({why})");
        }
        format!("shard {shard} of {env} has no result")
    }

    /// `check`'s one result in the environment, from its shards; `None` when no shard
    /// that should have run it says anything of it (the check was not run here).
    fn check(&mut self, check: &Check) -> Option<CheckResult> {
        let id = check.id.as_str();
        let n = self.manifest.shards_of(check, self.env);
        let splits = check.split.is_some();
        // A check that runs whole runs in shard 1.
        let wanted: Vec<u32> = if splits { (1..=n).collect() } else { vec![1] };
        let mut owned: Vec<(Shard, Box<CheckResult>)> = Vec::new();
        let mut missing: Vec<String> = Vec::new();
        let mut twice: Vec<Shard> = Vec::new();
        for &k in &wanted {
            let slice = Shard {
                index: k,
                count: if splits { n } else { 1 },
            };
            let leg = Shard {
                index: k,
                count: self.legs,
            };
            let env = &self.env.name;
            let Some(copies) = self.by_index.get_mut(&k) else {
                missing.push(self.why_missing(k));
                continue;
            };
            let mut results: Vec<Box<CheckResult>> =
                copies.iter_mut().filter_map(|c| c.take(id)).collect();
            match results.len() {
                0 => missing.push(format!("shard {leg} of {env} did not run it")),
                1 => {
                    let one = results.remove(0);
                    if one.status == Status::NotRun {
                        missing.push(format!("shard {leg} of {env}: {}", one.summary));
                    } else {
                        owned.push((slice, one));
                    }
                }
                _ => twice.push(leg),
            }
        }
        // Each shard's tests, moved out before anything is copied.
        let tests: Vec<Option<Box<super::schema::TestReport>>> =
            owned.iter_mut().map(|(_, r)| r.tests.take()).collect();
        let found: Vec<(Shard, &CheckResult)> = owned.iter().map(|(s, r)| (*s, &**r)).collect();
        if found.is_empty()
            && twice.is_empty()
            && missing.iter().all(|m| m.contains("did not run it"))
        {
            return None;
        }
        let template = found.first().map(|(_, r)| *r);
        let mut result = match template {
            Some(r) => r.clone(),
            None => CheckResult::blank(check, self.env.name.as_str(), Status::NotRun, ""),
        };
        if !twice.is_empty() {
            let list: Vec<String> = twice.iter().map(ToString::to_string).collect();
            result.status = Status::Error;
            result.exit_code = None;
            result.say(&format!(
                "conflicting results: shard {} of {} reported more than once",
                list.join(", "),
                self.env.name
            ));
            result.sharded = None;
            return Some(result);
        }
        if !splits {
            // Whole, in shard 1: the shard's result is the pair's.
            drop(found);
            return Some(match owned.into_iter().zip(tests).next() {
                Some(((_, mut r), tests)) => {
                    r.tests = tests;
                    r.sharded = None;
                    *r
                }
                None => not_run(result, &missing),
            });
        }
        if let Some(why) = split_disagreement(check, &found) {
            result.status = Status::Error;
            result.exit_code = None;
            result.say(&why);
            result.sharded = None;
            return Some(result);
        }
        union(check, &mut result, &found, tests, &mut self.folders);
        if !missing.is_empty() {
            let failed = matches!(result.status, Status::Fail | Status::Error);
            if !failed {
                return Some(not_run(result, &missing));
            }
            result.say(&format!("{}; {}", result.summary, missing.join("; ")));
        }
        Some(result)
    }
}

/// Why the shards of a `split: timing` check cannot be one result: each computed the
/// split itself, so they must have listed the same tests and split them the same way,
/// or some test may have run nowhere.
fn split_disagreement(check: &Check, found: &[(Shard, &CheckResult)]) -> Option<String> {
    let facts: Vec<(Shard, Option<&super::schema::SplitFacts>)> = found
        .iter()
        .map(|(shard, r)| (*shard, r.sharded.as_ref().and_then(|s| s.split.as_deref())))
        .collect();
    let timing = check.split == Some(crate::manifest::Split::Timing);
    let Some(&(first_shard, Some(first))) = facts.iter().find(|(_, f)| f.is_some()) else {
        // A timing split's shards each computed the split: one that does not say how
        // cannot be shown to have run its share.
        return (timing && !facts.is_empty())
            .then(|| "the shards do not say how they split the tests".to_owned());
    };
    for (shard, f) in &facts {
        match f {
            None => {
                return Some(format!(
                    "shard {shard} does not say how it split the tests, shard {first_shard} does"
                ));
            }
            Some(f) if f.listed_digest != first.listed_digest => {
                return Some(format!(
                    "the shards listed different tests (shard {first_shard}: {}, shard {shard}: {}): some may have run in no shard",
                    first.listed, f.listed
                ));
            }
            Some(f) if f.split_digest != first.split_digest => {
                return Some(format!(
                    "shards {first_shard} and {shard} split the tests differently (their histories differ): some may have run in no shard"
                ));
            }
            Some(_) => {}
        }
    }
    let shares: u64 = facts
        .iter()
        .filter_map(|(_, f)| f.map(|f| f.share))
        .fold(0, u64::saturating_add);
    (shares != first.listed).then(|| {
        format!(
            "the shards' shares hold {shares} tests, but {} were listed",
            first.listed
        )
    })
}

/// `result` as a pair that did not run: which shards are missing, and why.
fn not_run(mut result: CheckResult, missing: &[String]) -> CheckResult {
    result.status = Status::NotRun;
    result.exit_code = None;
    result.say(&missing.join("; "));
    result
}

/// Makes `result` the union of the shards `found` (in shard order): the worst status,
/// the first failing shard's exit code, every test, the longest duration, and the
/// gate's effectiveness and `min-tests` judged on the union.
fn union(
    check: &Check,
    result: &mut CheckResult,
    found: &[(Shard, &CheckResult)],
    tests: Vec<Option<Box<super::schema::TestReport>>>,
    folders: &mut Folders,
) {
    let worst = found
        .iter()
        .max_by_key(|(_, r)| match (r.status, r.exit_code) {
            (Status::Pass, _) => 0,
            (Status::NotRun, _) => 1,
            (Status::Fail, _) => 2,
            (Status::Error, Some(_)) => 3,
            (Status::Error, None) => 4,
        });
    if let Some((shard, worst)) = worst {
        result.status = worst.status;
        result.exit_code = worst.exit_code;
        result.say(&format!("shard {shard}: {}", worst.summary));
        result.log_path = worst.log_path.clone();
        result.timed_out = worst.timed_out;
        result.refused = worst.refused.clone();
    }
    result.duration_ms = found.iter().map(|(_, r)| r.duration_ms).max().unwrap_or(0);
    result.attempts = found.iter().map(|(_, r)| r.attempts).max().unwrap_or(0);
    result.flaky = found.iter().any(|(_, r)| r.flaky);
    result.retryable = found.iter().any(|(_, r)| r.retryable);
    result.leaked = found.iter().flat_map(|(_, r)| r.leaked.clone()).collect();
    let counts: Vec<&TestCounts> = found
        .iter()
        .filter_map(|(_, r)| r.test_counts.as_deref())
        .collect();
    // Sums that cannot overflow, whatever a shard claims.
    let total = |values: &mut dyn Iterator<Item = u64>| values.fold(0u64, u64::saturating_add);
    result.test_counts = (!counts.is_empty()).then(|| {
        Box::new(TestCounts {
            passed: total(&mut counts.iter().map(|c| c.passed)),
            failed: total(&mut counts.iter().map(|c| c.failed)),
            skipped: total(&mut counts.iter().map(|c| c.skipped)),
            runner: counts[0].runner.clone(),
            flaky: total(&mut counts.iter().map(|c| c.flaky)),
            quarantined: total(&mut counts.iter().map(|c| c.quarantined)),
        })
    });
    let executed: Vec<u64> = found.iter().filter_map(|(_, r)| r.tests_executed).collect();
    result.tests_executed = (!executed.is_empty()).then(|| total(&mut executed.iter().copied()));
    let mut sharded = Sharded::default();
    // Every test of every shard; a test that ran in two is the split overlapping.
    if let Some(first) = tests.iter().flatten().next() {
        let mut union = super::schema::TestReport {
            format: first.format.clone(),
            files: Vec::new(),
            // Each shard's log counted its own share: the reports' union is the pair's.
            log_counts: None,
            cases: Vec::new(),
            left_out: 0,
            quarantine: Vec::new(),
        };
        let mut seen: FxHashMap<CompactString, u32> = FxHashMap::default();
        let mut entries: FxHashMap<CompactString, usize> = FxHashMap::default();
        for ((shard, _), t) in found.iter().zip(tests) {
            let Some(t) = t else { continue };
            let t = *t;
            for file in t.files {
                if !union.files.contains(&file) {
                    union.files.push(file);
                }
            }
            union.left_out = union.left_out.saturating_add(t.left_out);
            // Each entry's tests and failures held, over every shard.
            for used in t.quarantine {
                match entries
                    .get(&used.test)
                    .and_then(|&i| union.quarantine.get_mut(i))
                {
                    Some(u) => {
                        u.matched = u.matched.saturating_add(used.matched);
                        u.held = u.held.saturating_add(used.held);
                        u.expired |= used.expired;
                    }
                    None => {
                        entries.insert(used.test.clone(), union.quarantine.len());
                        union.quarantine.push(used);
                    }
                }
            }
            for case in t.cases {
                match seen.get(&case.identity()) {
                    Some(other) if *other != shard.index => {
                        sharded.overlap_count = sharded.overlap_count.saturating_add(1);
                        if sharded.overlapped.len() < OVERLAP_SHOWN {
                            sharded
                                .overlapped
                                .push(test_label(&case.suite, &case.name).into());
                        }
                    }
                    _ => {
                        seen.insert(case.identity(), shard.index);
                    }
                }
                union.cases.push(case);
            }
        }
        result.tests = Some(Box::new(union));
    }
    // Effective when every shard that had tests to run showed it ran them (a shard
    // whose share held no test proves nothing either way) and the union ran some.
    let shown: Vec<&CheckResult> = found
        .iter()
        .map(|(_, r)| *r)
        .filter(|r| r.gate_effective.is_some())
        .collect();
    if !shown.is_empty() {
        let against = shown
            .iter()
            .find(|r| r.gate_effective == Some(false) && r.tests_executed != Some(0));
        let ran = result.tests_executed.unwrap_or(0);
        let reason: Option<String> = if let Some(r) = against {
            Some(
                r.ineffective_reason
                    .as_deref()
                    .unwrap_or("unknown")
                    .to_owned(),
            )
        } else if ran == 0 && (check.gate == Gate::Test || result.tests_executed.is_some()) {
            Some(format!("no shard of {} ran a test", found.len()))
        } else {
            // A test run in two shards is one test.
            let ran = ran.saturating_sub(sharded.overlap_count);
            check.min_tests.filter(|min| ran < *min).map(|min| {
                format!(
                    "the {} shards ran {ran} distinct test{} together, fewer than min-tests {min}",
                    found.len(),
                    if ran == 1 { "" } else { "s" }
                )
            })
        };
        result.gate_effective = Some(reason.is_none());
        result.ineffective_reason = reason.map(Into::into);
    }
    if result.status == Status::Pass {
        if check.must_be_effective && result.gate_effective == Some(false) {
            result.status = Status::Fail;
            result.say(&format!(
                "ineffective: {} (exit {})",
                result.ineffective_reason.as_deref().unwrap_or("unknown"),
                result.exit_code.unwrap_or(-1)
            ));
        } else {
            let tests = result
                .tests_executed
                .map(|n| format!("{n} test{} passed in ", if n == 1 { "" } else { "s" }))
                .unwrap_or_default();
            result.say(&format!("{tests}{} shards", found.len()));
        }
    }
    // Each shard's logs are mostly in one folder: the environment's parts share it.
    let mut parts = PartsWriter::new(folders);
    for (shard, r) in found {
        parts.push(
            *shard,
            r.status,
            r.exit_code,
            r.duration_ms,
            r.tests_executed,
            &r.summary,
            r.log_path.as_deref(),
        );
    }
    sharded.parts = parts.finish();
    if sharded.overlap_count > 0 && !check.shards_may_overlap && result.status == Status::Pass {
        // The shards ran fewer distinct tests than they claim: what they prove is less
        // than their sum, and some test may have run in none.
        let n = sharded.overlap_count;
        result.status = Status::Fail;
        result.gate_effective = Some(false);
        result.ineffective_reason = Some(
            format!(
                "the split overlapped: {n} test{} ran in more than one shard (`shards-may-overlap: true` allows it)",
                if n == 1 { "" } else { "s" }
            )
            .into(),
        );
    }
    if sharded.overlap_count > 0 {
        result.say(&format!(
            "{}; {} test{} ran in more than one shard (the split overlapped)",
            result.summary,
            sharded.overlap_count,
            if sharded.overlap_count == 1 { "" } else { "s" }
        ));
    }
    result.sharded = Some(Box::new(sharded));
}
