//! Where each environment's results really came from: a result's facts (`runner`)
//! against the identity its manifest declares ([`crate::plan::identity`]). A result
//! stands only for the machine it ran on.

use rustc_hash::FxHashMap;

use super::jobs::{Jobs, Leg, match_legs};
use super::report::Place;
use super::schema::{PartialResult, Runner};
use crate::manifest::Manifest;
use crate::plan::identity::{Identity, Machine};

/// What a result's facts say of its machine: nothing for a format-1 result (it did not
/// record the facts an identity is checked against).
pub fn machine_of(format_version: u32, runner: &Runner) -> Machine {
    if format_version < 2 {
        return Machine::default();
    }
    let known = |s: &str| (!s.trim().is_empty()).then(|| s.to_owned());
    Machine {
        os: known(&runner.os),
        arch: known(&runner.arch),
        container: runner.container,
    }
}

/// Where each partial result came from, in their order (one place per partial, those
/// of environments the manifest does not declare included): what its environment declares,
/// its facts, and why the result does not stand for its environment when it does not —
/// its facts contradict its identity (or were not recorded), or it came from the same
/// machine as the results of an environment that could not be the same machine.
pub fn places(manifest: &Manifest, partials: &[PartialResult], jobs: &Jobs) -> Vec<Place> {
    let mut places: Vec<(Option<Identity>, Place)> = partials
        .iter()
        .map(|partial| {
            let identity = manifest
                .environment(&partial.environment)
                .map(Identity::of)
                .filter(|i| !i.is_variant());
            let mismatch = identity.as_ref().and_then(|identity| {
                let machine = machine_of(partial.format_version, &partial.runner);
                let why = identity
                    .results_mismatch(&machine)
                    .or_else(|| facts_disagree(&partial.runner))
                    .or_else(|| identity.detect_unproven(&partial.runner.detected))?;
                Some(if partial.format_version < 2 {
                    format!("{why} (the result is of format {}, which records none of the facts an identity is checked against)", partial.format_version)
                } else {
                    why
                })
            });
            let place = Place {
                environment: partial.environment.clone(),
                declared: identity.as_ref().map(Identity::describe),
                runner: partial.runner.clone(),
                mismatch,
                job: None,
                variables: variables_of(manifest, &partial.environment),
            };
            (identity, place)
        })
        .collect();
    // One machine cannot be two environments that could not be one machine.
    let mut by_machine: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, partial) in partials.iter().enumerate() {
        if let Some(id) = partial.runner.machine.as_deref()
            && places[i].0.is_some()
        {
            by_machine.entry(id).or_default().push(i);
        }
    }
    let mut clashes: Vec<(usize, String)> = Vec::new();
    for indices in by_machine.values() {
        for (n, &a) in indices.iter().enumerate() {
            for &b in &indices[n + 1..] {
                let (Some(first), Some(second)) = (&places[a].0, &places[b].0) else {
                    continue;
                };
                if !compatible(first, second) && places[a].1.environment != places[b].1.environment
                {
                    let (ea, eb) = (&places[a].1.environment, &places[b].1.environment);
                    let machine = partials[a].runner.machine.as_deref().unwrap_or_default();
                    clashes.push((a, format!("its results and {eb}'s came from one machine ({machine}), which cannot be both ({ea} {}; {eb} {})", first.describe(), second.describe())));
                    clashes.push((b, format!("its results and {ea}'s came from one machine ({machine}), which cannot be both ({eb} {}; {ea} {})", second.describe(), first.describe())));
                }
            }
        }
    }
    for (i, why) in clashes {
        places[i].1.mismatch.get_or_insert(why);
    }
    // Each leg was a job of the run, as GitHub (or GitLab) lists them.
    let legs: Vec<Leg<'_>> = partials
        .iter()
        .map(|p| match &p.runner.gitlab {
            // A GitLab job: the pipeline, the job's own id, its runner.
            Some(job) => Leg {
                environment: &p.environment,
                shard: p.shard,
                run_id: p.source.run_id.as_deref(),
                attempt: job.job_id,
                runner: job.runner_description.as_deref(),
                all_passed: p.all_passed(),
            },
            None => Leg {
                environment: &p.environment,
                shard: p.shard,
                run_id: p.source.run_id.as_deref(),
                attempt: p.source.run_attempt.map(u64::from),
                runner: p.runner.actions.as_ref().and_then(|a| a.name.as_deref()),
                all_passed: false,
            },
        })
        .collect();
    for (i, matched) in match_legs(manifest, &legs, jobs).into_iter().enumerate() {
        match matched {
            Ok(job) => places[i].1.job = job,
            Err(why) => {
                places[i].1.mismatch.get_or_insert(why);
            }
        }
    }
    places.into_iter().map(|(_, place)| place).collect()
}

/// Whether one machine could be both `a` and `b`: no OS or architecture that both
/// declare differs (a container requirement is met by a machine in one, whatever else
/// it also is).
fn compatible(a: &Identity, b: &Identity) -> bool {
    let same = |x: &Option<String>, y: &Option<String>| match (x, y) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    };
    same(&a.os, &b.os) && same(&a.arch, &b.arch)
}

/// Why a result's machine facts cannot all be true of one machine: each OS records
/// its own kinds of facts (a kernel release and a C library on Linux, neither on
/// Windows; no C library on macOS), its own name, and under Actions the runner's own
/// words for its OS and architecture. `None` when they agree (or say too little).
pub fn facts_disagree(runner: &Runner) -> Option<String> {
    let mut wrong: Vec<String> = Vec::new();
    let name = runner.os_name.as_deref().map(str::to_ascii_lowercase);
    let names_windows = name.as_deref().is_some_and(|n| n.contains("windows"));
    let names_macos = name
        .as_deref()
        .is_some_and(|n| n.contains("macos") || n.contains("mac os"));
    let actions = runner.actions.as_ref();
    let runner_os = actions.and_then(|a| a.os.as_deref());
    let image_os = actions
        .and_then(|a| a.image_os.as_deref())
        .map(str::to_ascii_lowercase);
    let image = |prefixes: &[&str]| {
        image_os
            .as_deref()
            .is_none_or(|i| prefixes.iter().any(|p| i.starts_with(p)))
    };
    match runner.os.as_str() {
        "windows" => {
            if let Some(name) = &runner.os_name
                && !names_windows
            {
                wrong.push(format!("an OS named `{name}`"));
            }
            if let Some(kernel) = &runner.kernel {
                wrong.push(format!(
                    "a kernel release `{kernel}` (Windows records none)"
                ));
            }
            if let Some(libc) = &runner.libc {
                wrong.push(format!("a C library `{libc}` (Windows records none)"));
            }
            if runner_os.is_some_and(|o| o != "Windows") || !image(&["win"]) {
                wrong.push("an Actions runner that is not Windows".to_owned());
            }
        }
        "macos" => {
            if let Some(name) = &runner.os_name
                && !names_macos
            {
                wrong.push(format!("an OS named `{name}`"));
            }
            if let Some(libc) = &runner.libc {
                wrong.push(format!("a C library `{libc}` (macOS records none)"));
            }
            if runner_os.is_some_and(|o| o != "macOS") || !image(&["macos"]) {
                wrong.push("an Actions runner that is not macOS".to_owned());
            }
        }
        "linux" => {
            if let Some(name) = &runner.os_name
                && (names_windows || names_macos)
            {
                wrong.push(format!("an OS named `{name}`"));
            }
            if let Some(libc) = &runner.libc
                && !(libc.starts_with("glibc ") || libc == "musl")
            {
                wrong.push(format!("a C library `{libc}`"));
            }
            if runner_os.is_some_and(|o| o != "Linux")
                || image_os
                    .as_deref()
                    .is_some_and(|i| i.starts_with("win") || i.starts_with("macos"))
            {
                wrong.push("an Actions runner that is not Linux".to_owned());
            }
        }
        _ => {}
    }
    if let Some(arch) = actions.and_then(|a| a.arch.as_deref()) {
        let expected = match arch {
            "X64" => Some("x86_64"),
            "ARM64" => Some("aarch64"),
            "X86" => Some("x86"),
            "ARM" => Some("arm"),
            _ => None,
        };
        if expected.is_some_and(|e| e != runner.arch) {
            wrong.push(format!("an Actions runner of architecture {arch}"));
        }
    }
    if runner.container == Some(false)
        && let Some(runtime) = &runner.container_runtime
    {
        wrong.push(format!(
            "a container runtime `{runtime}` outside a container"
        ));
    }
    (!wrong.is_empty()).then(|| {
        format!(
            "its machine facts contradict each other: os {} with {}",
            runner.os,
            wrong.join(", ")
        )
    })
}

/// The variables the manifest sets for environment `name`, as a place shows them: the
/// value of one whose name says it is a secret, or that `redact.env` names, masked.
pub fn variables_of(manifest: &Manifest, name: &str) -> std::collections::BTreeMap<String, String> {
    let Some(env) = manifest.environment(name) else {
        return std::collections::BTreeMap::new();
    };
    env.env
        .iter()
        .map(|(key, value)| {
            let secret = crate::untrusted::redact::is_secret_name(key)
                || manifest.redact.env.iter().any(|named| named == key);
            let shown = if secret {
                crate::untrusted::redact::MASK.to_owned()
            } else {
                value.clone()
            };
            (key.clone(), shown)
        })
        .collect()
}
