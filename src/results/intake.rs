//! The one intake every result passes before anything combines or judges it: a whole
//! environment's, a shard's, one an entered environment left, one read by `merge`,
//! `report`, `render`, the hook or the MCP server.
//!
//! Reading (confined, bounded, schema, version) is [`super::merge`]'s; what comes out of
//! a file is then admitted here, against the manifest it is judged by:
//!
//! - where it ran: its machine facts against the environment's identity, consistent
//!   with each other, and under Actions against the run's jobs ([`super::identity`]);
//!   a result that fails this is not taken (its place says why);
//! - each check's claims re-derived from its facts and the manifest: the status from
//!   the exit code, the manifest's expectation, effectiveness, timeout, leaks, refusal
//!   and a group's items; the fields the manifest owns from the manifest. A claim its
//!   facts do not support is a contradiction, and the result stands as the facts have it.
//!
//! Only [`admit`] (and the intake it keeps, for a merge) makes a [`Checked`]: the shards
//! of an environment are combined from checked shards (`results/shards.rs`) and judging
//! takes checked results only (`results/verdict.rs`), so no unchecked claim reaches
//! either. A shard `merge` held as its facts has its checks read again, and admitted,
//! only as its environment's shards are combined; a file that does not read again as
//! it first did is an error of the merge, never a result left out.

use compact_str::CompactString;
use rustc_hash::FxHashMap;

use super::jobs::Jobs;
use super::quarantine::{self, Held};
use super::report::Place;
use super::schema::{CheckResult, ItemResult, PartialResult, Status, TestCounts, whole_cause};
use crate::manifest::validate::EXIT_CODES;
use crate::manifest::{Check, CheckKind, ExpectExit, Manifest};

/// A result that passed the intake: its claims re-derived from its facts, and where it
/// ran. Only [`admit`] (and combining checked shards) makes one.
#[derive(Debug)]
pub struct Checked {
    result: PartialResult,
    place: Place,
    /// Each check's contradictions (check id, what its claims and facts disagree on),
    /// already applied to its result.
    contradictions: Vec<(CompactString, String)>,
}

impl Checked {
    /// The result, as its facts have it.
    pub fn result(&self) -> &PartialResult {
        &self.result
    }

    /// Where it ran, and why it is not taken when it is not.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// Whether it stands for its environment.
    pub fn taken(&self) -> bool {
        self.place.mismatch.is_none()
    }

    /// What the claims of check `id` contradicted, if anything.
    pub fn contradictions_of(&self, id: &str) -> Option<&str> {
        self.contradictions
            .iter()
            .find(|(c, _)| c == id)
            .map(|(_, why)| why.as_str())
    }

    /// The result taken apart, for the rows that move its checks out.
    pub(super) fn into_result(self) -> PartialResult {
        self.result
    }

    /// The result and its place, taken apart for combining; [`Checked::combined`] makes
    /// the one result again.
    pub(super) fn into_parts(self) -> (PartialResult, Place, Vec<(CompactString, String)>) {
        (self.result, self.place, self.contradictions)
    }

    /// The one result combining made of checked shards, with the contradictions they
    /// carried (each already said with its shard).
    pub(super) fn combined(
        result: PartialResult,
        place: Place,
        contradictions: Vec<(CompactString, String)>,
    ) -> Checked {
        Checked {
            result,
            place,
            contradictions,
        }
    }
}

/// Admits `partials` against `manifest` (and, under Actions, the run's `jobs`): each
/// result's place, and its checks re-derived from their facts. `ran_by` is the manifest
/// the results were produced from when it is not `manifest` (a pull request's, judged
/// by the base branch's): a check it runs otherwise than `manifest` does is no
/// evidence for `manifest`'s.
pub fn admit(
    manifest: &Manifest,
    partials: Vec<PartialResult>,
    jobs: &Jobs,
    ran_by: Option<&Manifest>,
) -> Vec<Checked> {
    let mut intake = Intake::new(manifest, ran_by);
    let mut checked = intake.admit(partials, jobs);
    for one in &mut checked {
        intake.read_held(one);
    }
    checked
}

/// The intake, kept while results are admitted: the manifest judged by, its checks by
/// id, and what the results' manifest runs otherwise.
pub(super) struct Intake<'a> {
    /// What reading held results again noted (their log paths).
    pub(super) notes: Vec<String>,
    /// Held results whose files did not read again as they first did.
    pub(super) errors: Vec<super::merge::MergeError>,
    manifest: &'a Manifest,
    checks: FxHashMap<&'a str, &'a Check>,
    otherwise: Option<RunsOtherwise<'a>>,
}

impl<'a> Intake<'a> {
    pub(super) fn new(manifest: &'a Manifest, ran_by: Option<&'a Manifest>) -> Intake<'a> {
        Intake {
            notes: Vec::new(),
            errors: Vec::new(),
            manifest,
            checks: manifest.checks.iter().map(|c| (c.id.as_str(), c)).collect(),
            otherwise: ran_by
                .filter(|m| m.digest != manifest.digest)
                .map(|ran_by| RunsOtherwise::new(manifest, ran_by)),
        }
    }

    /// [`admit`], a held result's checks left to be read when they are needed
    /// ([`Intake::read_held`]).
    pub(super) fn admit(&mut self, partials: Vec<PartialResult>, jobs: &Jobs) -> Vec<Checked> {
        let places = super::identity::places(self.manifest, &partials, jobs);
        self.prepare(partials.iter().map(|p| p.environment.as_str()));
        // Re-derived on every core: at GitHub's largest matrices, a quarter of a
        // million checks.
        let this: &Intake<'a> = self;
        let pairs: Vec<(PartialResult, Place)> = partials.into_iter().zip(places).collect();
        super::merge::in_parallel_owned(pairs, |(mut result, place)| {
            let contradictions = this.rederive(&mut result);
            Checked {
                result,
                place,
                contradictions,
            }
        })
    }

    /// Each check of `result` re-derived: the contradictions found. What its
    /// environment needs is worked out again for each result unless
    /// [`Intake::prepare`] was given it.
    fn rederive(&self, result: &mut PartialResult) -> Vec<(CompactString, String)> {
        let mut contradictions = rederive_result(self.manifest, &self.checks, result);
        if let Some(otherwise) = &self.otherwise {
            otherwise.mark(result, &mut contradictions);
        }
        contradictions
    }

    /// Works out once, for each of `environments`, what re-deriving a result of it
    /// needs: then results of them are admitted on every core
    /// ([`Intake::read_prepared`]).
    pub(super) fn prepare<'e>(&mut self, environments: impl IntoIterator<Item = &'e str>) {
        if let Some(otherwise) = &mut self.otherwise {
            for env in environments {
                otherwise.remember(env);
            }
        }
    }

    /// The checks of a result `merge` held as its facts ([`Held`](super::merge::Held)),
    /// read again and admitted. When its file does not read as it did, that is an error
    /// of the merge ([`Intake::errors`]), and the result is not taken.
    pub(super) fn read_held(&mut self, one: &mut Checked) {
        if one.result.held.is_some() {
            self.prepare([one.result.environment.as_str()]);
            let mut read = HeldReading::default();
            self.read_prepared(one, &mut read);
            self.absorb(read);
        }
    }

    /// [`Intake::read_held`] from any thread, for a result of an environment
    /// [`Intake::prepare`] was given: what its reading noted goes to `read.notes`, and
    /// why its file does not read as it did to `read.errors`, for [`Intake::absorb`].
    pub(super) fn read_prepared(&self, one: &mut Checked, read: &mut HeldReading) {
        if one.result.held.is_none() {
            return;
        }
        match super::merge::reread(&one.result) {
            Ok((result, notes)) => {
                read.notes.extend(notes);
                one.result.checks = result.checks;
                one.result.held = None;
                let contradictions = self.rederive(&mut one.result);
                one.contradictions.extend(contradictions);
            }
            Err(error) => {
                // Never a result left out (a second copy of a shard would then stand
                // unopposed): the error the file is, and the result not taken besides.
                one.result.held = None;
                one.place.mismatch.get_or_insert(error.to_string());
                read.errors.push(error);
            }
        }
    }

    /// What [`Intake::read_prepared`] noted and found, kept as if read here, in the
    /// order it is given.
    pub(super) fn absorb(&mut self, read: HeldReading) {
        self.notes.extend(read.notes);
        self.errors.extend(read.errors);
    }
}

/// What reading held results again on another thread noted, and the files that did not
/// read as they first did ([`Intake::read_prepared`]).
#[derive(Default)]
pub(super) struct HeldReading {
    notes: Vec<String>,
    errors: Vec<super::merge::MergeError>,
}

/// Re-derives every check of `result` that `manifest` defines; the contradictions found.
/// A check reported more than once in one result is one conflicting result (an error,
/// without an exit code), whichever copy a reader would have taken.
fn rederive_result(
    manifest: &Manifest,
    checks: &FxHashMap<&str, &Check>,
    result: &mut PartialResult,
) -> Vec<(CompactString, String)> {
    let mut out = Vec::new();
    let twice = reported_twice(result);
    let env = manifest.environment(&result.environment);
    let leg = result.shard;
    for claimed in &mut result.checks {
        // A cause is the verdict's text where the summary was cut: no longer, and no
        // more lines, than `run` writes one, whatever a result file claims.
        if let Some(cause) = &mut claimed.cause {
            *cause = whole_cause(cause);
        }
        let Some(&check) = checks.get(claimed.command_id.as_str()) else {
            continue;
        };
        if let Some(&(_, times)) = twice.iter().find(|(id, _)| *id == claimed.command_id) {
            let why = format!("it is reported {times} times in one result");
            claimed.status = Status::Error;
            claimed.exit_code = None;
            claimed.say(&format!("conflicting results: {why}"));
            claimed.required = check.required;
            claimed.required_exit_code = check.expect.required_code();
            claimed.must_be_effective = check.must_be_effective;
            out.push((claimed.command_id.clone(), why));
            continue;
        }
        let mut contradictions = Vec::new();
        // A check's result is its result's environment's: one naming another is a
        // claim its file does not stand for.
        if claimed.environment != result.environment {
            contradictions.push(format!(
                "it names environment `{}` in the result of `{}`",
                claimed.environment.escape_debug(),
                result.environment.escape_debug()
            ));
        }
        if let Some(env) = env {
            // The slice it records must be the one its leg runs.
            let recorded = claimed.sharded.as_ref().and_then(|s| s.slice);
            if let Some(expected) = crate::plan::slice_of(manifest, check, env, leg)
                && recorded != expected
            {
                let say = |slice: Option<crate::manifest::Shard>| {
                    slice.map_or_else(
                        || "no slice (the whole check)".to_owned(),
                        |s| format!("slice {s}"),
                    )
                };
                let leg = leg.map_or_else(
                    || "the whole environment".to_owned(),
                    |l| format!("shard {l}"),
                );
                contradictions.push(format!(
                    "it records {}, but {leg} runs {}",
                    say(recorded),
                    say(expected)
                ));
            }
        }
        // A shard's slice of a split check may have had no test in its share: that
        // is judged on the union of the shards.
        let share = leg.is_some() && env.is_some_and(|env| manifest.shards_of(check, env) > 1);
        contradictions.extend(rederive(check, claimed, share));
        if !contradictions.is_empty() {
            contradict(claimed, &contradictions);
            out.push((claimed.command_id.clone(), contradictions.join("; ")));
        }
    }
    if !twice.is_empty() {
        // One result per check: the first copy, now the conflict.
        let mut seen = rustc_hash::FxHashSet::default();
        result.checks.retain(|c| {
            !checks.contains_key(c.command_id.as_str()) || seen.insert(c.command_id.clone())
        });
    }
    out
}

/// The keys of a check that say how it is judged, not what runs: the manifest judged by
/// decides them whatever the results' manifest said.
const JUDGED_BY: &[&str] = &[
    "name",
    "required",
    "must-be-effective",
    "min-tests",
    "tests-may-drop",
    "fail-on-flaky",
    "quarantine",
    "exit-code",
    "expect",
    "gate",
    "environment",
];

/// What runs for a check in one environment as a manifest defines it: the check as
/// written (but for how it is judged), and the variables and shell it gets there.
fn what_runs(
    manifest: &Manifest,
    raw: &serde_json::Value,
    check: &Check,
    env: &crate::manifest::Environment,
) -> Option<serde_json::Value> {
    let mut raw = raw.as_object()?.clone();
    for key in JUDGED_BY {
        raw.remove(*key);
    }
    raw.insert(
        "(variables)".to_owned(),
        serde_json::json!(manifest.env_for(check, env)),
    );
    raw.insert(
        "(shell)".to_owned(),
        format!("{:?}", manifest.shell_for(check, env)).into(),
    );
    Some(serde_json::Value::Object(raw))
}

/// The checks of a manifest as written, by id.
fn raw_checks(manifest: &Manifest) -> FxHashMap<&str, &serde_json::Value> {
    manifest
        .content
        .get("checks")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| Some((c.get("id")?.as_str()?, c)))
        .collect()
}

/// Which checks the results' manifest (`ran_by`) runs otherwise than the manifest judged
/// by, in each environment: worked out once per environment, whatever the number of
/// result files.
struct RunsOtherwise<'a> {
    manifest: &'a Manifest,
    ran_by: &'a Manifest,
    ours: FxHashMap<&'a str, &'a serde_json::Value>,
    theirs: FxHashMap<&'a str, &'a serde_json::Value>,
    their_checks: FxHashMap<&'a str, &'a Check>,
    by_env: FxHashMap<String, rustc_hash::FxHashSet<CompactString>>,
}

impl<'a> RunsOtherwise<'a> {
    fn new(manifest: &'a Manifest, ran_by: &'a Manifest) -> RunsOtherwise<'a> {
        RunsOtherwise {
            manifest,
            ran_by,
            ours: raw_checks(manifest),
            theirs: raw_checks(ran_by),
            their_checks: ran_by.checks.iter().map(|c| (c.id.as_str(), c)).collect(),
            by_env: FxHashMap::default(),
        }
    }

    /// [`RunsOtherwise::work_out`] for `env`, kept (once per environment).
    fn remember(&mut self, env: &str) {
        if !self.by_env.contains_key(env) {
            let differ = self.work_out(env);
            self.by_env.insert(env.to_owned(), differ);
        }
    }

    /// The checks of the manifest judged by that run otherwise in `env`, worked out.
    fn work_out(&self, env: &str) -> rustc_hash::FxHashSet<CompactString> {
        let mut differ = rustc_hash::FxHashSet::default();
        let (ours_env, theirs_env) = (self.manifest.environment(env), self.ran_by.environment(env));
        for check in &self.manifest.checks {
            let id = check.id.as_str();
            let ours = ours_env
                .zip(self.ours.get(id))
                .and_then(|(e, raw)| what_runs(self.manifest, raw, check, e));
            let theirs = theirs_env
                .zip(self.theirs.get(id))
                .zip(self.their_checks.get(id))
                .and_then(|((e, raw), theirs)| what_runs(self.ran_by, raw, theirs, e));
            if ours.is_none() || ours != theirs {
                differ.insert(CompactString::from(id));
            }
        }
        differ
    }

    /// Marks each check of `result` that runs otherwise as a contradiction: it ran what
    /// the results' manifest defines, which is no evidence for the manifest judged by.
    fn mark(&self, result: &mut PartialResult, contradictions: &mut Vec<(CompactString, String)>) {
        let worked_out;
        let differing = match self.by_env.get(result.environment.as_str()) {
            Some(differing) => differing,
            None => {
                worked_out = self.work_out(&result.environment);
                &worked_out
            }
        };
        for claimed in &mut result.checks {
            if !differing.contains(&claimed.command_id) {
                continue;
            }
            let why = "it ran the check as the results' own manifest defines it, which runs otherwise than the manifest it is judged by".to_owned();
            contradict(claimed, std::slice::from_ref(&why));
            match contradictions
                .iter_mut()
                .find(|(id, _)| *id == claimed.command_id)
            {
                Some((_, all)) => {
                    all.push_str("; ");
                    all.push_str(&why);
                }
                None => contradictions.push((claimed.command_id.clone(), why)),
            }
        }
    }
}

/// The checks `result` reports more than once, and how many times.
fn reported_twice(result: &PartialResult) -> Vec<(CompactString, usize)> {
    let mut counts: FxHashMap<&str, usize> = FxHashMap::default();
    for c in &result.checks {
        *counts.entry(c.command_id.as_str()).or_default() += 1;
    }
    let mut twice: Vec<(CompactString, usize)> = counts
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(id, n)| (id.into(), n))
        .collect();
    twice.sort();
    twice
}

/// Re-derives `claimed` from its facts and the trusted manifest's `check`: the status
/// from the exit code, the manifest's expectation, effectiveness, timeout, leaks,
/// refusal and a group's items; the fields the manifest owns from the manifest. Each
/// contradiction between the claims and the facts is returned ([`contradict`] then
/// leaves `claimed` as the facts have it).
fn rederive(check: &Check, claimed: &mut CheckResult, share: bool) -> Vec<String> {
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
    // The quarantine's marks are the manifest's, never the result's own.
    let held = hold_back(check, claimed, share);
    if claimed.status == Status::Pass {
        let why_not = why_not_a_pass(check, claimed, share, &held);
        if !why_not.is_empty() {
            contradictions.push(format!("it claims PASS, but {}", why_not.join(", ")));
        }
    }
    claimed.required = check.required;
    claimed.required_exit_code = required_code;
    claimed.must_be_effective = check.must_be_effective;
    contradictions
}

/// `claimed` as its facts have it once its claims were found to contradict them: a
/// PASS is no longer one (without an exit code, an error: never a made-up code), and its
/// summary says why.
fn contradict(claimed: &mut CheckResult, contradictions: &[String]) {
    if claimed.status == Status::Pass {
        claimed.status = if claimed.exit_code.is_some() {
            Status::Fail
        } else {
            Status::Error
        };
    }
    claimed.say(&format!(
        "contradicts its facts: {}",
        contradictions.join("; ")
    ));
}

/// The failed tests of `claimed` that `check`'s quarantine holds back today, marked
/// again from the manifest (a result's own marks are cleared).
fn hold_back(check: &Check, claimed: &mut CheckResult, share: bool) -> Held {
    let Some(tests) = claimed.tests.as_deref_mut() else {
        return Held::default();
    };
    // What the history says of a test is `merge`'s to write, from its own history.
    for case in &mut tests.cases {
        case.history = None;
    }
    let mut none = TestCounts::default();
    let counts = claimed.test_counts.as_deref_mut().unwrap_or(&mut none);
    quarantine::apply(
        check,
        counts,
        tests,
        crate::manifest::today(),
        claimed.exit_code,
        share,
    )
}

/// The facts of `claimed` that a PASS of `check` cannot have (`held`: what its
/// quarantine holds back).
fn why_not_a_pass(check: &Check, claimed: &CheckResult, share: bool, held: &Held) -> Vec<String> {
    let mut why_not = Vec::new();
    match claimed.exit_code {
        None => why_not.push("it has no exit code".to_owned()),
        // Only quarantined tests failed: the exit code says so much.
        Some(code) if !check.expect.accepts(code) && !held.all_held => why_not.push(format!(
            "exit code {code} does not pass ({})",
            match check.expect.required_code() {
                Some(want) => format!("required {want}"),
                None => "a failure was expected".to_owned(),
            }
        )),
        Some(_) => {}
    }
    // A shard's share with no test in it proves nothing either way: judged on the union
    // of the shards. Only a share shown empty counts as one: a timing split's facts say
    // its share held no test; a runner's own split, a summary read that counted none.
    let empty_share = share
        && claimed.tests_executed == Some(0)
        && match claimed.sharded.as_ref().and_then(|s| s.split.as_ref()) {
            Some(split) => split.share == 0,
            None => claimed
                .test_counts
                .as_ref()
                .is_some_and(|c| c.passed == 0 && c.failed == 0),
        };
    if check.must_be_effective && claimed.gate_effective != Some(true) && !empty_share {
        why_not.push("the gate was not shown effective".to_owned());
    }
    // `min-tests` is a floor on what ran: a shard's share is judged on the union.
    if let Some(min) = check.min_tests
        && !share
    {
        match claimed.tests_executed {
            Some(ran) if ran >= min => {}
            Some(ran) => why_not.push(format!("it ran {ran} tests, fewer than min-tests {min}")),
            None => why_not.push(format!(
                "it shows no count of tests against min-tests {min}"
            )),
        }
    }
    // The runner's own report is evidence too: a test it lists as failed is not a pass
    // (whatever the exit code), nor, under `fail-on-flaky`, one that passed on a retry.
    let counts = claimed.test_counts.as_ref();
    if let Some(failed) = counts.map(|c| c.failed).filter(|n| *n > 0)
        && claimed.tests.is_some()
        && !held.all_held
        && matches!(check.expect, ExpectExit::Code(_))
    {
        let tests = if failed == 1 { "test" } else { "tests" };
        why_not.push(format!("its report lists {failed} failed {tests}"));
    }
    if let Some(flaky) = counts.map(|c| c.flaky).filter(|n| *n > 0)
        && check.fail_on_flaky
    {
        why_not.push(format!(
            "{flaky} of its tests passed only on a retry, and fail-on-flaky is set"
        ));
    }
    why_not.extend(held.refused.iter().cloned());
    if claimed.timed_out {
        why_not.push("it timed out".to_owned());
    }
    if !claimed.leaked.is_empty() {
        why_not.push("it left processes running".to_owned());
    }
    if claimed.refused.is_some() {
        why_not.push("it was refused".to_owned());
    }
    if let Some(why) = group_not_passed(&check.kind, &claimed.items) {
        why_not.push(why);
    }
    why_not
}

/// Why a group did not pass by its items, item by item as the manifest defines them
/// (a group that records none shows nothing passed): an `all-of` with an automated item that is not recorded as
/// passed, an `any-of` with none that is (manual items are a person's to judge, and the
/// run leaves them out of both). Nested groups are judged the same way.
fn group_not_passed(kind: &CheckKind, items: &[ItemResult]) -> Option<String> {
    let (defined, all) = match kind {
        CheckKind::AllOf(defined) => (defined, true),
        CheckKind::AnyOf(defined) => (defined, false),
        _ => return None,
    };
    // A group's result is its items: one that records none shows nothing passed.
    if items.is_empty() {
        return Some("it records none of its items".to_owned());
    }
    let passed = |item: &Check| {
        items.iter().any(|r| {
            r.item == item.id.as_str()
                && r.status == Status::Pass
                // A command's pass is its exit code's, as the item expects it.
                && (!matches!(item.kind, CheckKind::Run(_) | CheckKind::Test(_))
                    || r.exit_code.is_some_and(|code| item.expect.accepts(code)))
                && group_not_passed(&item.kind, &r.items).is_none()
        })
    };
    let mut automated = defined.iter().filter(|i| !i.kind.is_manual());
    if all {
        automated
            .find(|i| !passed(i))
            .map(|i| format!("its item `{}` did not pass", i.id))
    } else {
        (!automated.any(passed)).then(|| "none of its items passed".to_owned())
    }
}

fn describe_code(code: Option<i32>) -> String {
    code.map_or_else(|| "none (expect: failure)".to_owned(), |c| c.to_string())
}
