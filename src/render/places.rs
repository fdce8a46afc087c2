//! Where each environment ran, as people read it: `windows — Windows Server 2022
//! Datacenter 10.0.20348 (image 20241113.1.0), x86_64, GitHub-hosted`. Every format
//! says it beside the verdict; a result that came from another machine is said first.

use crate::results::{Place, Report, Runner};

/// `environment — facts`, the variables that define it (`with APP_MODE=old`), and when
/// its results were not taken, why.
pub fn line(place: &Place) -> String {
    let mut text = format!("{} — {}", place.environment, facts(&place.runner));
    if !place.variables.is_empty() {
        let set: Vec<String> = place
            .variables
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        text.push_str(&format!(", with {}", set.join(" ")));
    }
    if let Some(job) = &place.job {
        text.push_str(&format!(", job {job}"));
    }
    if let Some(why) = &place.mismatch {
        text.push_str(&format!(" — NOT TAKEN: {why}"));
    }
    text
}

/// The facts of a machine, those known: its OS and version (and runner image), its
/// architecture, a container, who hosts it.
pub fn facts(runner: &Runner) -> String {
    let mut parts = Vec::new();
    let os = match (&runner.os_name, &runner.os_version) {
        (Some(name), Some(version)) if !name.contains(version.as_str()) => {
            format!("{name} {version}")
        }
        (Some(name), _) => name.clone(),
        (None, Some(version)) => format!("{} {version}", runner.os),
        (None, None) if runner.os.is_empty() => "an unknown machine".to_owned(),
        (None, None) => runner.os.clone(),
    };
    let image = runner
        .actions
        .as_ref()
        .and_then(|a| a.image_version.as_deref())
        .map(|v| format!(" (image {v})"))
        .unwrap_or_default();
    parts.push(format!("{os}{image}"));
    if !runner.arch.is_empty() {
        parts.push(runner.arch.clone());
    }
    if runner.container == Some(true) {
        parts.push(match &runner.container_runtime {
            Some(runtime) => format!("in a container ({runtime})"),
            None => "in a container".to_owned(),
        });
    }
    match runner
        .actions
        .as_ref()
        .and_then(|a| a.environment.as_deref())
    {
        Some("github-hosted") => parts.push("GitHub-hosted".to_owned()),
        Some("self-hosted") => parts.push("self-hosted".to_owned()),
        _ => {}
    }
    parts.join(", ")
}

/// The places whose results were not taken (said first).
pub fn mismatched(report: &Report) -> impl Iterator<Item = &Place> {
    report.places.iter().filter(|p| p.mismatch.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ActionsRunner;

    #[test]
    fn facts_read_as_a_sentence() {
        let runner = Runner {
            os: "windows".into(),
            arch: "x86_64".into(),
            hostname: "fv-az1".into(),
            os_name: Some("Windows Server 2022 Datacenter".into()),
            os_version: Some("10.0.20348.2849".into()),
            container: Some(false),
            actions: Some(ActionsRunner {
                environment: Some("github-hosted".into()),
                image_version: Some("20241113.1.0".into()),
                ..ActionsRunner::default()
            }),
            ..Runner::default()
        };
        assert_eq!(
            facts(&runner),
            "Windows Server 2022 Datacenter 10.0.20348.2849 (image 20241113.1.0), x86_64, GitHub-hosted"
        );
        let debian = Runner {
            os: "linux".into(),
            arch: "aarch64".into(),
            os_name: Some("Debian GNU/Linux 12 (bookworm)".into()),
            os_version: Some("12".into()),
            container: Some(true),
            container_runtime: Some("podman".into()),
            ..Runner::default()
        };
        assert_eq!(
            facts(&debian),
            "Debian GNU/Linux 12 (bookworm), aarch64, in a container (podman)"
        );
        assert_eq!(facts(&Runner::default()), "an unknown machine");
    }
}
