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

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// The whole manifest, version 1.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawManifest {
    pub version: u32,
    pub environments: Vec<RawEnvironment>,
    #[serde(default)]
    pub defaults: RawDefaults,
    #[serde(default)]
    pub run_timeout: Option<RawDuration>,
    #[serde(default)]
    pub policy: RawPolicy,
    #[serde(default)]
    pub skip: bool,
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
    "checks",
];

/// One environment (a column of the matrix, a job of the workflow matrix).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEnvironment {
    pub name: String,
    #[serde(default)]
    pub runs_on: Option<serde_json::Value>,
    #[serde(default)]
    pub container: Option<serde_json::Value>,
    #[serde(default)]
    pub env: Option<BTreeMap<String, EnvValue>>,
    #[serde(default)]
    pub shell: Option<Shell>,
    #[serde(default)]
    pub detect: Option<RawDetect>,
}

/// Conditions that recognise the environment `run` is in; all given must hold.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDetect {
    #[serde(default)]
    pub os: Option<String>,
    #[serde(default)]
    pub arch: Option<String>,
    #[serde(default)]
    pub env: Option<BTreeMap<String, EnvValue>>,
    #[serde(default)]
    pub file: Option<String>,
}

/// Defaults applied to every check that does not set the key itself.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDefaults {
    #[serde(default)]
    pub shell: Option<Shell>,
    #[serde(default)]
    pub timeout: Option<RawDuration>,
    #[serde(default)]
    pub grace: Option<RawDuration>,
    #[serde(default)]
    pub retries: Option<u32>,
    #[serde(default)]
    pub required: Option<bool>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: Option<BTreeMap<String, EnvValue>>,
}

/// What commands may do.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPolicy {
    #[serde(default)]
    pub deny: Vec<String>,
    #[serde(default)]
    pub allow_watch: bool,
}

/// One check, or (with `item:` instead of `id:`) one item of an `all-of`/`any-of` group.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCheck {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub item: Option<String>,
    #[serde(default)]
    pub name: Option<String>,

    // The kinds: exactly one must be present.
    #[serde(default)]
    pub run: Option<String>,
    #[serde(default)]
    pub test: Option<String>,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub not_file: Option<String>,
    #[serde(default)]
    pub git_clean: Option<String>,
    #[serde(default)]
    pub all_of: Option<Vec<RawCheck>>,
    #[serde(default)]
    pub any_of: Option<Vec<RawCheck>>,
    #[serde(default)]
    pub assert: Option<String>,
    #[serde(default)]
    pub quality: Option<RawQuality>,

    #[serde(default)]
    pub search: Option<Vec<String>>,
    #[serde(default)]
    pub environment: Option<EnvSelector>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub expect: Option<Expect>,
    #[serde(default)]
    pub gate: Option<Gate>,
    #[serde(default)]
    pub must_be_effective: Option<bool>,
    #[serde(default)]
    pub required: Option<bool>,
    #[serde(default)]
    pub timeout: Option<RawDuration>,
    #[serde(default)]
    pub grace: Option<RawDuration>,
    #[serde(default)]
    pub retries: Option<u32>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: Option<BTreeMap<String, EnvValue>>,
    #[serde(default)]
    pub shell: Option<Shell>,
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
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawQuality {
    pub criteria: String,
    #[serde(default)]
    pub pass_threshold: Option<f64>,
    #[serde(default)]
    pub scope: Option<String>,
}

/// The shell a command runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    /// `bash --noprofile --norc -eo pipefail -c CMD`, as GitHub Actions runs `run:` steps.
    Bash,
    /// `sh -ec CMD`.
    Sh,
    /// `pwsh -NoLogo -NoProfile -NonInteractive -Command CMD`.
    Pwsh,
    /// `cmd /D /S /C CMD`.
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
            Shell::Cmd => "cmd",
            Shell::None => "none",
        }
    }
}

/// What kind of gate a check is; decides how effectiveness is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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
        struct SelectorVisitor;
        impl<'de> Visitor<'de> for SelectorVisitor {
            type Value = EnvSelector;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("ALL, an environment name, or a list of environment names")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EnvSelector, E> {
                Ok(EnvSelector(vec![v.to_owned()]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<EnvSelector, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(EnvSelector(names))
            }
        }
        deserializer.deserialize_any(SelectorVisitor)
    }
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
