//! The secrets of a run, and the results redacted with them before they are written.
//!
//! A value is a secret when the variable holding it — in the tool's own environment or
//! the manifest's `env:` (defaults, environments, checks) — has a name that says so
//! ([`crate::untrusted::is_secret_name`]), or is named by the manifest's `redact.env` or
//! by `VERIFY_MATRIX_MASK_ENV` (the Action's `mask-env` input); the manifest's
//! `redact.patterns` and the known token formats are masked wherever they appear, and a
//! check's `::add-mask::` lines add to the run's secrets as the run goes.

use crate::manifest::Manifest;
use crate::results::CheckResult;
use crate::results::schema::ItemResult;
use crate::untrusted::Redactor;
use crate::untrusted::redacting::Masks;

/// The variable naming more variables whose values are masked (space- or
/// comma-separated): the Action's `mask-env` input.
pub const MASK_ENV_VAR: &str = "VERIFY_MATRIX_MASK_ENV";

/// The secrets a run of `manifest` starts with.
pub fn run_masks(manifest: &Manifest) -> Masks {
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    vars.extend(
        manifest
            .defaults
            .env
            .iter()
            .chain(manifest.environments.iter().flat_map(|e| e.env.iter()))
            .chain(manifest.checks.iter().flat_map(|c| c.env.iter()))
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    let mut redactor = Redactor::from_vars(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let extra = std::env::var(MASK_ENV_VAR).unwrap_or_default();
    let named: Vec<&str> = manifest
        .redact
        .env
        .iter()
        .map(String::as_str)
        .chain(extra.split([' ', ',', '\n']).map(str::trim))
        .filter(|n| !n.is_empty())
        .collect();
    for (name, value) in &vars {
        if named.contains(&name.as_str()) {
            redactor.add(value);
        }
    }
    for pattern in &manifest.redact.patterns {
        redactor.add_pattern(pattern.clone());
    }
    Masks::new(redactor)
}

/// `result` with every string a check or its runner produced redacted.
pub fn redact_result(result: &mut CheckResult, redactor: &Redactor) {
    let mask = |text: &mut compact_str::CompactString| {
        if let std::borrow::Cow::Owned(masked) = redactor.redact(text) {
            *text = masked.into();
        }
    };
    mask(&mut result.command);
    // A cut summary may end inside a secret the mask would no longer know: the whole
    // cause is masked, and the summary made again from it.
    match result.cause.take() {
        Some(cause) => result.say(&redactor.redact(&cause)),
        None => mask(&mut result.summary),
    }
    if let Some(reason) = &mut result.ineffective_reason {
        mask(reason);
    }
    if let Some(refused) = &mut result.refused {
        mask(refused);
    }
    for leak in &mut result.leaked {
        leak.command = redactor.redact(&leak.command).into_owned();
    }
    if let Some(tests) = &mut result.tests {
        for case in &mut tests.cases {
            mask(&mut case.suite);
            mask(&mut case.name);
            for text in [&mut case.message, &mut case.file].into_iter().flatten() {
                mask(text);
            }
            if let Some(output) = &mut case.output {
                *output = redactor.redact(output).into_owned();
            }
        }
    }
    ItemResult::visit_mut(&mut result.items, "", &mut |item, _| {
        mask(&mut item.summary);
    });
}
