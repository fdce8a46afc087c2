//! The facts of this machine that a result records (docs/formats.md §2, `runner`): OS
//! and version, architecture, kernel, C library, container, a salted digest of the
//! machine's id, hostname, and under GitHub Actions or GitLab CI what the runner and
//! job say of themselves.
//!
//! What differs by OS is read by [`super::platform`]; files are read under a root
//! folder (`/`), which the tests (debug builds only, `VERIFY_MATRIX_FACTS_ROOT`) point
//! at a folder of their own.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::platform;
use crate::actions_env::ActionsEnv;
use crate::plan::identity::Machine;
use crate::results::schema::{ActionsRunner, GitLabJob, Runner};

/// This machine's facts.
pub fn this_machine(actions: &ActionsEnv) -> Runner {
    let root = facts_root();
    let os_facts = platform::os_facts(&root);
    let (container, container_runtime) = match platform::container(&root) {
        Some(runtime) => (Some(true), runtime),
        None => (Some(false), None),
    };
    Runner {
        os: std::env::consts::OS.to_owned(),
        arch: std::env::consts::ARCH.to_owned(),
        hostname: platform::hostname(),
        os_name: os_facts.name,
        os_version: os_facts.version,
        kernel: os_facts.kernel,
        libc: os_facts.libc,
        container,
        container_runtime,
        machine: platform::machine_id(&root).map(|id| salted(&id)),
        actions: actions.actions.then(|| actions_runner(actions)),
        gitlab: actions.gitlab.as_ref().map(gitlab_job),
        detected: Default::default(),
    }
}

/// What `runner` (a result's facts) says of its machine for identity checks: nothing
/// for a format-1 result, which did not record its facts.
pub fn machine_of(format_version: u32, runner: &Runner) -> Machine {
    crate::results::identity::machine_of(format_version, runner)
}

/// A machine as identity checks see it, from facts this build found.
pub fn this(facts: &Runner) -> Machine {
    machine_of(crate::results::schema::FORMAT_VERSION, facts)
}

/// The OS's own name and version, its kernel and C library.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OsFacts {
    pub name: Option<String>,
    pub version: Option<String>,
    pub kernel: Option<String>,
    pub libc: Option<String>,
}

/// The folder facts files are read under: `/`, or in a debug build what
/// `VERIFY_MATRIX_FACTS_ROOT` names (for tests).
fn facts_root() -> PathBuf {
    if cfg!(debug_assertions)
        && let Some(root) = std::env::var_os("VERIFY_MATRIX_FACTS_ROOT")
    {
        return PathBuf::from(root);
    }
    PathBuf::from("/")
}

/// `path` (absolute, as on the machine) under `root`.
// Read by the Linux platform module; tested on every system.
#[allow(dead_code)]
pub(super) fn under(root: &Path, path: &str) -> PathBuf {
    root.join(path.trim_start_matches('/'))
}

/// A digest of a machine id: stable for the machine, and nothing of the id.
fn salted(id: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"cargo-verify-matrix machine\0");
    hasher.update(id.trim().as_bytes());
    hasher.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn actions_runner(env: &ActionsEnv) -> ActionsRunner {
    ActionsRunner {
        os: env.runner_os.clone(),
        arch: env.runner_arch.clone(),
        name: env.runner_name.clone(),
        environment: env.runner_environment.clone(),
        image_os: env.image_os.clone(),
        image_version: env.image_version.clone(),
        job: env.job.clone(),
        run_attempt: env.run_attempt.as_deref().and_then(|a| a.parse().ok()),
    }
}

fn gitlab_job(env: &crate::actions_env::GitLabEnv) -> GitLabJob {
    let number = |v: &Option<String>| v.as_deref().and_then(|n| n.parse().ok());
    GitLabJob {
        job_id: number(&env.job_id),
        job_name: env.job_name.clone(),
        pipeline_id: number(&env.pipeline_id),
        runner_id: number(&env.runner_id),
        runner_tags: env.runner_tags(),
        runner_description: env.runner_description.clone(),
        image: env.job_image.clone(),
        commit: env.commit_sha.clone(),
    }
}

/// `/etc/os-release` (or `/usr/lib/os-release`): `PRETTY_NAME` and `VERSION_ID`.
// Read by the Linux platform module; tested on every system.
#[allow(dead_code)]
pub(super) fn os_release(root: &Path) -> (Option<String>, Option<String>) {
    let text = ["/etc/os-release", "/usr/lib/os-release"]
        .iter()
        .find_map(|p| std::fs::read_to_string(under(root, p)).ok())
        .unwrap_or_default();
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches(['"', '\'']).to_owned())
            .filter(|v| !v.is_empty())
    };
    (
        field("PRETTY_NAME").or_else(|| field("NAME")),
        field("VERSION_ID"),
    )
}

/// Whether the process is inside a container, and its runtime when known, by the
/// usual signs: `/.dockerenv` (Docker), `/run/.containerenv` (Podman), systemd's
/// `container` variable, a container's cgroup.
// Read by the Linux platform module; tested on every system.
#[allow(dead_code)]
pub(super) fn linux_container(
    root: &Path,
    container_var: Option<String>,
) -> Option<Option<String>> {
    if under(root, "/.dockerenv").exists() {
        return Some(Some("docker".to_owned()));
    }
    if under(root, "/run/.containerenv").exists() {
        return Some(Some("podman".to_owned()));
    }
    if let Some(runtime) = container_var.filter(|v| !v.trim().is_empty()) {
        return Some(Some(runtime.trim().to_owned()));
    }
    let cgroup = std::fs::read_to_string(under(root, "/proc/1/cgroup")).unwrap_or_default();
    for (sign, runtime) in [
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("libpod", "podman"),
        ("containerd", "containerd"),
        ("lxc", "lxc"),
    ] {
        if cgroup.lines().any(|l| l.contains(sign)) {
            return Some(Some(runtime.to_owned()));
        }
    }
    None
}

/// `/etc/machine-id`, else D-Bus's copy of it.
// Read by the Linux platform module; tested on every system.
#[allow(dead_code)]
pub(super) fn linux_machine_id(root: &Path) -> Option<String> {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| std::fs::read_to_string(under(root, p)).ok())
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = under(dir.path(), path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn os_release_gives_the_name_and_version() {
        let dir = root(&[(
            "/etc/os-release",
            "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n",
        )]);
        assert_eq!(
            os_release(dir.path()),
            (
                Some("Debian GNU/Linux 12 (bookworm)".into()),
                Some("12".into())
            )
        );
        assert_eq!(os_release(root(&[]).path()), (None, None));
    }

    #[test]
    fn containers_are_told_by_their_usual_signs() {
        assert_eq!(
            linux_container(root(&[("/.dockerenv", "")]).path(), None),
            Some(Some("docker".into()))
        );
        assert_eq!(
            linux_container(root(&[("/run/.containerenv", "")]).path(), None),
            Some(Some("podman".into()))
        );
        assert_eq!(
            linux_container(root(&[]).path(), Some("lxc".into())),
            Some(Some("lxc".into()))
        );
        assert_eq!(
            linux_container(
                root(&[("/proc/1/cgroup", "0::/kubepods/burstable/pod1/abc\n")]).path(),
                None
            ),
            Some(Some("kubernetes".into()))
        );
        assert_eq!(
            linux_container(root(&[("/proc/1/cgroup", "0::/\n")]).path(), None),
            None
        );
    }

    #[test]
    fn the_machine_id_is_salted_and_stable() {
        let dir = root(&[("/etc/machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n")]);
        let id = linux_machine_id(dir.path()).unwrap();
        let digest = salted(&id);
        assert_eq!(digest.len(), 16);
        assert!(!digest.contains("3d1219"));
        assert_eq!(digest, salted("3d1219c7c4c5404aaa1f6d2a48adfda4"));
    }
}
