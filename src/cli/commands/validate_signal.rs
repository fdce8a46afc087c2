//! `validate-signal`: the coordinator's check of an agent's signal.

use std::path::Path;

use crate::cli::args::ValidateSignalArgs;
use crate::cli::judge::report_file;
use crate::cli::settings::Settings;
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::manifest::EnvName;
use crate::plan;
use crate::render::validate_signal;
use crate::untrusted::read_at_most;

/// The most bytes of signal text read.
const MAX_SIGNAL_BYTES: u64 = 16 * 1024 * 1024;

pub(super) fn run(settings: &Settings, args: &ValidateSignalArgs) -> Result<i32, Error> {
    let manifest = settings.load_manifest()?;
    let text = read_signal(&args.file)?;
    let environments: Vec<EnvName> = if args.environments.is_empty() {
        plan::environment_names(&manifest)
    } else {
        args.environments
            .iter()
            .map(|e| EnvName(e.clone()))
            .collect()
    };
    let expected: Vec<(String, String)> = plan::expected_pairs(&manifest, &environments)
        .map(|(check, env)| (check.id.to_string(), env.to_string()))
        .collect();
    let against = match &args.against {
        Some(path) => {
            let report = report_file(path)?;
            if report.manifest.digest != manifest.digest {
                return Err(Error::InvalidInput(format!(
                    "report `{}` was produced from a different manifest than `{}` ({} vs {})",
                    path.display(),
                    manifest.path.display(),
                    report.manifest.digest,
                    manifest.digest
                )));
            }
            Some(report)
        }
        None => None,
    };
    let validation = validate_signal::validate(&text, &expected, against.as_ref());
    print_stdout(&(serde_json::to_string(&validation).unwrap_or_default() + "\n"))?;
    Ok(if validation.valid {
        exit_code::OK
    } else {
        exit_code::FAILED
    })
}

/// The signal text from a file, or standard input for `-`; at most 16 MiB.
fn read_signal(path: &Path) -> Result<String, Error> {
    let unreadable = |e: std::io::Error| {
        Error::InvalidInput(format!("cannot read signal `{}`: {e}", path.display()))
    };
    let read = if path.as_os_str() == "-" {
        read_at_most(std::io::stdin(), MAX_SIGNAL_BYTES)
    } else {
        read_at_most(
            std::fs::File::open(path).map_err(unreadable)?,
            MAX_SIGNAL_BYTES,
        )
    };
    let bytes = read.map_err(unreadable)?.ok_or_else(|| {
        Error::InvalidInput(format!(
            "signal `{}` is larger than {MAX_SIGNAL_BYTES} bytes",
            path.display()
        ))
    })?;
    String::from_utf8(bytes)
        .map_err(|_| Error::InvalidInput(format!("signal `{}` is not UTF-8 text", path.display())))
}
