//! What a `runs-on` says about the machine: GitHub's hosted runner labels imply an OS
//! and an architecture; anything else (self-hosted labels, larger runners' own labels,
//! runner groups, expressions) implies nothing.
//!
//! The table follows GitHub's "GitHub-hosted runners" reference and the runner-images
//! repository's list of images (2026):
//!
//! | labels | OS | arch |
//! |---|---|---|
//! | `ubuntu-latest`, `ubuntu-NN.NN`, `ubuntu-slim` | linux | x86_64 |
//! | `ubuntu-NN.NN-arm` | linux | aarch64 |
//! | `windows-latest`, `windows-NNNN` | windows | x86_64 |
//! | `windows-NN-arm` | windows | aarch64 |
//! | `macos-latest`, `macos-NN` (14 and up), `macos-NN-xlarge` | macos | aarch64 |
//! | `macos-13`, `macos-NN-intel`, `macos-NN-large` | macos | x86_64 |

use serde_json::Value;

/// The OS and architecture a GitHub-hosted runner label implies, if it is one.
pub fn hosted_label(label: &str) -> Option<(&'static str, &'static str)> {
    let label = label.trim().to_ascii_lowercase();
    let (family, rest) = label.split_once('-')?;
    let arm = rest.ends_with("-arm") || rest.ends_with("-arm64");
    let version_ok = |v: &str| {
        v == "latest" || (!v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    let version = rest.split('-').next().unwrap_or_default();
    match family {
        "ubuntu" if rest == "slim" => Some(("linux", "x86_64")),
        "ubuntu" if version_ok(version) && (rest == version || arm) => {
            Some(("linux", if arm { "aarch64" } else { "x86_64" }))
        }
        "windows" if version_ok(version) && (rest == version || arm) => {
            Some(("windows", if arm { "aarch64" } else { "x86_64" }))
        }
        "macos" if version_ok(version) => {
            let suffix = &rest[version.len()..];
            let intel = match suffix {
                "-intel" | "-large" => true,
                "" => version == "13" || version.starts_with("13.") || version == "12",
                "-xlarge" | "-arm64" => false,
                _ => return None,
            };
            Some(("macos", if intel { "x86_64" } else { "aarch64" }))
        }
        _ => None,
    }
}

/// The labels of a `runs-on` value: a label, a list of labels, or a runner group's
/// `labels:`; none for an expression or anything else.
pub fn labels(runs_on: &Value) -> Vec<String> {
    let strings = |v: &Value| -> Vec<String> {
        match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    };
    match runs_on {
        Value::Object(map) => map.get("labels").map(strings).unwrap_or_default(),
        other => strings(other),
    }
}

/// What a `runs-on` value implies: the OS and architecture of the one hosted label in
/// it, with that label. Self-hosted runners (a `self-hosted` label, a runner group) and
/// expressions imply nothing.
pub fn implied(runs_on: &Value) -> Option<(&'static str, &'static str, String)> {
    if runs_on.is_object() {
        return None;
    }
    let labels = labels(runs_on);
    if labels
        .iter()
        .any(|l| l.eq_ignore_ascii_case("self-hosted") || l.contains("${{"))
    {
        return None;
    }
    labels
        .iter()
        .find_map(|l| hosted_label(l).map(|(os, arch)| (os, arch, l.clone())))
}

/// `arch` as Rust names it (`std::env::consts::ARCH`): `x64`/`amd64` are `x86_64`,
/// `arm64` is `aarch64`; `None` for an architecture no machine reports.
pub fn normal_arch(arch: &str) -> Option<&'static str> {
    let arch = arch.trim().to_ascii_lowercase();
    Some(match arch.as_str() {
        "x86_64" | "x64" | "amd64" => "x86_64",
        "aarch64" | "arm64" => "aarch64",
        "x86" | "i386" | "i686" => "x86",
        "arm" | "armv7" => "arm",
        "riscv64" => "riscv64",
        "powerpc64" | "ppc64le" | "ppc64" => "powerpc64",
        "s390x" => "s390x",
        "loongarch64" => "loongarch64",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hosted_labels_imply_os_and_arch() {
        for (label, os, arch) in [
            ("ubuntu-latest", "linux", "x86_64"),
            ("ubuntu-24.04", "linux", "x86_64"),
            ("ubuntu-22.04", "linux", "x86_64"),
            ("ubuntu-24.04-arm", "linux", "aarch64"),
            ("ubuntu-slim", "linux", "x86_64"),
            ("windows-latest", "windows", "x86_64"),
            ("windows-2022", "windows", "x86_64"),
            ("windows-11-arm", "windows", "aarch64"),
            ("macos-latest", "macos", "aarch64"),
            ("macos-15", "macos", "aarch64"),
            ("macos-26", "macos", "aarch64"),
            ("macos-13", "macos", "x86_64"),
            ("macos-15-intel", "macos", "x86_64"),
            ("macos-14-large", "macos", "x86_64"),
            ("macos-14-xlarge", "macos", "aarch64"),
            ("Ubuntu-Latest", "linux", "x86_64"),
        ] {
            assert_eq!(hosted_label(label), Some((os, arch)), "{label}");
        }
        for label in [
            "self-hosted",
            "linux",
            "ubuntu",
            "ubuntu-latest-16-cores",
            "macos-weird",
            "my-runner",
        ] {
            assert_eq!(hosted_label(label), None, "{label}");
        }
    }

    #[test]
    fn self_hosted_groups_and_expressions_imply_nothing() {
        assert_eq!(
            implied(&json!("windows-latest")),
            Some(("windows", "x86_64", "windows-latest".to_owned()))
        );
        assert_eq!(implied(&json!(["self-hosted", "ubuntu-latest"])), None);
        assert_eq!(
            implied(&json!({"group": "big", "labels": ["ubuntu-latest"]})),
            None
        );
        assert_eq!(implied(&json!("${{ matrix.os }}")), None);
        assert_eq!(implied(&json!(["linux", "x64"])), None);
    }

    #[test]
    fn arch_aliases() {
        assert_eq!(normal_arch("x64"), Some("x86_64"));
        assert_eq!(normal_arch("ARM64"), Some("aarch64"));
        assert_eq!(normal_arch("sparc"), None);
    }
}
