//! Which environment `run` is in: `--env` › `VERIFY_MATRIX_ENV` › `detect` rules
//! (exactly one match) › the only environment › an error listing the choices.

use std::path::Path;

use crate::manifest::{Detect, Environment, Manifest};

/// Why no environment could be chosen.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SelectError {
    #[error("unknown environment `{name}` (from {from}){hint}; the manifest declares: {declared}")]
    Unknown {
        name: String,
        from: &'static str,
        declared: String,
        /// ` (did you mean `x`?)`, or nothing.
        hint: String,
    },
    #[error(
        "several environments match this machine ({matched}); choose one with --env NAME or VERIFY_MATRIX_ENV"
    )]
    Ambiguous { matched: String },
    #[error(
        "which environment is this? the manifest declares {declared}; choose with --env NAME (repeatable) or VERIFY_MATRIX_ENV=NAME, or add `detect:` rules to the environments"
    )]
    Undecided { declared: String },
}

/// What the process can see of its surroundings (injectable for tests).
pub trait Surroundings {
    fn var(&self, name: &str) -> Option<String>;
    fn os(&self) -> &str;
    fn arch(&self) -> &str;
    fn file_exists(&self, path: &str) -> bool;
}

/// The real process environment and machine.
pub struct Host;

impl Surroundings for Host {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn os(&self) -> &str {
        std::env::consts::OS
    }
    fn arch(&self) -> &str {
        std::env::consts::ARCH
    }
    fn file_exists(&self, path: &str) -> bool {
        Path::new(path).exists()
    }
}

/// Chooses the environments to run.
pub fn select<'m>(
    manifest: &'m Manifest,
    flags: &[String],
    host: &dyn Surroundings,
) -> Result<Vec<&'m Environment>, SelectError> {
    let by_name = |name: &str, from: &'static str| {
        manifest
            .environment(name)
            .ok_or_else(|| SelectError::Unknown {
                name: name.to_owned(),
                from,
                declared: manifest.environment_list(),
                hint: crate::manifest::diagnostic::suggestion(
                    name,
                    manifest.environments.iter().map(|e| e.name.as_str()),
                ),
            })
    };
    if !flags.is_empty() {
        let mut chosen: Vec<&Environment> = Vec::new();
        for name in flags {
            let env = by_name(name, "--env")?;
            if !chosen.iter().any(|c| c.name == env.name) {
                chosen.push(env);
            }
        }
        return Ok(chosen);
    }
    if let Some(name) = host
        .var("VERIFY_MATRIX_ENV")
        .filter(|v| !v.trim().is_empty())
    {
        return Ok(vec![by_name(name.trim(), "VERIFY_MATRIX_ENV")?]);
    }
    let matched: Vec<&Environment> = manifest
        .environments
        .iter()
        .filter(|e| e.detect.as_ref().is_some_and(|d| detect_matches(d, host)))
        .collect();
    match matched.as_slice() {
        [one] => return Ok(vec![*one]),
        [] => {}
        many => {
            return Err(SelectError::Ambiguous {
                matched: many
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    match manifest.environments.as_slice() {
        [only] => Ok(vec![only]),
        _ => Err(SelectError::Undecided {
            declared: manifest.environment_list(),
        }),
    }
}

/// Whether every condition of `detect` holds.
pub fn detect_matches(detect: &Detect, host: &dyn Surroundings) -> bool {
    detect.os.as_deref().is_none_or(|os| os == host.os())
        && detect
            .arch
            .as_deref()
            .is_none_or(|arch| arch == host.arch())
        && detect.file.as_deref().is_none_or(|f| host.file_exists(f))
        && detect.env.iter().all(|(name, want)| match host.var(name) {
            Some(value) => want == "*" || *want == value,
            None => false,
        })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::Path;

    use super::*;

    struct Fake {
        vars: HashMap<&'static str, &'static str>,
        os: &'static str,
    }

    impl Surroundings for Fake {
        fn var(&self, name: &str) -> Option<String> {
            self.vars.get(name).map(|v| v.to_string())
        }
        fn os(&self) -> &str {
            self.os
        }
        fn arch(&self) -> &str {
            "x86_64"
        }
        fn file_exists(&self, path: &str) -> bool {
            path == "/.dockerenv"
        }
    }

    fn manifest(text: &str) -> Manifest {
        crate::manifest::from_yaml_text(Path::new("m.yml"), text).unwrap()
    }

    const TWO: &str = "version: 1\nenvironments:\n  - name: linux\n    detect: { os: linux }\n  - name: docker\n    detect: { file: /.dockerenv, env: { CI: '*' } }\nchecks: []\n";

    fn names(envs: &[&Environment]) -> Vec<String> {
        envs.iter().map(|e| e.name.to_string()).collect()
    }

    #[test]
    fn flag_wins_then_variable_then_detect() {
        let m = manifest(TWO);
        let host = Fake {
            vars: HashMap::from([("VERIFY_MATRIX_ENV", "docker")]),
            os: "linux",
        };
        assert_eq!(
            names(&select(&m, &["linux".into()], &host).unwrap()),
            ["linux"]
        );
        assert_eq!(names(&select(&m, &[], &host).unwrap()), ["docker"]);
        let host = Fake {
            vars: HashMap::new(),
            os: "linux",
        };
        assert_eq!(names(&select(&m, &[], &host).unwrap()), ["linux"]);
    }

    #[test]
    fn two_detected_is_ambiguous() {
        let m = manifest(TWO);
        let host = Fake {
            vars: HashMap::from([("CI", "true")]),
            os: "linux",
        };
        assert_eq!(
            select(&m, &[], &host).unwrap_err(),
            SelectError::Ambiguous {
                matched: "linux, docker".into()
            }
        );
    }

    #[test]
    fn nothing_detected_lists_the_choices() {
        let m = manifest(TWO);
        let host = Fake {
            vars: HashMap::new(),
            os: "windows",
        };
        let err = select(&m, &[], &host).unwrap_err().to_string();
        assert!(err.contains("declares linux, docker"), "{err}");
    }

    #[test]
    fn unknown_names_are_errors_and_a_single_environment_is_chosen() {
        let m = manifest(TWO);
        let host = Fake {
            vars: HashMap::new(),
            os: "linux",
        };
        assert!(matches!(
            select(&m, &["mac".into()], &host),
            Err(SelectError::Unknown { .. })
        ));
        let one = manifest("version: 1\nenvironments: [{name: only}]\n");
        assert_eq!(names(&select(&one, &[], &host).unwrap()), ["only"]);
    }
}
