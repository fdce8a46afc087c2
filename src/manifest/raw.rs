//! The manifest as written: serde structs that mirror `verify-matrix.yml` one to one.
//!
//! Nothing here is interpreted; [`super::validate`] turns this into the typed model and
//! collects every problem. Scalars that accept more than one spelling (durations, the
//! environment selector, env values) have small hand-written visitors rather than
//! `#[serde(untagged)]`, which would replace a precise message with "did not match any
//! variant".

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// The whole manifest, version 1.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawManifest {
    /// The manifest format version: 1.
    #[schemars(extend("const" = 1))]
    pub version: u32,
    /// Where the checks must pass; the order is the column order everywhere.
    #[schemars(length(min = 1))]
    pub environments: Vec<RawEnvironment>,
    /// Settings every check takes unless it sets them itself.
    #[serde(default)]
    pub defaults: RawDefaults,
    /// A limit on the whole run of one environment.
    #[serde(default)]
    pub run_timeout: Option<RawDuration>,
    /// What commands may do.
    #[serde(default)]
    pub policy: RawPolicy,
    /// `true`: nothing runs, and the report says SKIPPED.
    #[serde(default)]
    pub skip: bool,
    /// Compared with a baseline, which failures fail the run: `any` (the default) or
    /// `new` (failures the base had too are accepted: exit 0, the verdict still NOT
    /// VERIFIED).
    #[serde(default)]
    pub fail_on: Option<super::model::FailOn>,
    /// What the coding-agent Stop hook (`hook claude-code`, `hook codex`) runs.
    #[serde(default)]
    pub hook: Option<RawHook>,
    /// More secrets to mask in everything written, besides the variables whose names say
    /// so and the known token formats.
    #[serde(default)]
    pub redact: Option<RawRedact>,
    /// What the verification history keeps after each import (`history add`, `history
    /// sync`) and what `history prune` keeps by default.
    #[serde(default)]
    pub history: Option<RawHistory>,
    /// The checks, in the order they run and are shown.
    #[serde(default)]
    pub checks: Vec<RawCheck>,
}

/// The top-level keys, in the order they are documented.
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "version",
    "environments",
    "defaults",
    "run-timeout",
    "policy",
    "skip",
    "fail-on",
    "hook",
    "redact",
    "history",
    "checks",
];

/// `history:` — the history's retention: a run goes only when no limit keeps it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawHistory {
    /// Keep the newest N runs; 0 keeps everything (default 200).
    #[serde(default)]
    pub keep_runs: Option<u64>,
    /// Keep the runs of the last D days; 0 keeps everything (default 90).
    #[serde(default)]
    pub keep_days: Option<u64>,
}

/// One environment (a column of the matrix, a job of the workflow matrix).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEnvironment {
    /// The environment's name; `ALL` is reserved.
    #[schemars(extend("pattern" = NAME_PATTERN, "maxLength" = super::model::MAX_NAME_CHARS))]
    pub name: String,
    /// The runner label, or list of labels, `plan --format github` gives the job. A
    /// GitHub-hosted label (`ubuntu-latest`, `windows-2022`, `macos-15`, …) also says
    /// what machine the environment is: its results must come from one.
    #[serde(default)]
    #[schemars(schema_with = "runs_on_schema")]
    pub runs_on: Option<serde_json::Value>,
    /// The job's container: an image name, or a mapping with `image`. The checks must
    /// then run inside a container.
    #[serde(default)]
    #[schemars(schema_with = "container_schema")]
    pub container: Option<serde_json::Value>,
    /// Variables set for every check in this environment.
    #[serde(default)]
    pub env: Option<BTreeMap<String, EnvValue>>,
    /// The default shell in this environment.
    #[serde(default)]
    pub shell: Option<Shell>,
    /// How `run` recognises this environment; all conditions given must hold, on any
    /// machine that runs it. An environment without `runs-on`, `container` or `detect`
    /// is a variant: any machine may be it.
    #[serde(default)]
    pub detect: Option<RawDetect>,
    /// How many runners (legs) share this environment: each check of it that says how
    /// its runner takes a slice (`{shard}`, `{shards}` or `split:`) is split this many
    /// ways; the others run whole, in shard 1.
    #[serde(default)]
    #[schemars(range(min = 1, max = 256))]
    pub shards: Option<u32>,
    /// How `run` gets into this environment from a machine that is not it: the checks
    /// then run inside it. Ignored by `plan --format github` (on GitHub each environment
    /// is its own job).
    #[serde(default)]
    pub enter: Option<RawEnter>,
}

/// `enter:` — how to get into an environment from a machine that is not it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEnter {
    /// A program that runs the rest of its arguments inside the environment, as a list
    /// of words (`["bwrap", "--ro-bind", "/", "/", "--bind", "{repo}", "{repo}", "--"]`):
    /// the tool appends its own command. `{repo}` is the repository's folder, which
    /// must be reachable inside at the same path (the results are written there).
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// A container started from an image for the run (`docker run` / `podman run`),
    /// the repository mounted at its own path and this tool's binary mounted in.
    #[serde(default)]
    pub container: Option<RawEnterContainer>,
    /// A service of a Compose file, run for the run (`docker compose run`), the
    /// repository mounted at its own path.
    #[serde(default)]
    pub compose: Option<RawEnterCompose>,
    /// A dev container (`devcontainer up` / `devcontainer exec`): the folder whose
    /// `.devcontainer/devcontainer.json` (or `.devcontainer.json`) describes it, or
    /// that file, relative to the manifest's repository.
    #[serde(default)]
    pub devcontainer: Option<String>,
    /// A remote host over ssh: the repository's files are copied to `path` there,
    /// with this tool's binary, and the results are brought back.
    #[serde(default)]
    pub ssh: Option<RawEnterSsh>,
}

/// `enter.container:` — a container started from an image.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEnterContainer {
    /// The container engine's client: `docker` (the default) or `podman`.
    #[serde(default)]
    #[schemars(extend("enum" = ["docker", "podman"]))]
    pub engine: Option<String>,
    /// The image; the default is the environment's `container`.
    #[serde(default)]
    pub image: Option<String>,
    /// More options for `run`, before the image (`["--network", "none"]`).
    #[serde(default)]
    pub options: Vec<String>,
}

/// `enter.compose:` — a service of a Compose file.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEnterCompose {
    /// The Compose file, relative to the repository; the default is the first of
    /// `compose.yaml`, `compose.yml`, `docker-compose.yaml`, `docker-compose.yml`.
    #[serde(default)]
    pub file: Option<String>,
    /// The service the checks run in.
    pub service: String,
    /// The container engine's client: `docker` (the default) or `podman`.
    #[serde(default)]
    #[schemars(extend("enum" = ["docker", "podman"]))]
    pub engine: Option<String>,
}

/// `enter.ssh:` — a remote host.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEnterSsh {
    /// The host, as `ssh` takes it (`ci-arm-1`, `user@host`, a `Host` of ssh_config).
    pub host: String,
    /// The absolute path of the folder on the host the repository's files are copied to.
    pub path: String,
    /// The port, when not ssh's default.
    #[serde(default)]
    pub port: Option<u16>,
    /// More options for `ssh` (`["-i", "~/.ssh/ci"]`).
    #[serde(default)]
    pub options: Vec<String>,
}

/// Conditions that recognise the environment `run` is in; all given must hold.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDetect {
    /// The operating system: `linux`, `macos` or `windows`.
    #[serde(default)]
    #[schemars(extend("enum" = ["linux", "macos", "windows"]))]
    pub os: Option<String>,
    /// The CPU architecture, as Rust names it (`x86_64`, `aarch64`, `x86`, `arm`,
    /// `riscv64`, `powerpc64`, `s390x`, `loongarch64`); `x64`/`amd64` mean `x86_64`,
    /// `arm64` means `aarch64`.
    #[serde(default)]
    pub arch: Option<String>,
    /// Variables that must equal these values (`"*"`: be set).
    #[serde(default)]
    pub env: Option<BTreeMap<String, EnvValue>>,
    /// A path that must exist.
    #[serde(default)]
    pub file: Option<String>,
}

/// Defaults applied to every check that does not set the key itself.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDefaults {
    /// The shell commands run under.
    #[serde(default)]
    pub shell: Option<Shell>,
    /// The time limit of one check.
    #[serde(default)]
    pub timeout: Option<RawDuration>,
    /// How long a timed-out check has between SIGTERM and SIGKILL.
    #[serde(default)]
    pub grace: Option<RawDuration>,
    /// How many times a failing check is run again.
    #[serde(default)]
    pub retries: Option<u32>,
    /// Whether a failure makes the verdict NOT VERIFIED.
    #[serde(default)]
    pub required: Option<bool>,
    /// The working folder, relative to the manifest's folder.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Variables set for every check.
    #[serde(default)]
    pub env: Option<BTreeMap<String, EnvValue>>,
    /// How many fewer tests than the baseline a test gate may run (`5%`).
    #[serde(default)]
    pub tests_may_drop: Option<RawPercent>,
    /// `true`: a test that passed only on a retry (flaky) fails its pair.
    #[serde(default)]
    pub fail_on_flaky: Option<bool>,
}

/// A percentage: `5%`, `12.5%`, or a number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawPercent(pub f64);

impl<'de> Deserialize<'de> for RawPercent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PercentVisitor;
        impl Visitor<'_> for PercentVisitor {
            type Value = RawPercent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a percentage such as \"5%\" or 5")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawPercent, E> {
                Ok(RawPercent(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawPercent, E> {
                Ok(RawPercent(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawPercent, E> {
                Ok(RawPercent(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawPercent, E> {
                v.trim()
                    .trim_end_matches('%')
                    .trim()
                    .parse()
                    .map(RawPercent)
                    .map_err(|_| {
                        E::custom(format!("`{v}` is not a percentage (write e.g. \"5%\")"))
                    })
            }
        }
        deserializer.deserialize_any(PercentVisitor)
    }
}

/// What commands may do.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPolicy {
    /// Regular expressions; a command matching one is refused.
    #[serde(default)]
    pub deny: Vec<String>,
    /// `true` lets development servers and watch modes run.
    #[serde(default)]
    pub allow_watch: bool,
}

/// More secrets to mask: variables whose values are secrets, and patterns.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawRedact {
    /// Names of variables whose values are masked (whatever the names say).
    #[serde(default)]
    pub env: Vec<String>,
    /// Regular expressions whose every match is masked.
    #[serde(default)]
    pub patterns: Vec<String>,
}

/// The Stop hook's share of the manifest: a fast subset for an agent's every stop.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawHook {
    /// The checks the hook runs (default: every check).
    #[serde(default)]
    pub checks: Option<Vec<String>>,
    /// The environments the hook runs (default: as `run` chooses them).
    #[serde(default)]
    pub environments: Option<Vec<String>>,
    /// Blocks in a row, in one agent session, after which the stop is let through
    /// (saying so); default 3.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub max_blocks: Option<u32>,
}

/// One check, or (with `item:` instead of `id:`) one item of an `all-of`/`any-of` group.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCheck {
    /// The check's id: unique, and what results and signals name it by.
    #[serde(default)]
    #[schemars(extend("pattern" = NAME_PATTERN, "maxLength" = super::model::MAX_NAME_CHARS))]
    pub id: Option<String>,
    /// The id of an item inside `all-of` or `any-of` (instead of `id`).
    #[serde(default)]
    #[schemars(extend("pattern" = NAME_PATTERN, "maxLength" = super::model::MAX_NAME_CHARS))]
    pub item: Option<String>,
    /// A name for people.
    #[serde(default)]
    pub name: Option<String>,

    // The kinds: exactly one must be present.
    /// A command; passes on the required exit code.
    #[serde(default)]
    pub run: Option<String>,
    /// A test command, or `auto` to detect it; a test gate that must really run tests.
    #[serde(default)]
    pub test: Option<String>,
    /// A path or glob that must match at least one path.
    #[serde(default)]
    pub file: Option<String>,
    /// A path or glob that must match nothing.
    #[serde(default)]
    pub not_file: Option<String>,
    /// A folder that must have no uncommitted changes and no untracked, non-ignored files.
    #[serde(default)]
    pub git_clean: Option<String>,
    /// Items (inline checks with `item:`) that must all pass.
    #[serde(default)]
    pub all_of: Option<Vec<RawCheck>>,
    /// Items (inline checks with `item:`) of which one must pass.
    #[serde(default)]
    pub any_of: Option<Vec<RawCheck>>,
    /// A statement a person confirms; listed for review, never executed.
    #[serde(default)]
    pub assert: Option<String>,
    /// A judged quality criterion; listed for review, never executed.
    #[serde(default)]
    pub quality: Option<RawQuality>,

    /// Folders tried in turn for a relative `file` or `not-file` path.
    #[serde(default)]
    pub search: Option<Vec<String>>,
    /// Where the check applies: `ALL` (the default), a name, or a list of names.
    #[serde(default)]
    pub environment: Option<EnvSelector>,
    /// The exit code that passes (default 0).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// `failure`: passes on any non-zero exit code.
    #[serde(default)]
    pub expect: Option<Expect>,
    /// What kind of gate the check is; decides how effectiveness is judged.
    #[serde(default)]
    pub gate: Option<Gate>,
    /// Whether a green run must show it did its work (default true for `test`).
    #[serde(default)]
    pub must_be_effective: Option<bool>,
    /// Whether a failure makes the verdict NOT VERIFIED (default true).
    #[serde(default)]
    pub required: Option<bool>,
    /// The time limit of the check.
    #[serde(default)]
    pub timeout: Option<RawDuration>,
    /// How long a timed-out check has between SIGTERM and SIGKILL.
    #[serde(default)]
    pub grace: Option<RawDuration>,
    /// How many times a failing check is run again.
    #[serde(default)]
    pub retries: Option<u32>,
    /// The test reports the command writes (JUnit, TRX, NUnit or xUnit.net XML, CTRF,
    /// Jest, Vitest, Mocha, RSpec or Playwright JSON, `go test -json`, TAP): a path or glob, or a list of
    /// them, relative to the check's folder.
    #[serde(default)]
    pub reports: Option<RawPaths>,
    /// The fewest tests a run must execute; fewer make the gate ineffective.
    #[serde(default)]
    pub min_tests: Option<u64>,
    /// How many fewer tests than the baseline a test gate may run (`5%`; default 0 for
    /// a gate that must be effective).
    #[serde(default)]
    pub tests_may_drop: Option<RawPercent>,
    /// `true`: a test that passed only on a retry (flaky, by the runner's report or
    /// log) fails the pair. Default `false` (`defaults.fail-on-flaky`).
    #[serde(default)]
    pub fail_on_flaky: Option<bool>,
    /// The working folder, relative to the manifest's folder.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Variables set for this check.
    #[serde(default)]
    pub env: Option<BTreeMap<String, EnvValue>>,
    /// The shell the command runs under.
    #[serde(default)]
    pub shell: Option<Shell>,
    /// How many ways this check is split in every environment it runs in (instead of
    /// the environment's `shards`).
    #[serde(default)]
    #[schemars(range(min = 1, max = 256))]
    pub shards: Option<u32>,
    /// How the check's runner takes its slice of the tests: `runner` (the command's
    /// `{shard}`/`{shards}` or `VERIFY_MATRIX_SHARD`/`VERIFY_MATRIX_SHARDS`), or
    /// `timing` (the tool splits the tests `list` prints by their durations in the
    /// history, and passes the shard's share as `{tests}`/`{tests_file}`).
    #[serde(default)]
    pub split: Option<Split>,
    /// With `split: timing`: the command that prints the runner's test ids, one per
    /// line (`pytest --collect-only -q`, `npx jest --listTests`).
    #[serde(default)]
    pub list: Option<String>,
    /// A split check whose shards may run the same test (a runner that repeats its
    /// setup tests in every shard): without it, a test that ran in two shards fails
    /// the pair (the split overlapped, so the shards prove less than their count).
    #[serde(default)]
    pub shards_may_overlap: Option<bool>,
    /// Tests whose failure does not fail the check until a date: each still runs and
    /// is still shown, marked quarantined. Needs `reports` (a test is known by its
    /// runner's report).
    #[serde(default)]
    pub quarantine: Option<Vec<RawQuarantine>>,
}

/// One `quarantine:` entry: the test (or a glob over tests), why, until when, and who
/// answers for it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawQuarantine {
    /// The test as the comment shows it (`suite › name`), or a glob over that
    /// (`*` any characters, `?` one).
    pub test: String,
    /// Why it is quarantined (required: a quarantine nobody can explain is not one).
    #[serde(default)]
    pub reason: Option<String>,
    /// The last day it holds (`YYYY-MM-DD`, UTC); after it the entry fails the check.
    #[serde(default)]
    pub until: Option<String>,
    /// Who answers for getting it out.
    #[serde(default)]
    pub owner: Option<String>,
}

/// `split:` — how a sharded check's runner takes its slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// The runner splits its own tests: `{shard}`/`{shards}` in the command, or the
    /// variables `VERIFY_MATRIX_SHARD`/`VERIFY_MATRIX_SHARDS`.
    Runner,
    /// The tool splits the tests `list:` prints by the history's per-test durations.
    Timing,
}

impl Split {
    /// The manifest spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Runner => "runner",
            Split::Timing => "timing",
        }
    }
}

/// The kind keys of a check, in documented order.
pub const KIND_KEYS: &[&str] = &[
    "run",
    "test",
    "file",
    "not-file",
    "git-clean",
    "all-of",
    "any-of",
    "assert",
    "quality",
];

impl RawCheck {
    /// The kind keys present in this check, in documented order.
    pub fn kinds_present(&self) -> Vec<&'static str> {
        let present = [
            self.run.is_some(),
            self.test.is_some(),
            self.file.is_some(),
            self.not_file.is_some(),
            self.git_clean.is_some(),
            self.all_of.is_some(),
            self.any_of.is_some(),
            self.assert.is_some(),
            self.quality.is_some(),
        ];
        KIND_KEYS
            .iter()
            .zip(present)
            .filter_map(|(key, here)| here.then_some(*key))
            .collect()
    }
}

/// A manual judgment item: listed for review, never executed.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawQuality {
    /// What is judged.
    pub criteria: String,
    /// The score that passes.
    #[serde(default)]
    pub pass_threshold: Option<f64>,
    /// What the judgment covers.
    #[serde(default)]
    pub scope: Option<String>,
}

/// The shell a command runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    /// `bash --noprofile --norc -eo pipefail -c CMD`, as GitHub Actions runs `run:` steps.
    Bash,
    /// `sh -ec CMD`.
    Sh,
    /// `pwsh -NoLogo -NoProfile -NonInteractive -Command CMD` (PowerShell 7), as GitHub
    /// Actions wraps it: errors stop the command, the last program's exit code is the
    /// check's.
    Pwsh,
    /// `powershell -NoLogo -NoProfile -NonInteractive -Command CMD` (Windows PowerShell
    /// 5.1), wrapped as `pwsh` is.
    Powershell,
    /// `cmd /D /S /C "CMD"`, the command passed to cmd.exe as written.
    Cmd,
    /// No shell: the command is split into words and executed directly.
    None,
}

impl Shell {
    /// The manifest spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Sh => "sh",
            Shell::Pwsh => "pwsh",
            Shell::Powershell => "powershell",
            Shell::Cmd => "cmd",
            Shell::None => "none",
        }
    }
}

/// What kind of gate a check is; decides how effectiveness is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    Test,
    Typecheck,
    Lint,
    Build,
    Format,
    #[default]
    Custom,
}

impl Gate {
    /// The manifest and result spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Test => "test",
            Gate::Typecheck => "typecheck",
            Gate::Lint => "lint",
            Gate::Build => "build",
            Gate::Format => "format",
            Gate::Custom => "custom",
        }
    }
}

/// `expect:` — what outcome passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// Passes on the required exit code (the default).
    Success,
    /// Passes on any non-zero exit code.
    Failure,
}

/// A duration: humantime text (`90s`, `10m`, `1h 30m`) or an integer number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawDuration(pub Duration);

impl<'de> Deserialize<'de> for RawDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DurationVisitor;
        impl Visitor<'_> for DurationVisitor {
            type Value = RawDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as \"90s\" or \"10m\", or a number of seconds")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDuration, E> {
                Ok(RawDuration(Duration::from_secs(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDuration, E> {
                u64::try_from(v)
                    .map(|secs| RawDuration(Duration::from_secs(secs)))
                    .map_err(|_| E::custom(format!("a duration cannot be negative, got {v}")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawDuration, E> {
                humantime::parse_duration(v.trim())
                    .map(RawDuration)
                    .map_err(|e| {
                        E::custom(format!(
                            "invalid duration `{v}`: {e} (write e.g. \"90s\", \"10m\", \"1h\")"
                        ))
                    })
            }
        }
        deserializer.deserialize_any(DurationVisitor)
    }
}

/// `environment:` — `ALL`, one name, or a list of names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSelector(pub Vec<String>);

impl<'de> Deserialize<'de> for EnvSelector {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        one_or_many(
            deserializer,
            "ALL, an environment name, or a list of environment names",
        )
        .map(EnvSelector)
    }
}

/// `reports:` — a path or glob, or a list of them, relative to the check's folder; each
/// may be `{ path, format }` to name the format it is read in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawPaths(pub Vec<ReportPattern>);

/// Report files a check's command writes: a path or glob relative to the check's folder,
/// and the format they are read in when the manifest names one (else the content tells).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportPattern {
    pub path: String,
    pub format: Option<super::ReportFormat>,
}

impl ReportPattern {
    /// Files read in whatever format their content shows.
    pub fn any(path: impl Into<String>) -> ReportPattern {
        ReportPattern {
            path: path.into(),
            format: None,
        }
    }
}

impl<'de> Deserialize<'de> for ReportPattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The mapping's spelling: `{ path, format }`, nothing else.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Spelled {
            path: String,
            #[serde(default, deserialize_with = "format_name")]
            format: Option<super::ReportFormat>,
        }
        /// The format's name, refused where it is written when no format has it.
        fn format_name<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<super::ReportFormat>, D::Error> {
            let name = String::deserialize(deserializer)?;
            name.parse().map(Some).map_err(de::Error::custom)
        }
        struct PatternVisitor;
        impl<'de> Visitor<'de> for PatternVisitor {
            type Value = ReportPattern;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a path or glob, or `{ path, format }`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ReportPattern, E> {
                Ok(ReportPattern::any(v))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<ReportPattern, A::Error> {
                let spelled = Spelled::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(ReportPattern {
                    path: spelled.path,
                    format: spelled.format,
                })
            }
        }
        deserializer.deserialize_any(PatternVisitor)
    }
}

impl<'de> Deserialize<'de> for RawPaths {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PathsVisitor;
        impl<'de> Visitor<'de> for PathsVisitor {
            type Value = Vec<ReportPattern>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a path or glob, `{ path, format }`, or a list of them")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(vec![ReportPattern::any(v)])
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                ReportPattern::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|one| vec![one])
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut all = Vec::new();
                while let Some(one) = seq.next_element::<ReportPattern>()? {
                    all.push(one);
                }
                Ok(all)
            }
        }
        deserializer.deserialize_any(PathsVisitor).map(RawPaths)
    }
}

/// A string, or a list of strings, as a list.
fn one_or_many<'de, D: Deserializer<'de>>(
    deserializer: D,
    expecting: &'static str,
) -> Result<Vec<String>, D::Error> {
    struct OneOrMany(&'static str);
    impl<'de> Visitor<'de> for OneOrMany {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.0)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<String>, E> {
            Ok(vec![v.to_owned()])
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut all = Vec::new();
            while let Some(one) = seq.next_element::<String>()? {
                all.push(one);
            }
            Ok(all)
        }
    }
    deserializer.deserialize_any(OneOrMany(expecting))
}

/// An environment variable's value: YAML lets people write `1` or `true` unquoted, and
/// the environment only holds text, so scalars are taken as their text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvValue(pub String);

impl<'de> Deserialize<'de> for EnvValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValueVisitor;
        impl Visitor<'_> for ValueVisitor {
            type Value = EnvValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_owned()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_string()))
            }
        }
        deserializer.deserialize_any(ValueVisitor)
    }
}

/// What environment and check names look like (`ALL` is reserved; validation says so).
const NAME_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]*$";

fn runs_on_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "The runner label, or list of labels, `plan --format github` gives the job.",
        "anyOf": [
            { "type": "string" },
            { "type": "array", "items": { "type": "string" }, "minItems": 1 },
            { "type": "null" }
        ]
    })
}

fn container_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "The job's container: an image name, or a mapping with `image`.",
        "anyOf": [
            { "type": "string" },
            { "type": "object", "required": ["image"], "properties": { "image": { "type": "string" } } },
            { "type": "null" }
        ]
    })
}
