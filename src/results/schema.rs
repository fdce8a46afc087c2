//! The versioned on-disk formats: the partial result of one environment (docs/formats.md §2)
//! and one check's result (§4). Every field is always written, `null` when unknown.

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use super::parts::Parts;
use super::table::ChecksLayout;

/// The version written by this build: 2 records the machine's facts (`runner`); 3
/// writes `checks` as a table, each field's name once (see [`super::table`]).
pub const FORMAT_VERSION: u32 = 3;

/// The versions read: a format-1 result is read with its machine's facts unknown; any
/// version's `checks` is read as a list of objects or as a table.
pub const READ_VERSIONS: &[u32] = &[1, 2, FORMAT_VERSION];

/// A check's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Pass,
    Fail,
    Error,
    NotRun,
}

impl Status {
    /// The spelling in result files.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Error => "ERROR",
            Status::NotRun => "NOT_RUN",
        }
    }

    /// The status spelled `text` (as [`Status::as_str`] writes it).
    pub fn parse(text: &str) -> Option<Status> {
        [Status::Pass, Status::Fail, Status::Error, Status::NotRun]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// How the run of one environment ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every selected check was run (or deliberately not run, e.g. fail-fast).
    Complete,
    /// Stopped before the end; also what the file says while the run is still going, so
    /// a run that dies leaves a file that never claims completeness.
    Interrupted,
    /// The whole-run timeout expired.
    RunTimeout,
}

/// Which program wrote the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    /// This build.
    pub fn current() -> Tool {
        Tool {
            name: env!("CARGO_PKG_NAME").to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// The manifest a result was produced from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestRef {
    pub path: String,
    pub digest: String,
    /// The manifest content, so a merge can work without the file.
    pub content: EmbeddedManifest,
}

/// A manifest's content as a result file carries it: kept as the JSON text it was
/// read as (a few kilobytes per file, where a parsed tree is a hundred times that),
/// parsed only when it is the one a report is judged against.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EmbeddedManifest(Box<serde_json::value::RawValue>);

impl EmbeddedManifest {
    /// The content, parsed.
    pub fn value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_str(self.0.get())
    }
}

impl From<&serde_json::Value> for EmbeddedManifest {
    fn from(value: &serde_json::Value) -> EmbeddedManifest {
        // Serializing a `Value` cannot fail: its keys are strings.
        EmbeddedManifest(serde_json::value::to_raw_value(value).unwrap_or_else(|_| {
            serde_json::value::RawValue::from_string("null".to_owned()).unwrap_or_default()
        }))
    }
}

impl PartialEq for EmbeddedManifest {
    fn eq(&self, other: &EmbeddedManifest) -> bool {
        // One writer writes one text: the parse is for text written otherwise.
        self.0.get() == other.0.get() || self.value().ok() == other.value().ok()
    }
}

/// Where the run happened in version control and CI.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub repository: Option<String>,
    pub commit: Option<String>,
    pub pr: Option<u64>,
    pub run_id: Option<String>,
    /// The run's number in its workflow (`GITHUB_RUN_NUMBER`: `#128`), which people
    /// read; the id is what links and the API use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_number: Option<u64>,
    pub run_attempt: Option<u32>,
    pub job: Option<String>,
    /// What started the workflow run (`GITHUB_EVENT_NAME`: `push`, `pull_request`,
    /// `schedule`, …): only a push or schedule run of the base branch is a baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The branch or tag the run was for (`GITHUB_REF_NAME`; `N/merge` for a pull
    /// request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

/// The machine the run happened on: its facts, as the run found them (format 2; a
/// format-1 result has only `os`, `arch` and `hostname`, and its facts count as
/// unknown).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Runner {
    /// `linux`, `macos` or `windows`.
    pub os: String,
    /// As Rust names it: `x86_64`, `aarch64`.
    pub arch: String,
    pub hostname: String,
    /// The OS's own name (`Debian GNU/Linux 12 (bookworm)`, `macOS`, `Windows Server
    /// 2022 Datacenter`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_name: Option<String>,
    /// Its version (`12`, `14.5`, the Windows build `10.0.20348.2849`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_version: Option<String>,
    /// The kernel's release (`uname -r`), where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// The C library (`glibc 2.36`, `musl`), on Linux.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libc: Option<String>,
    /// Whether the run was inside a container (absent: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<bool>,
    /// The container's runtime, when inside one and it says (`docker`, `podman`,
    /// `kubernetes`, `lxc`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_runtime: Option<String>,
    /// A digest of the machine's own id (`/etc/machine-id`, the IOPlatformUUID, the
    /// Windows MachineGuid), salted: the same for every run on one machine, and it
    /// reveals nothing of the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// Under GitHub Actions, what the runner says of itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<ActionsRunner>,
    /// Under GitLab CI, the job and what its runner says of itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitlab: Option<GitLabJob>,
    /// The environment's `detect` rules on variables and files, each as it held where
    /// the run happened (`env NAME`, `file PATH`: never a variable's value).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub detected: std::collections::BTreeMap<String, bool>,
}

/// A list, or none when `null` (a table's row says so of a list its object leaves out).
fn empty_if_null<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// A result's `runner`, or unknown facts when it is not one.
fn facts_or_unknown<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Runner, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    // Facts given as anything but objects (a bare list of a record's values) are
    // malformed too.
    Ok(Runner::deserialize(super::objects::Objects(value)).unwrap_or_default())
}

/// What a GitHub Actions runner says of itself (its `RUNNER_*` and image variables).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionsRunner {
    /// `RUNNER_OS`: `Linux`, `Windows`, `macOS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// `RUNNER_ARCH`: `X64`, `ARM64`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// `RUNNER_NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `RUNNER_ENVIRONMENT`: `github-hosted` or `self-hosted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// `ImageOS` (`ubuntu24`, `win22`, `macos14`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_os: Option<String>,
    /// `ImageVersion` (`20241113.1.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_version: Option<String>,
    /// `GITHUB_JOB`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// `GITHUB_RUN_ATTEMPT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_attempt: Option<u32>,
}

/// What a GitLab CI job says of itself and its runner (its `CI_*` variables).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitLabJob {
    /// `CI_JOB_ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<u64>,
    /// `CI_JOB_NAME` (`leg: [linux, 1]` for a matrix job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_name: Option<String>,
    /// `CI_PIPELINE_ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline_id: Option<u64>,
    /// `CI_RUNNER_ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_id: Option<u64>,
    /// `CI_RUNNER_TAGS`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runner_tags: Vec<String>,
    /// `CI_RUNNER_DESCRIPTION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_description: Option<String>,
    /// `CI_JOB_IMAGE`: the image the job ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// `CI_COMMIT_SHA`: the commit the job checked out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

pub use crate::manifest::Shard;

/// The partial result of one environment's run (`verify-matrix-<env>.json`).
pub type PartialResult = PartialResultOf<Vec<Box<CheckResult>>>;

/// A partial result whose checks are `C`: [`PartialResult`], or its facts alone with
/// its checks counted ([`CountedChecks`]), which `merge` reads of a shard first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(serialize = "C: ChecksLayout", deserialize = "C: ChecksLayout"))]
pub struct PartialResultOf<C> {
    pub format_version: u32,
    pub tool: Tool,
    pub manifest: ManifestRef,
    pub environment: String,
    /// The shard of the environment this leg ran (`run --shard`); absent: the whole
    /// environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub source: Source,
    /// The machine's facts; missing or malformed, they are unknown (which no
    /// environment with an identity accepts), never an unreadable file.
    #[serde(default, deserialize_with = "facts_or_unknown")]
    pub runner: Runner,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub duration_ms: u64,
    pub outcome: Outcome,
    #[serde(
        serialize_with = "ChecksLayout::write",
        deserialize_with = "ChecksLayout::read"
    )]
    pub checks: C,
    /// Set when `merge` let this result's checks go after reading it (a shard's, held
    /// as its facts until its environment's shards are combined): where to read them
    /// again. Never in a file.
    #[serde(skip)]
    pub held: Option<Box<super::merge::Held>>,
}

impl<C> PartialResultOf<C> {
    /// Whether its run did not finish: its checks' results are in its journal, beside
    /// it, as much as in it.
    pub fn unfinished(&self) -> bool {
        self.finished_at.is_none() && self.outcome == Outcome::Interrupted
    }

    /// The same facts with `checks`.
    pub fn with_checks<D>(self, checks: D) -> PartialResultOf<D> {
        PartialResultOf {
            format_version: self.format_version,
            tool: self.tool,
            manifest: self.manifest,
            environment: self.environment,
            shard: self.shard,
            source: self.source,
            runner: self.runner,
            started_at: self.started_at,
            finished_at: self.finished_at,
            duration_ms: self.duration_ms,
            outcome: self.outcome,
            checks,
            held: self.held,
        }
    }
}

/// A result's `checks`, counted and not kept: each is still read as JSON (a table's
/// rows held to their columns' number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountedChecks(pub usize);

/// Test counts read from a test gate's log or from the runner's own report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCounts {
    /// Tests that passed, flaky ones included.
    pub passed: u64,
    /// Tests that failed or ended in an error.
    pub failed: u64,
    pub skipped: u64,
    /// What the counts were read from: a runner's log (`libtest`, `pytest`, …) or a
    /// report format (`junit`, `ctrf`, `go-test-json`, `trx`, `nunit`, `xunit`, `tap`, `jest-json`, `vitest-json`, `mocha-json`, `rspec-json`, `playwright-json`).
    pub runner: String,
    /// Of the passed tests, those that failed before they passed (a report's reruns).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flaky: u64,
    /// Of the failed tests, those the check's `quarantine:` holds back.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub quarantined: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How one test ended, as the runner's report says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestOutcome {
    Passed,
    Failed,
    Error,
    Skipped,
    /// Failed, then passed on a rerun.
    Flaky,
}

impl TestOutcome {
    /// The spelling in result files.
    pub fn as_str(self) -> &'static str {
        match self {
            TestOutcome::Passed => "passed",
            TestOutcome::Failed => "failed",
            TestOutcome::Error => "error",
            TestOutcome::Skipped => "skipped",
            TestOutcome::Flaky => "flaky",
        }
    }

    /// A failure or an error.
    pub fn is_failure(self) -> bool {
        matches!(self, TestOutcome::Failed | TestOutcome::Error)
    }
}

/// One test from the runner's own report (docs/formats.md §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    /// The suite or class name (`classname`, the package, the file); empty when none.
    pub suite: CompactString,
    pub name: CompactString,
    pub outcome: TestOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// For a failure: the message's first lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<CompactString>,
    /// For a failure: a bounded excerpt of what it printed (the stack trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// For a failure: where, relative to the manifest's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<CompactString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The test's identity when its `suite` and `name` as written here are not the
    /// runner's own (a report's strings are quoted for display): a digest of the
    /// runner's, see [`TestResult::identity`]. Absent when they are the runner's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<CompactString>,
    /// A failure the check's `quarantine:` holds back: shown, not counted against the
    /// pair.
    #[serde(default, skip_serializing_if = "is_false")]
    pub quarantined: bool,
    /// For a failure, what the history says of the test on the base branch (`known
    /// flaky: failed 4 of last 20 on main`, `also failing on main since abc1234`, `new:
    /// never failed before`); written by `merge` from its history, never taken from a
    /// result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<CompactString>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A test as people name it: `suite › name`, or the name alone when there is no suite
/// or the name already begins with it (jest-junit's default classname is the title:
/// `X › X` would say it twice).
pub fn test_label(suite: &str, name: &str) -> String {
    match suite_shown(suite, name) {
        "" => name.to_owned(),
        suite => format!("{suite} › {name}"),
    }
}

/// The suite as [`test_label`] shows it beside `name`: empty when it says nothing more.
pub fn suite_shown<'a>(suite: &'a str, name: &str) -> &'a str {
    if name.starts_with(suite) { "" } else { suite }
}

impl TestResult {
    /// What the test is, whatever it is displayed as: a digest of the runner's suite
    /// and name. Baselines compare these, never display names.
    pub fn identity(&self) -> CompactString {
        match &self.id {
            Some(id) => id.clone(),
            None => test_identity(&self.suite, &self.name),
        }
    }
}

/// The identity of the test `name` in `suite` (16 hex digits of a SHA-256).
pub fn test_identity(suite: &str, name: &str) -> CompactString {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update((suite.len() as u64).to_le_bytes());
    hasher.update(suite.as_bytes());
    hasher.update(name.as_bytes());
    let digest = hasher.finalize();
    let mut out = CompactString::default();
    for byte in &digest[..8] {
        use std::fmt::Write as _;
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// What the runner's own reports (`reports:`) said about a check's tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestReport {
    /// `junit`, `ctrf`, `go-test-json`, `tap`, `trx`, `nunit`, `xunit`, `jest-json`,
    /// `vitest-json`, `mocha-json`, `rspec-json` or `playwright-json` (the first file's,
    /// when they differ).
    pub format: CompactString,
    /// The files read, relative to the check's folder.
    pub files: Vec<CompactString>,
    /// The counts the log gave, kept beside the report's (which win) when there were any.
    pub log_counts: Option<TestCounts>,
    /// Every test, in report order (up to a bound: see `left_out`).
    pub cases: Vec<TestResult>,
    /// Tests counted but not listed, past the bound on listed tests.
    #[serde(default)]
    pub left_out: u64,
    /// The check's `quarantine:` entries, each with the tests it matched and the
    /// failures it held back (absent without a quarantine).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quarantine: Vec<QuarantineUse>,
}

/// One `quarantine:` entry of a check, and what it did in one pair (docs/formats.md §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuarantineUse {
    /// As the manifest writes it: a test's label or a glob over labels.
    pub test: CompactString,
    pub reason: CompactString,
    /// The last day it holds (`YYYY-MM-DD`).
    pub until: CompactString,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<CompactString>,
    /// Listed tests it matched, whatever their outcome (0: a renamed or deleted test,
    /// the entry can go).
    pub matched: u64,
    /// Of those, the failures it held back.
    pub held: u64,
    /// Past its `until`: it holds nothing back, and fails the pair.
    #[serde(default, skip_serializing_if = "is_false")]
    pub expired: bool,
}

/// A process left running after a check's command exited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leaked {
    pub pid: u32,
    pub command: String,
}

/// One check's result in one environment (docs/formats.md §4; also `exec`'s output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub command_id: CompactString,
    pub environment: CompactString,
    pub kind: CompactString,
    pub command: CompactString,
    pub cwd: CompactString,
    pub required: bool,
    pub must_be_effective: bool,
    pub gate_type: CompactString,
    pub status: Status,
    pub exit_code: Option<i32>,
    pub required_exit_code: Option<i32>,
    pub duration_ms: u64,
    pub log_path: Option<CompactString>,
    pub gate_effective: Option<bool>,
    pub tests_executed: Option<u64>,
    pub test_counts: Option<Box<TestCounts>>,
    pub ineffective_reason: Option<CompactString>,
    pub summary: CompactString,
    /// The whole of a cause the one-line `summary` had to cut (at most
    /// [`CAUSE_MAX_CHARS`] characters; absent when the summary says it all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<CompactString>,
    pub retryable: bool,
    pub attempts: u32,
    pub flaky: bool,
    pub timed_out: bool,
    pub leaked: Vec<Leaked>,
    pub refused: Option<CompactString>,
    /// An `all-of`/`any-of` group's items, each with its own result (absent on other
    /// kinds and in results written before groups recorded them; `null` in a table's
    /// row).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "empty_if_null"
    )]
    pub items: Vec<ItemResult>,
    /// The tests the runner's own reports list (`reports:`; absent without them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Box<TestReport>>,
    /// A split check: in a shard's result, the slice it ran and how the tests were
    /// split; in a merged report, each shard's part of the union (absent on a check
    /// that ran whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharded: Option<Box<Sharded>>,
}

/// What a split check's result says of its shards (docs/formats.md §4).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sharded {
    /// In a shard's own result: the slice it ran (shard k of the n the check is split
    /// into).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<Shard>,
    /// With `split: timing`: how the tests were split (every shard must agree).
    /// Boxed: a merged pair's `sharded` (256,000 of them at GitHub's largest matrix)
    /// has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Box<SplitFacts>>,
    /// In a merged report: each shard's part, in shard order.
    #[serde(default, skip_serializing_if = "Parts::is_empty")]
    pub parts: Parts,
    /// In a merged report: tests that ran in more than one shard (the split
    /// overlapped), as `suite › name`; at most [`OVERLAP_SHOWN`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlapped: Vec<CompactString>,
    /// How many tests ran in more than one shard (all of them, beyond those listed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub overlap_count: u64,
}

/// One test's latest recorded duration (from the history): what `split: timing`
/// splits by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestTiming {
    pub suite: CompactString,
    pub name: CompactString,
    pub duration_ms: u64,
}

/// The most overlapping tests a merged result names.
pub const OVERLAP_SHOWN: usize = 20;

/// How `split: timing` split a check's tests: every shard computes the split itself,
/// so every shard must have listed the same tests and split them the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitFacts {
    /// How many test ids `list:` printed.
    pub listed: u64,
    /// How many of them were this shard's share.
    pub share: u64,
    /// How many of them had a duration in the history.
    pub timed: u64,
    /// A digest of the listed ids (16 hex digits of a SHA-256).
    pub listed_digest: CompactString,
    /// A digest of the whole assignment of ids to shards.
    pub split_digest: CompactString,
}

/// One shard's part of a split check's merged result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardPart {
    pub shard: Shard,
    pub status: Status,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub tests_executed: Option<u64>,
    pub summary: CompactString,
    pub log_path: Option<PartLog>,
}

/// A shard's log path in a merged report: the folder (everything to its last `/`),
/// shared by every part of the shard whose logs it holds, and the name. A check split
/// four ways at GitHub's largest matrix has a million parts; each path whole is too long
/// to be held inline, its folder alone is the same for each of a shard's checks. Read
/// and written as the one string it is.
#[derive(Debug, Clone)]
pub struct PartLog {
    folder: Option<std::sync::Arc<str>>,
    name: CompactString,
}

impl PartLog {
    /// The path `folder` (everything to its last `/`) then `name`.
    pub fn split(folder: Option<std::sync::Arc<str>>, name: &str) -> PartLog {
        PartLog {
            folder,
            name: name.into(),
        }
    }

    /// Its two pieces, in order.
    fn pieces(&self) -> [&str; 2] {
        [self.folder.as_deref().unwrap_or(""), self.name.as_str()]
    }
}

impl std::fmt::Display for PartLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.pieces()
            .iter()
            .try_for_each(|piece| f.write_str(piece))
    }
}

impl PartialEq for PartLog {
    /// The same path, however it is split.
    fn eq(&self, other: &PartLog) -> bool {
        fn bytes(log: &PartLog) -> impl Iterator<Item = u8> + '_ {
            let [folder, name] = log.pieces();
            folder.bytes().chain(name.bytes())
        }
        let len = |log: &PartLog| log.pieces().iter().map(|p| p.len()).sum::<usize>();
        len(self) == len(other) && bytes(self).eq(bytes(other))
    }
}

impl Eq for PartLog {}

impl Serialize for PartLog {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PartLog {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<PartLog, D::Error> {
        Ok(PartLog {
            folder: None,
            name: CompactString::deserialize(deserializer)?,
        })
    }
}

impl CheckResult {
    /// A result of `check` in `environment` with every field filled from the check and
    /// nothing run yet: `status`, and `summary` made one short line.
    pub fn blank(
        check: &crate::manifest::Check,
        environment: &str,
        status: Status,
        summary: &str,
    ) -> CheckResult {
        let mut result = CheckResult {
            command_id: check.id.as_str().into(),
            environment: environment.into(),
            kind: check.kind.key().into(),
            command: check.kind.describe().into(),
            cwd: check.cwd.as_str().into(),
            required: check.required,
            must_be_effective: check.must_be_effective,
            gate_type: check.gate.as_str().into(),
            status,
            exit_code: None,
            required_exit_code: check.expect.required_code(),
            duration_ms: 0,
            log_path: None,
            gate_effective: None,
            tests_executed: None,
            test_counts: None,
            ineffective_reason: None,
            summary: CompactString::default(),
            cause: None,
            retryable: false,
            attempts: 0,
            flaky: false,
            timed_out: false,
            leaked: Vec::new(),
            refused: None,
            items: Vec::new(),
            tests: None,
            sharded: None,
        };
        result.say(summary);
        result
    }
}

/// One item of a group, as the group's result records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemResult {
    /// The item's name in its group (`item:`).
    pub item: CompactString,
    /// Its kind (`run`, `file`, `all-of`, `assert`, …).
    pub kind: CompactString,
    /// PASS, FAIL or ERROR; NOT_RUN for a manual item, which the group leaves out of
    /// its count.
    pub status: Status,
    pub exit_code: Option<i32>,
    pub summary: CompactString,
    pub log_path: Option<CompactString>,
    /// A nested group's own items.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<ItemResult>,
}

impl ItemResult {
    /// Calls `visit` on each of `items` and, after each group, on its own items, with
    /// the item's path of names below `parent` (`parent.group.item`).
    pub fn visit_mut(
        items: &mut [ItemResult],
        parent: &str,
        visit: &mut impl FnMut(&mut ItemResult, &str),
    ) {
        for item in items {
            let path = format!("{parent}.{}", item.item);
            visit(item, &path);
            ItemResult::visit_mut(&mut item.items, &path, visit);
        }
    }
}

/// How the summary of a check the run timeout stopped begins.
pub const RUN_TIMEOUT_STOP: &str = "stopped: the run timeout expired";

/// The longest `summary`, in characters.
pub const SUMMARY_MAX_CHARS: usize = 80;

/// The manifest path of a report made from runner report files (`report --files`): its
/// matrix is the files', and its comment's key.
pub const FILES_MANIFEST: &str = "report-files";

/// The `kind` of a pair read from a runner's report file (`report --files`): the
/// workflow's own command ran it, not a manifest's check.
pub const REPORTS_KIND: &str = "reports";

/// The longest `cause`, in characters: a readable paragraph, folded where it is shown.
pub const CAUSE_MAX_CHARS: usize = 1000;

/// `n` and the word for that many: `1 test`, `2 tests`, `0 tests`.
pub fn counted(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Makes `text` one line of at most [`SUMMARY_MAX_CHARS`] characters.
pub fn one_line_summary(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= SUMMARY_MAX_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(SUMMARY_MAX_CHARS - 1).collect();
    cut.push('…');
    cut
}

impl CheckResult {
    /// Says why in one line: `summary` is `text` on one line of at most
    /// [`SUMMARY_MAX_CHARS`]; when that had to cut it, `cause` keeps the whole line (up
    /// to [`CAUSE_MAX_CHARS`]).
    pub fn say(&mut self, text: &str) {
        self.summary = one_line_summary(text).into();
        self.cause = self
            .summary
            .ends_with('…')
            .then(|| whole_cause(text))
            .filter(|whole| whole.as_str() != self.summary.as_str());
    }

    /// Why it did not pass, whole: the cause the summary cut, else the summary.
    pub fn why(&self) -> &str {
        self.cause.as_deref().unwrap_or(&self.summary)
    }
}

/// `text` on one line of at most [`CAUSE_MAX_CHARS`] characters.
pub fn whole_cause(text: &str) -> CompactString {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= CAUSE_MAX_CHARS {
        return line.into();
    }
    let mut cut: String = line.chars().take(CAUSE_MAX_CHARS - 1).collect();
    cut.push('…');
    cut.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_cause_is_one_bounded_line() {
        assert_eq!(whole_cause("a\n  b"), "a b");
        let cause = whole_cause(&"x ".repeat(5000));
        assert_eq!(cause.chars().count(), CAUSE_MAX_CHARS);
        assert!(cause.ends_with('…'));
    }

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(one_line_summary("a\n  b"), "a b");
        let long = "x".repeat(200);
        let s = one_line_summary(&long);
        assert_eq!(s.chars().count(), 80);
        assert!(s.ends_with('…'));
    }

    #[test]
    fn a_test_is_named_without_its_suite_said_twice() {
        assert_eq!(test_label("calc", "adds"), "calc › adds");
        assert_eq!(test_label("", "adds"), "adds");
        // jest-junit's default classname is the title itself.
        assert_eq!(test_label("sum › adds", "sum › adds"), "sum › adds");
    }

    #[test]
    fn status_spelling() {
        assert_eq!(
            serde_json::to_string(&Status::NotRun).unwrap(),
            "\"NOT_RUN\""
        );
        assert_eq!(
            serde_json::to_string(&Outcome::RunTimeout).unwrap(),
            "\"run_timeout\""
        );
    }

    #[test]
    fn a_parts_log_path_is_one_string_its_folder_shared_with_the_environment_s() {
        use super::super::parts::{Folders, PartsWriter};
        let mut folders = Folders::default();
        let mut writer = PartsWriter::new(&mut folders);
        for path in [
            "e1@1of4/logs/e1@1of4/unit.log",
            "e1@1of4/logs/e1@1of4/lint.log",
            "e1@1of4/other/lint.log",
            "unit.log",
            "a\"b/c\nd.log",
        ] {
            let shard = Shard { index: 1, count: 4 };
            writer.push(shard, Status::Pass, Some(0), 1, None, "", Some(path));
        }
        let logs: Vec<PartLog> = writer
            .finish()
            .iter()
            .map(|part| part.log_path.unwrap())
            .collect();
        let [one, two, elsewhere, bare, hostile] = <[PartLog; 5]>::try_from(logs).unwrap();
        let (a, b) = (one.folder.as_ref().unwrap(), two.folder.as_ref().unwrap());
        assert!(
            std::sync::Arc::ptr_eq(a, b),
            "one folder for a shard's logs"
        );
        assert_eq!(elsewhere.to_string(), "e1@1of4/other/lint.log");
        assert_eq!(
            (bare.folder.as_deref(), bare.name.as_str()),
            (None, "unit.log")
        );
        // Written as the path, escaped as any string; read back as the same path.
        let json = serde_json::to_string(&vec![one.clone(), hostile.clone()]).unwrap();
        assert_eq!(json, r#"["e1@1of4/logs/e1@1of4/unit.log","a\"b/c\nd.log"]"#);
        let read: Vec<PartLog> = serde_json::from_str(&json).unwrap();
        assert_eq!(read, vec![one.clone(), hostile]);
        assert_ne!(read[0], two);
        // The same text split elsewhere is the same path; a prefix of it is not.
        let other_split = PartLog {
            folder: Some("e1@1of4/logs/".into()),
            name: "e1@1of4/unit.log".into(),
        };
        assert_eq!(other_split, one);
        let shorter = PartLog {
            folder: one.folder.clone(),
            name: "unit.lo".into(),
        };
        assert_ne!(shorter, one);
    }
}
