//! What an environment *is*, from what its manifest entry says: a result stands only for
//! a machine that is it.
//!
//! - `runs-on`: a GitHub-hosted label implies the OS and architecture
//!   ([`crate::manifest::runs_on`]); self-hosted labels imply nothing.
//! - `container`: the checks run inside a container.
//! - `detect`: every rule must hold (its `os` and `arch` are facts a result records;
//!   its variables and files are checked where the run happens, and the result records
//!   each of those rules as it held there: [`detected`]).
//!
//! An environment with none of these is a **variant** (it differs by variables, like a
//! locale or a toolchain): any machine may be it, and several variants may share one.

use serde::Serialize;

use super::select::{Surroundings, detect_matches};
use crate::manifest::{Detect, Environment, runs_on};

/// An environment's identity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// `linux`, `macos` or `windows`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// As Rust names it: `x86_64`, `aarch64`, …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// The hosted label that implies `os` and `arch`, when one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The checks must run inside a container.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub container: bool,
    /// The container's image, as the manifest names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// `detect:` rules beyond the OS and architecture (variables, files).
    #[serde(skip)]
    pub detect: Option<Detect>,
}

/// What is known of a machine: from this process, or from a result's facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Machine {
    pub os: Option<String>,
    pub arch: Option<String>,
    /// Inside a container (`None`: not known).
    pub container: Option<bool>,
}

impl Machine {
    /// `linux x86_64`, `linux x86_64 in a container`; unknown parts left out.
    pub fn describe(&self) -> String {
        let mut parts: Vec<&str> = Vec::new();
        parts.push(self.os.as_deref().unwrap_or("an unknown OS"));
        if let Some(arch) = &self.arch {
            parts.push(arch);
        }
        let mut text = parts.join(" ");
        match self.container {
            Some(true) => text.push_str(" in a container"),
            Some(false) => text.push_str(", not in a container"),
            None => {}
        }
        text
    }
}

impl Identity {
    /// The identity `env` declares.
    pub fn of(env: &Environment) -> Identity {
        let implied = env.runs_on.as_ref().and_then(runs_on::implied);
        let detect = env.detect.as_ref();
        let os = detect
            .and_then(|d| d.os.clone())
            .or_else(|| implied.as_ref().map(|(os, _, _)| (*os).to_owned()));
        let arch = detect
            .and_then(|d| d.arch.clone())
            .or_else(|| implied.as_ref().map(|(_, arch, _)| (*arch).to_owned()));
        let image = env.container.as_ref().and_then(|c| match c {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Object(map) => {
                map.get("image").and_then(|i| i.as_str()).map(str::to_owned)
            }
            _ => None,
        });
        let rules = detect.filter(|d| !d.env.is_empty() || d.file.is_some());
        Identity {
            os,
            arch,
            label: implied.map(|(_, _, label)| label),
            container: env.container.is_some(),
            image,
            detect: rules.cloned(),
        }
    }

    /// An environment that any machine may be (it differs only by variables).
    pub fn is_variant(&self) -> bool {
        self.os.is_none() && self.arch.is_none() && !self.container && self.detect.is_none()
    }

    /// What the environment is, for messages: `runs on windows-latest (windows
    /// x86_64)`, `linux, in a container (debian:12)`.
    pub fn describe(&self) -> String {
        let machine = [self.os.as_deref(), self.arch.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let mut text = match (&self.label, machine.is_empty()) {
            (Some(label), _) => format!("runs on {label} ({machine})"),
            (None, false) => format!("is {machine}"),
            (None, true) => String::new(),
        };
        if self.container {
            if !text.is_empty() {
                text.push_str(", ");
            }
            text.push_str("runs in a container");
            if let Some(image) = &self.image {
                text.push_str(&format!(" ({image})"));
            }
        }
        if self.detect.is_some() {
            if !text.is_empty() {
                text.push_str(", ");
            }
            text.push_str("is recognised by its `detect` rules");
        }
        if text.is_empty() {
            text.push_str("is a variant (any machine)");
        }
        text
    }

    /// Why a result whose `detected` facts are these does not show the environment's
    /// `detect` rules on variables and files holding where it ran (each rule must be
    /// recorded, and as holding).
    pub fn detect_unproven(
        &self,
        detected: &std::collections::BTreeMap<String, bool>,
    ) -> Option<String> {
        let detect = self.detect.as_ref()?;
        let unproven: Vec<String> = rule_names(detect)
            .into_iter()
            .filter(|rule| detected.get(rule) != Some(&true))
            .map(|rule| match detected.get(&rule) {
                Some(false) => format!("`{rule}` did not hold"),
                _ => format!("`{rule}` is not recorded"),
            })
            .collect();
        (!unproven.is_empty()).then(|| {
            format!(
                "its `detect` rules are not shown to hold where it ran: {}",
                unproven.join(", ")
            )
        })
    }

    /// Why `machine` is not this environment (what it declares against what the
    /// machine is); `None` when nothing known contradicts it. A fact the machine does
    /// not record is not a match: an environment with an identity needs its facts.
    pub fn mismatch(&self, machine: &Machine) -> Option<String> {
        self.mismatch_as(machine, "this machine")
    }

    /// [`Identity::mismatch`] of a result's machine (as its facts say).
    pub fn results_mismatch(&self, machine: &Machine) -> Option<String> {
        self.mismatch_as(machine, "the results' machine")
    }

    fn mismatch_as(&self, machine: &Machine, whose: &str) -> Option<String> {
        let mut wrong = Vec::new();
        for (what, want, have) in [
            ("os", &self.os, &machine.os),
            ("arch", &self.arch, &machine.arch),
        ] {
            match (want, have) {
                (Some(want), Some(have)) if want != have => wrong.push(format!("{what} {have}")),
                (Some(_), None) => wrong.push(format!("{what} unknown")),
                _ => {}
            }
        }
        match (self.container, machine.container) {
            (true, Some(false)) => wrong.push("not in a container".to_owned()),
            (true, None) => wrong.push("not known to be in a container".to_owned()),
            _ => {}
        }
        if wrong.is_empty() {
            None
        } else {
            Some(format!(
                "it {}; {whose} is {}",
                self.describe(),
                machine.describe()
            ))
        }
    }

    /// Why this process's surroundings are not this environment: [`Identity::mismatch`]
    /// of `machine`, then the `detect` rules on variables and files.
    pub fn mismatch_here(&self, machine: &Machine, here: &dyn Surroundings) -> Option<String> {
        if let Some(why) = self.mismatch(machine) {
            return Some(why);
        }
        let detect = self.detect.as_ref()?;
        (!detect_matches(detect, here)).then(|| {
            let mut rules: Vec<String> = detect
                .env
                .iter()
                .map(|(k, v)| {
                    if v == "*" {
                        format!("variable {k} set")
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect();
            if let Some(file) = &detect.file {
                rules.push(format!("file {file}"));
            }
            format!(
                "its `detect` rules ({}) do not hold on this machine",
                rules.join(", ")
            )
        })
    }
}

/// Each `detect` rule on variables and files, named as a result records it: `env NAME`,
/// `file PATH` (never a variable's value).
fn rule_names(detect: &Detect) -> Vec<String> {
    let mut rules: Vec<String> = detect
        .env
        .keys()
        .map(|name| format!("env {name}"))
        .collect();
    rules.extend(detect.file.iter().map(|file| format!("file {file}")));
    rules
}

/// The `detect` rules of `env` on variables and files, each as it holds `here`: what a
/// result records (`runner.detected`) so that a merge elsewhere can tell the result
/// came from a machine where they held.
pub fn detected(
    env: &Environment,
    here: &dyn Surroundings,
) -> std::collections::BTreeMap<String, bool> {
    let Some(detect) = env.detect.as_ref() else {
        return Default::default();
    };
    let mut facts = std::collections::BTreeMap::new();
    for (name, want) in &detect.env {
        let holds = here
            .var(name)
            .is_some_and(|value| want == "*" || *want == value);
        facts.insert(format!("env {name}"), holds);
    }
    if let Some(file) = &detect.file {
        facts.insert(format!("file {file}"), here.file_exists(file));
    }
    facts
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn identities(text: &str) -> Vec<Identity> {
        let m = crate::manifest::from_yaml_text(Path::new("m.yml"), text).unwrap();
        m.environments.iter().map(Identity::of).collect()
    }

    fn linux() -> Machine {
        Machine {
            os: Some("linux".into()),
            arch: Some("x86_64".into()),
            container: Some(false),
        }
    }

    #[test]
    fn labels_containers_and_detect_make_an_identity_and_the_rest_are_variants() {
        let ids = identities(
            "version: 1
environments:
  - { name: linux, runs-on: ubuntu-latest }
  - { name: windows, runs-on: windows-latest }
  - { name: mac, runs-on: macos-latest }
  - { name: box, runs-on: [self-hosted, big] }
  - { name: deb, container: 'debian:12' }
  - { name: arm, detect: { arch: arm64 } }
  - { name: c-locale, env: { LC_ALL: C } }
",
        );
        let variant: Vec<bool> = ids.iter().map(Identity::is_variant).collect();
        assert_eq!(variant, [false, false, false, true, false, false, true]);
        let here = linux();
        let refused: Vec<Option<String>> = ids.iter().map(|i| i.mismatch(&here)).collect();
        assert_eq!(refused[0], None);
        assert_eq!(
            refused[1].as_deref(),
            Some(
                "it runs on windows-latest (windows x86_64); this machine is linux x86_64, not in a container"
            )
        );
        assert_eq!(
            refused[2].as_deref(),
            Some(
                "it runs on macos-latest (macos aarch64); this machine is linux x86_64, not in a container"
            )
        );
        assert_eq!(refused[3], None);
        assert_eq!(
            refused[4].as_deref(),
            Some(
                "it runs in a container (debian:12); this machine is linux x86_64, not in a container"
            )
        );
        assert_eq!(
            refused[5].as_deref(),
            Some("it is aarch64; this machine is linux x86_64, not in a container")
        );
        let inside = Machine {
            container: Some(true),
            ..linux()
        };
        assert_eq!(ids[4].mismatch(&inside), None);
    }

    #[test]
    fn unknown_facts_never_match_an_identity() {
        let ids = identities(
            "version: 1\nenvironments:\n  - { name: l, runs-on: ubuntu-latest }\n  - { name: v }\n",
        );
        let unknown = Machine::default();
        assert!(ids[0].mismatch(&unknown).is_some());
        assert_eq!(ids[1].mismatch(&unknown), None);
    }
}
