//! The (check × environment) execution matrix, and the GitHub Actions `strategy.matrix`
//! that runs it: one job per environment.

pub mod gitlab;
pub mod identity;
pub mod select;
pub mod table;

use serde::Serialize;
use serde_json::{Value, json};

use crate::manifest::{Check, EnvName, Environment, Manifest, Shard};

/// One pair of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    pub check: String,
    pub environment: String,
    pub kind: String,
    pub command: String,
    pub required: bool,
    /// Manual items are listed for review and never run.
    pub manual: bool,
    /// How many shards the check is split into in this environment (1: whole).
    pub shards: u32,
}

/// One environment of the plan: a job of the workflow matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanEnvironment {
    pub name: String,
    #[serde(rename = "runs-on")]
    pub runs_on: Option<Value>,
    pub container: Option<Value>,
    pub checks: Vec<String>,
    /// How many legs (runners) the environment is split into; 1: not sharded.
    pub shards: u32,
}

/// The execution matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub manifest: String,
    pub digest: String,
    pub skip: bool,
    pub environments: Vec<PlanEnvironment>,
    pub pairs: Vec<Pair>,
}

/// The runner label used when an environment sets no `runs-on`.
pub const DEFAULT_RUNS_ON: &str = "ubuntu-latest";

/// The environments of `environments` that `check` runs in (its scope), in that order.
pub fn environments_of<'a>(
    check: &'a Check,
    environments: &'a [EnvName],
) -> impl Iterator<Item = &'a EnvName> + 'a {
    environments.iter().filter(|e| check.scope.includes(e))
}

/// The (check × environment) expansion, written once for everyone: each check of
/// `manifest` (manifest order) with each of `environments` in its scope (in the order
/// given). Manual checks are included; see [`expected_pairs`].
pub fn pairs<'a>(
    manifest: &'a Manifest,
    environments: &'a [EnvName],
) -> impl Iterator<Item = (&'a Check, &'a EnvName)> + 'a {
    manifest
        .checks
        .iter()
        .flat_map(move |check| environments_of(check, environments).map(move |e| (check, e)))
}

/// The pairs a verdict needs a result for: required checks that run (not manual), in
/// `environments`. None when the manifest says `skip: true`.
pub fn expected_pairs<'a>(
    manifest: &'a Manifest,
    environments: &'a [EnvName],
) -> impl Iterator<Item = (&'a Check, &'a EnvName)> + 'a {
    pairs(manifest, environments)
        .filter(|(check, _)| !manifest.skip && check.required && !check.kind.is_manual())
}

/// The names of every environment `manifest` declares, in order.
pub fn environment_names(manifest: &Manifest) -> Vec<EnvName> {
    manifest
        .environments
        .iter()
        .map(|e| e.name.clone())
        .collect()
}

/// The checks of `manifest` that run in `env`: not manual, and none under `skip: true`.
pub fn runnable_checks<'a>(
    manifest: &'a Manifest,
    env: &'a EnvName,
) -> impl Iterator<Item = &'a Check> + 'a {
    manifest
        .checks_for(env)
        .filter(move |c| !manifest.skip && !c.kind.is_manual())
}

/// Whether `check` runs in `leg` of `env` (the whole environment when `None`), and
/// if so its slice: `Some(None)` runs it whole; `Some(Some(k/n))` its shard k of the
/// n it is split into (1/1 when the whole environment runs a check that splits).
/// A check that runs whole runs in shard 1; a check split fewer ways than the
/// environment has legs runs in the first of them.
pub fn slice_of(
    manifest: &Manifest,
    check: &Check,
    env: &Environment,
    leg: Option<Shard>,
) -> Option<Option<Shard>> {
    let n = manifest.shards_of(check, env);
    let splits = check.split.is_some();
    match leg {
        None => Some(splits.then_some(Shard { index: 1, count: 1 })),
        Some(leg) if n <= 1 && !splits => (leg.index == 1).then_some(None),
        Some(leg) => (leg.index <= n).then_some(Some(Shard {
            index: leg.index,
            count: n,
        })),
    }
}

/// Expands `manifest` into its matrix; `only` restricts it to one environment.
pub fn plan(manifest: &Manifest, only: Option<&EnvName>) -> Plan {
    let environments: Vec<_> = manifest
        .environments
        .iter()
        .filter(|e| only.is_none_or(|o| *o == e.name))
        .collect();
    let names: Vec<EnvName> = environments.iter().map(|e| e.name.clone()).collect();
    let pairs = pairs(manifest, &names)
        .map(|(check, env)| Pair {
            check: check.id.to_string(),
            environment: env.to_string(),
            kind: check.kind.key().to_owned(),
            command: check.kind.describe(),
            required: check.required,
            manual: check.kind.is_manual(),
            shards: manifest
                .environment(env.as_str())
                .map_or(1, |e| manifest.shards_of(check, e)),
        })
        .collect();
    Plan {
        manifest: manifest.path.display().to_string(),
        digest: manifest.digest.clone(),
        skip: manifest.skip,
        environments: environments
            .iter()
            .map(|e| PlanEnvironment {
                name: e.name.to_string(),
                runs_on: e.runs_on.clone(),
                container: e.container.clone(),
                checks: manifest
                    .checks_for(&e.name)
                    .map(|c| c.id.to_string())
                    .collect(),
                shards: manifest.legs(e),
            })
            .collect(),
        pairs,
    }
}

impl Plan {
    /// `{"include":[{"environment":…,"runs-on":…,"container":…}]}` for `strategy.matrix`
    /// (`container` only where set): one entry per environment, and per shard of a
    /// sharded one (with `shard`, from 1, and `shards`).
    pub fn github_matrix(&self) -> Value {
        let include: Vec<Value> = self
            .environments
            .iter()
            .flat_map(|e| {
                let shards = (e.shards > 1).then_some(e.shards);
                (1..=e.shards.max(1)).map(move |k| {
                    let mut entry = json!({
                        "environment": e.name,
                        "runs-on": e.runs_on.clone().unwrap_or_else(|| json!(DEFAULT_RUNS_ON)),
                    });
                    if let Some(container) = &e.container {
                        entry["container"] = container.clone();
                    }
                    if let Some(n) = shards {
                        entry["shard"] = json!(k);
                        entry["shards"] = json!(n);
                    }
                    entry
                })
            })
            .collect();
        json!({ "include": include })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const TEXT: &str = r#"
version: 1
environments:
  - name: linux
    runs-on: ubuntu-latest
    container: rust:1.85
  - name: windows
    runs-on: [self-hosted, windows]
checks:
  - { id: fmt, run: cargo fmt --check, environment: linux }
  - { id: tests, run: cargo test }
  - { id: review, assert: "looks right" }
"#;

    #[test]
    fn expands_checks_by_environment_in_manifest_order() {
        let m = crate::manifest::from_yaml_text(Path::new("m.yml"), TEXT).unwrap();
        let p = plan(&m, None);
        let pairs: Vec<(&str, &str)> = p
            .pairs
            .iter()
            .map(|p| (p.check.as_str(), p.environment.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("fmt", "linux"),
                ("tests", "linux"),
                ("tests", "windows"),
                ("review", "linux"),
                ("review", "windows")
            ]
        );
        assert!(p.pairs[3].manual);
        assert_eq!(p.environments[1].checks, ["tests", "review"]);
    }

    #[test]
    fn github_matrix_carries_runs_on_and_container() {
        let m = crate::manifest::from_yaml_text(Path::new("m.yml"), TEXT).unwrap();
        let matrix = plan(&m, None).github_matrix();
        assert_eq!(
            matrix,
            json!({"include": [
                {"environment": "linux", "runs-on": "ubuntu-latest", "container": "rust:1.85"},
                {"environment": "windows", "runs-on": ["self-hosted", "windows"]}
            ]})
        );
        let only = plan(&m, Some(&EnvName("windows".into())));
        assert_eq!(only.environments.len(), 1);
        assert!(only.pairs.iter().all(|p| p.environment == "windows"));
    }
}
