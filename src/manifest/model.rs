//! The validated manifest: what every later stage works from.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use super::raw::{Gate, ReportPattern, Shell, Split};

/// A check's id: `[A-Za-z0-9][A-Za-z0-9._-]*`, unique in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CheckId(pub String);

/// An environment's name: `[A-Za-z0-9][A-Za-z0-9._-]*`, not `ALL`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EnvName(pub String);

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The longest check id or environment name: they name log files (`logs/<env>/<id>.log`),
/// which file systems cap at 255 bytes.
pub const MAX_NAME_CHARS: usize = 100;

/// `[A-Za-z0-9][A-Za-z0-9._-]*`, at most [`MAX_NAME_CHARS`] long.
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= MAX_NAME_CHARS
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

impl fmt::Display for EnvName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl CheckId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl EnvName {
    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A validated manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The file, as it should be shown and recorded (relative where possible).
    pub path: PathBuf,
    /// The folder `cwd:` values are relative to.
    pub dir: PathBuf,
    /// `sha256:` + hex of the canonical JSON form.
    pub digest: String,
    /// The content as JSON (embedded in result files).
    pub content: serde_json::Value,
    pub environments: Vec<Environment>,
    pub checks: Vec<Check>,
    pub defaults: Defaults,
    pub run_timeout: Option<Duration>,
    pub policy: Policy,
    /// More secrets to mask (`redact:`).
    pub redact: Redact,
    pub skip: bool,
    /// Which failures fail the run when compared with a baseline.
    pub fail_on: FailOn,
    /// What the coding-agent Stop hook runs.
    pub hook: Hook,
    /// What the history keeps (`history:`): `None` where the manifest does not say.
    pub history: HistoryKeep,
}

/// The manifest's `history:`: each limit, where it sets one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistoryKeep {
    pub keep_runs: Option<u64>,
    pub keep_days: Option<u64>,
}

/// The manifest's `fail-on`: compared with a baseline, which failures fail the run.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum FailOn {
    /// Every failure (the default, and the rule without a baseline).
    #[default]
    Any,
    /// Only failures the baseline did not have: a report whose failures all failed on
    /// the base too exits 0 with a neutral check run, its verdict still NOT VERIFIED.
    New,
}

impl FailOn {
    /// As the manifest spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Any => "any",
            FailOn::New => "new",
        }
    }
}

/// The most blocks in a row the Stop hook makes in one agent session, unless the
/// manifest's `hook.max-blocks` says otherwise.
pub const DEFAULT_MAX_BLOCKS: u32 = 3;

/// The manifest's `hook:` section: the checks and environments an agent's Stop hook
/// runs (empty: as `run` chooses), and when it stops blocking.
#[derive(Debug, Clone)]
pub struct Hook {
    pub checks: Vec<CheckId>,
    pub environments: Vec<EnvName>,
    pub max_blocks: u32,
}

impl Default for Hook {
    fn default() -> Self {
        Hook {
            checks: Vec::new(),
            environments: Vec::new(),
            max_blocks: DEFAULT_MAX_BLOCKS,
        }
    }
}

/// Values every check falls back to.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    pub shell: Option<Shell>,
    pub env: BTreeMap<String, String>,
}

/// The manifest's `redact:` section.
#[derive(Debug, Clone, Default)]
pub struct Redact {
    /// Variables whose values are masked.
    pub env: Vec<String>,
    /// Patterns whose every match is masked.
    pub patterns: Vec<regex::Regex>,
}

/// What commands may do.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub deny: Vec<regex::Regex>,
    pub allow_watch: bool,
}

/// One environment.
#[derive(Debug, Clone)]
pub struct Environment {
    pub name: EnvName,
    pub runs_on: Option<serde_json::Value>,
    pub container: Option<serde_json::Value>,
    pub env: BTreeMap<String, String>,
    pub shell: Option<Shell>,
    pub detect: Option<Detect>,
    /// How many ways its splitting checks are split (`shards:`; 1 when not sharded).
    pub shards: u32,
    /// How `run` gets into it from a machine that is not it (`enter:`).
    pub enter: Option<Enter>,
}

/// How `run` gets into an environment from a machine that is not it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enter {
    /// A program that runs the rest of its arguments inside (`enter.command`), its
    /// words as written (`{repo}` is replaced when it runs).
    Command(Vec<String>),
    /// A container started from an image (`enter.container`).
    Container {
        engine: Engine,
        image: String,
        options: Vec<String>,
    },
    /// A service of a Compose file (`enter.compose`), the file relative to the
    /// repository.
    Compose {
        engine: Engine,
        file: String,
        service: String,
    },
    /// A dev container (`enter.devcontainer`): its configuration file, relative to
    /// the repository.
    Devcontainer { config: String },
    /// A remote host (`enter.ssh`).
    Ssh {
        host: String,
        path: String,
        port: Option<u16>,
        options: Vec<String>,
    },
}

impl Enter {
    /// The way in's kind, as the manifest spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            Enter::Command(_) => "command",
            Enter::Container { .. } => "container",
            Enter::Compose { .. } => "compose",
            Enter::Devcontainer { .. } => "devcontainer",
            Enter::Ssh { .. } => "ssh",
        }
    }
}

/// A container engine's client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
}

impl Engine {
    /// Every engine, as the manifest spells them.
    pub const NAMES: [&'static str; 2] = ["docker", "podman"];

    /// The engine spelled `name`.
    pub fn from_name(name: &str) -> Option<Engine> {
        match name {
            "docker" => Some(Engine::Docker),
            "podman" => Some(Engine::Podman),
            _ => None,
        }
    }

    /// Its client program.
    pub fn program(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }
}

/// The placeholder of `enter.command` that stands for the repository's folder.
pub const REPO_PLACEHOLDER: &str = "{repo}";

/// Conditions recognising an environment; all given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detect {
    pub os: Option<String>,
    pub arch: Option<String>,
    pub env: BTreeMap<String, String>,
    pub file: Option<String>,
}

/// Which environments a check is required in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvScope {
    All,
    Only(Vec<EnvName>),
}

impl EnvScope {
    /// Whether the check applies to `env`.
    pub fn includes(&self, env: &EnvName) -> bool {
        match self {
            EnvScope::All => true,
            EnvScope::Only(names) => names.contains(env),
        }
    }
}

/// What exit makes a command check pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectExit {
    /// Exactly this code.
    Code(i32),
    /// Any non-zero code (`expect: failure`).
    Failure,
}

impl ExpectExit {
    /// Whether `code` satisfies the expectation. A failure is the command's own: the
    /// shell's "not executable" (126) and "not found" (127), and death by a signal
    /// (129–192), are not the failure a negative check expects.
    pub fn accepts(self, code: i32) -> bool {
        match self {
            ExpectExit::Code(want) => code == want,
            ExpectExit::Failure => code != 0 && !matches!(code, 126 | 127 | 129..=192),
        }
    }

    /// The code recorded as `required_exit_code` (none for `expect: failure`).
    pub fn required_code(self) -> Option<i32> {
        match self {
            ExpectExit::Code(c) => Some(c),
            ExpectExit::Failure => None,
        }
    }
}

/// What a `test:` check runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestSpec {
    /// Detected from the repository at run time.
    Auto,
    /// This command.
    Command(String),
}

/// A check's kind and its kind-specific settings.
#[derive(Debug, Clone)]
pub enum CheckKind {
    Run(String),
    Test(TestSpec),
    File {
        pattern: String,
        search: Vec<String>,
    },
    NotFile {
        pattern: String,
    },
    GitClean {
        path: String,
    },
    AllOf(Vec<Check>),
    AnyOf(Vec<Check>),
    Assert(String),
    Quality {
        criteria: String,
        pass_threshold: Option<f64>,
        scope: Option<String>,
    },
}

impl CheckKind {
    /// The manifest key of this kind, also the result's `kind`.
    pub fn key(&self) -> &'static str {
        match self {
            CheckKind::Run(_) => "run",
            CheckKind::Test(_) => "test",
            CheckKind::File { .. } => "file",
            CheckKind::NotFile { .. } => "not-file",
            CheckKind::GitClean { .. } => "git-clean",
            CheckKind::AllOf(_) => "all-of",
            CheckKind::AnyOf(_) => "any-of",
            CheckKind::Assert(_) => "assert",
            CheckKind::Quality { .. } => "quality",
        }
    }

    /// Manual items are listed for review and never executed: `assert`, `quality`, and a
    /// group of nothing else (it has nothing to run).
    pub fn is_manual(&self) -> bool {
        match self {
            CheckKind::Assert(_) | CheckKind::Quality { .. } => true,
            CheckKind::AllOf(items) | CheckKind::AnyOf(items) => {
                !items.is_empty() && items.iter().all(|i| i.kind.is_manual())
            }
            _ => false,
        }
    }

    /// A one-line description: the command, the pattern, or the manual text.
    pub fn describe(&self) -> String {
        match self {
            CheckKind::Run(cmd) => cmd.clone(),
            CheckKind::Test(TestSpec::Auto) => "auto".to_owned(),
            CheckKind::Test(TestSpec::Command(cmd)) => cmd.clone(),
            CheckKind::File { pattern, .. } | CheckKind::NotFile { pattern } => pattern.clone(),
            CheckKind::GitClean { path } => path.clone(),
            CheckKind::AllOf(items) | CheckKind::AnyOf(items) => items
                .iter()
                .map(|i| i.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            CheckKind::Assert(text) => text.clone(),
            CheckKind::Quality { criteria, .. } => criteria.clone(),
        }
    }
}

/// One validated check (or group item).
#[derive(Debug, Clone)]
pub struct Check {
    pub id: CheckId,
    pub name: Option<String>,
    pub kind: CheckKind,
    pub scope: EnvScope,
    pub expect: ExpectExit,
    pub gate: Gate,
    pub must_be_effective: bool,
    pub required: bool,
    pub timeout: Duration,
    pub grace: Duration,
    pub retries: u32,
    /// The runner's reports the command writes (paths or globs, relative to `cwd`, each
    /// with the format it is read in when the manifest names one).
    pub reports: Vec<ReportPattern>,
    /// The fewest tests a run must execute (`min-tests`).
    pub min_tests: Option<u64>,
    /// How many fewer tests than the baseline the gate may run, in percent
    /// (`tests-may-drop`, else `defaults.tests-may-drop`); see [`Check::drop_allowed`].
    pub tests_may_drop: Option<f64>,
    /// Relative to the manifest's folder.
    pub cwd: String,
    /// The check's own variables (defaults and the environment's come first).
    pub env: BTreeMap<String, String>,
    /// Set on the check itself; otherwise the environment's, then the default's, then bash.
    pub shell: Option<Shell>,
    /// The manifest line that defines the check (for annotations), when known.
    pub line: Option<usize>,
    /// How many ways it is split, whatever its environments say (`shards:`).
    pub shards: Option<u32>,
    /// How its runner takes a slice, when it is split (`split:`, or `runner` when its
    /// command has `{shard}`/`{shards}`); `None`: it always runs whole.
    pub split: Option<Split>,
    /// With `split: timing`: the command that lists the test ids.
    pub list: Option<String>,
    /// Its shards may run the same test (`shards-may-overlap: true`); else a test run
    /// in two shards fails the pair.
    pub shards_may_overlap: bool,
    /// A test that passed only on a retry fails the pair (`fail-on-flaky: true`).
    pub fail_on_flaky: bool,
    /// Tests whose failure does not fail the pair until a date (`quarantine:`).
    pub quarantine: Vec<Quarantine>,
}

/// One `quarantine:` entry, validated: its test (a label or a glob over labels), why,
/// until when, and who answers for it.
#[derive(Debug, Clone)]
pub struct Quarantine {
    /// As written: the test's label (`suite › name`) or a glob over labels.
    pub test: String,
    /// A glob's matcher; `None`: `test` is one label, matched exactly.
    pub glob: Option<globset::GlobMatcher>,
    pub reason: String,
    /// The last day the entry holds (UTC).
    pub until: chrono::NaiveDate,
    pub owner: Option<String>,
}

impl Quarantine {
    /// Whether the test labelled `label` (`suite › name`) is the entry's.
    pub fn matches(&self, label: &str) -> bool {
        match &self.glob {
            Some(glob) => glob.is_match(label),
            None => Quarantine::literal(&self.test) == label,
        }
    }

    /// Whether the entry no longer holds on `today`.
    pub fn expired(&self, today: chrono::NaiveDate) -> bool {
        today > self.until
    }

    /// Whether `test` is a glob (it has a `*` or `?` not escaped by a backslash), not
    /// one test's label. Nothing else is special: a label's `[`, `{` or `]` (pytest's
    /// parameters) are themselves.
    pub fn is_glob(test: &str) -> bool {
        let mut chars = test.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '*' | '?' => return true,
                _ => {}
            }
        }
        false
    }

    /// `test` with its escapes resolved (`\*` is `*`, `\?` is `?`, `\\` is `\`): the
    /// label a literal entry names.
    pub fn literal(test: &str) -> String {
        let mut out = String::with_capacity(test.len());
        let mut chars = test.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.push(chars.next().unwrap_or('\\')),
                c => out.push(c),
            }
        }
        out
    }

    /// The glob `test` spells (`*` any characters, `?` one, a backslash escaping the next
    /// character), every other character matched as itself.
    pub fn glob_pattern(test: &str) -> String {
        let mut out = String::with_capacity(test.len() + 8);
        let mut chars = test.chars();
        while let Some(c) = chars.next() {
            match c {
                '*' | '?' => out.push(c),
                '\\' => out.push_str(&globset::escape(&chars.next().unwrap_or('\\').to_string())),
                c => out.push_str(&globset::escape(&c.to_string())),
            }
        }
        out
    }

    /// `label` as an entry that names it and nothing else (its `*`, `?` and `\`
    /// escaped).
    pub fn escape(label: &str) -> String {
        let mut out = String::with_capacity(label.len());
        for c in label.chars() {
            if matches!(c, '*' | '?' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
        out
    }
}

/// Today (UTC): the day a quarantine's `until` is held to.
pub fn today() -> chrono::NaiveDate {
    chrono::Utc::now().date_naive()
}

/// Whether `pattern` can name report files: relative, inside the check's folder, a
/// valid glob.
pub fn report_pattern_problem(pattern: &str) -> Result<(), String> {
    if pattern.trim().is_empty() {
        return Err("it is empty".to_owned());
    }
    let path = std::path::Path::new(pattern);
    if path.is_absolute() || pattern.starts_with('/') || pattern.starts_with('\\') {
        return Err("it is absolute; give a path relative to the check's folder".to_owned());
    }
    if path
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return Err("`..` leaves the check's folder; reports are read inside it".to_owned());
    }
    globset::Glob::new(pattern).map_err(|e| format!("not a valid glob: {}", e.kind()))?;
    Ok(())
}

impl Check {
    /// How many fewer tests than the baseline a run may execute, in percent: the
    /// manifest's `tests-may-drop`, else none for a gate that must be effective, else
    /// no limit (`None`).
    pub fn drop_allowed(&self) -> Option<f64> {
        self.tests_may_drop
            .or((self.must_be_effective && self.gate == Gate::Test).then_some(0.0))
    }
}

/// The per-check timeout when neither the check nor `defaults` sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The SIGTERM → SIGKILL grace when none is set.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(10);

/// The placeholders a sharded check's command may hold, in the order they are listed.
pub const PLACEHOLDERS: [&str; 4] = ["{shard}", "{shards}", "{tests}", "{tests_file}"];

/// The placeholders in `command` (a shell's `${shard}` is the shell's own, not one).
pub fn placeholders_in(command: &str) -> Vec<&'static str> {
    PLACEHOLDERS
        .into_iter()
        .filter(|p| {
            command
                .match_indices(p)
                .any(|(at, _)| !command[..at].ends_with('$'))
        })
        .collect()
}

/// One shard of a sharded environment: leg `index` of `count` (`2/4`), as a result file
/// records it and `run --shard` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// From 1.
    pub index: u32,
    pub count: u32,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `K/N`: shard K (from 1) of N.
    fn from_str(text: &str) -> Result<Shard, String> {
        let (index, count) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not a shard: give K/N, shard K of N (`2/4`)"))?;
        let number = |part: &str| {
            part.trim().parse::<u32>().map_err(|_| {
                format!("`{text}` is not a shard: `{part}` is not a number; give K/N (`2/4`)")
            })
        };
        let (index, count) = (number(index)?, number(count)?);
        if count == 0 || count > MAX_SHARDS {
            return Err(format!(
                "`{text}`: the number of shards must be from 1 to {}",
                MAX_SHARDS
            ));
        }
        if index == 0 || index > count {
            return Err(format!(
                "`{text}`: there is no shard {index} of {count}; shards are numbered 1 to {count}"
            ));
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The name of this shard's files beside its environment's (`linux@2of4`): `@`
    /// is in no environment name, so no shard's files are another environment's.
    pub fn stem(environment: &str, shard: Option<Shard>) -> String {
        match shard {
            Some(s) => format!("{environment}@{}of{}", s.index, s.count),
            None => environment.to_owned(),
        }
    }
}

/// The most shards an environment or check is split into.
pub const MAX_SHARDS: u32 = 256;

impl Manifest {
    /// How many ways `check` is split in `env`: its own `shards`, else the
    /// environment's, when it says how its runner takes a slice; 1 (whole) otherwise.
    pub fn shards_of(&self, check: &Check, env: &Environment) -> u32 {
        if check.split.is_none() {
            return 1;
        }
        check.shards.unwrap_or(env.shards).max(1)
    }

    /// How many legs (runners) `env` takes: its `shards`, or more when a check of it
    /// asks for more of its own. 1 when it is not sharded.
    pub fn legs(&self, env: &Environment) -> u32 {
        self.checks_for(&env.name)
            .filter(|c| !c.kind.is_manual())
            .map(|c| self.shards_of(c, env))
            .chain([env.shards])
            .max()
            .unwrap_or(1)
            .max(1)
    }

    /// The environment called `name`.
    pub fn environment(&self, name: &str) -> Option<&Environment> {
        self.environments.iter().find(|e| e.name.as_str() == name)
    }

    /// The declared environment names, comma-separated (for messages).
    pub fn environment_list(&self) -> String {
        self.environments
            .iter()
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The checks that apply to `env`, in manifest order.
    pub fn checks_for<'a>(&'a self, env: &'a EnvName) -> impl Iterator<Item = &'a Check> + 'a {
        self.checks.iter().filter(move |c| c.scope.includes(env))
    }

    /// The shell a check runs under in `env`.
    pub fn shell_for(&self, check: &Check, env: &Environment) -> Shell {
        check
            .shell
            .or(env.shell)
            .or(self.defaults.shell)
            .unwrap_or(Shell::Bash)
    }

    /// The variables a check runs with in `env`: defaults, then the environment's, then
    /// the check's own.
    pub fn env_for(&self, check: &Check, env: &Environment) -> BTreeMap<String, String> {
        let mut vars = self.defaults.env.clone();
        vars.extend(env.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        vars.extend(check.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        vars
    }
}
