//! The ways into an environment beyond a `command`: a container through its engine's
//! client, a Compose service, a dev container, a remote host over ssh — each entered
//! for real.
//!
//! - **Containers.** Rootless podman cannot start a container on machines like CI's
//!   (itself an unprivileged container: crun is refused `setrlimit RLIMIT_NOFILE`);
//!   `real_podman_runs_the_container_or_blocks_it_with_its_own_words` runs the real
//!   podman with an image imported from a debootstrapped Debian 12 and asserts either
//!   outcome. The adapter's full argv and the supervisor's contract inside are tested
//!   with `tests/fixtures/enter/standin/podman` as the engine: it takes podman's words
//!   and runs the container with bubblewrap over that same root (PID namespace, only
//!   the variables given, `/run/.containerenv` as podman writes it).
//! - **Dev containers.** The real devcontainer CLI; without a Docker engine `up` fails,
//!   and the environment is blocked with the CLI's own words.
//! - **ssh.** A real sshd on 127.0.0.1 with a throwaway key; the remote folder is
//!   another folder of this machine.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{Project, check_in as check, repo_root, signal, start_until_alive};
use serde_json::Value;

/// The debootstrapped Debian 12 (scripts/test.sh makes it: VERIFY_MATRIX_ROOTFS).
fn rootfs() -> PathBuf {
    let root = std::env::var_os("VERIFY_MATRIX_ROOTFS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/tools/rootfs-bookworm"));
    assert!(
        root.join("bin/sh").exists() && root.join("etc/debian_version").exists(),
        "no Debian root at {} (scripts/test.sh debootstraps it)",
        root.display()
    );
    root
}

/// The stand-in engine's folder, first on PATH.
fn standin_path() -> String {
    let standin = repo_root().join("tests/fixtures/enter/standin");
    format!(
        "{}:{}",
        standin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The tool in `project` with the stand-in engine as `podman`: `images` are the images
/// it knows (name, root folder).
fn with_standin(project: &Project, images: &[(&str, &Path)]) -> Command {
    let mut cmd = project.std_cmd();
    let images: Vec<String> = images
        .iter()
        .map(|(name, root)| format!("{name}={}", root.display()))
        .collect();
    cmd.env("PATH", standin_path())
        .env("STANDIN_IMAGES", images.join(";"))
        .env("STANDIN_STATE", project.path().join(".standin"));
    cmd
}

/// What `cmd` printed, which must have ended with exit `code` saying `said`.
fn ends_saying(mut cmd: Command, code: i32, said: &str) -> String {
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(code), "{stdout}");
    assert!(stdout.contains(said), "{stdout}");
    stdout
}

/// A manifest with a host environment, `debian12` entered through `enter`, and
/// `checks`.
fn manifest(enter: &str, checks: &str) -> String {
    format!(
        "version: 1\nenvironments:\n  - name: host\n  - name: debian12\n    container: localhost/debian:12\n    enter: {enter}\nchecks:\n{checks}"
    )
}

/// A check that passes only inside the Debian root: bubblewrap is on this machine,
/// not in the minimal root.
const INSIDE: &str = "  - id: where\n    run: 'echo \"in $VERIFY_MATRIX_ENV, link ${VERIFY_MATRIX_LINK:-hidden}\"; cat /etc/debian_version; test ! -e /usr/bin/bwrap; touch inside.txt'\n";

#[test]
fn a_container_is_entered_through_its_engine_and_the_result_has_its_facts() {
    let root = rootfs();
    let project = Project::new(&manifest("{ container: { engine: podman } }", INSIDE));
    let out = with_standin(&project, &[("localhost/debian:12", &root)])
        .args(["run", "--env", "debian12"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(project.path().join("inside.txt").exists());
    let result = project.json("verify-matrix-results/verify-matrix-debian12.json");
    assert_eq!(check(&result, "where")["status"], "PASS");
    // The machine inside: Debian 12, in a container, by podman's own sign.
    assert_eq!(
        result["runner"]["os_name"],
        "Debian GNU/Linux 12 (bookworm)"
    );
    assert_eq!(result["runner"]["container"], true, "{}", result["runner"]);
    assert_eq!(result["runner"]["container_runtime"], "podman");
    let log = project.read("verify-matrix-results/logs/debian12/where.log");
    // The link is the supervisor's, not the checks'.
    assert!(log.contains("in debian12, link hidden"), "{log}");
    assert!(log.contains("12."), "{log}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("in a container (podman)"), "{stdout}");
}

#[test]
fn an_interrupt_reaches_the_run_in_a_container_through_its_link() {
    let root = rootfs();
    let project = Project::new(&manifest(
        "{ container: { engine: podman } }",
        "  - id: quick\n    run: 'true'\n    environment: debian12\n  - id: slow\n    run: sleep 61.81\n    environment: debian12\n",
    ));
    let mut cmd = with_standin(&project, &[("localhost/debian:12", &root)]);
    cmd.args(["run", "--env", "debian12"]);
    let mut tool = start_until_alive(cmd, "sleep 61.81");
    signal(tool.id(), "TERM");
    assert_eq!(tool.wait().unwrap().code(), Some(130));
    let result = project.json("verify-matrix-results/verify-matrix-debian12.json");
    assert_eq!(result["outcome"], "interrupted");
    assert_eq!(check(&result, "quick")["status"], "PASS");
    // No signal of this machine reaches inside; the closed link did.
    let slow = check(&result, "slow")["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(slow.starts_with("interrupted by SIGHUP"), "{slow}");
    assert!(common::wait_until_gone("sleep 61.81"));
}

#[test]
fn an_image_without_a_shell_is_blocked_and_the_other_environments_still_run() {
    let bare = tempfile::tempdir().unwrap();
    for dir in ["tmp", "opt", "run", "dev", "proc", "etc"] {
        std::fs::create_dir_all(bare.path().join(dir)).unwrap();
    }
    let project = Project::new(&manifest(
        "{ container: { engine: podman, image: localhost/bare } }",
        "  - { id: a, run: 'true' }\n",
    ));
    let mut cmd = with_standin(&project, &[("localhost/bare", bare.path())]);
    cmd.args(["run", "--all"]);
    let stdout = ends_saying(
        cmd,
        3,
        "debian12: could not be entered: its way in exited with 1 and wrote no result: bwrap: execvp /bin/sh: No such file or directory",
    );
    assert!(!stdout.contains("VERIFIED\n"), "{stdout}");
    let host = project.json("verify-matrix-results/verify-matrix-host.json");
    assert_eq!(check(&host, "a")["status"], "PASS");
}

#[test]
fn a_supervisor_that_cannot_run_inside_is_blocked_with_the_loaders_words() {
    // An image with a shell and the C library, but not the libraries the tool needs
    // (as a musl or distroless image would be for this build).
    let image = tempfile::tempdir().unwrap();
    for dir in ["tmp", "opt", "run", "dev", "proc", "bin"] {
        std::fs::create_dir_all(image.path().join(dir)).unwrap();
    }
    let shell = std::fs::canonicalize("/bin/sh").unwrap();
    std::fs::copy(&shell, image.path().join("bin/sh")).unwrap();
    let ldd = Command::new("ldd").arg(&shell).output().unwrap();
    for lib in String::from_utf8_lossy(&ldd.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
    {
        let to = image.path().join(lib.trim_start_matches('/'));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(lib, to).unwrap();
    }
    let project = Project::new(&manifest(
        "{ container: { engine: podman, image: localhost/slim } }",
        "  - { id: a, run: 'true' }\n",
    ));
    let mut cmd = with_standin(&project, &[("localhost/slim", image.path())]);
    cmd.args(["run", "--env", "debian12"]);
    ends_saying(
        cmd,
        3,
        "debian12: could not be entered: its way in exited with 127 and wrote no result: /opt/cargo-verify-matrix/bin/cargo-verify-matrix: error while loading shared libraries: lib",
    );
}

#[test]
fn an_image_the_engine_does_not_have_is_blocked_with_the_engines_words() {
    let project = Project::new(&manifest(
        "{ container: { engine: podman } }",
        "  - { id: a, run: 'true' }\n",
    ));
    let mut cmd = with_standin(&project, &[]);
    cmd.args(["run", "--env", "debian12"]);
    ends_saying(
        cmd,
        3,
        "could not be entered: its way in exited with 125 and wrote no result: Error: localhost/debian:12: image not known",
    );
}

#[test]
fn a_compose_service_is_entered_with_the_repository_at_its_own_path() {
    let root = rootfs();
    let project = Project::new(&manifest(
        "{ compose: { engine: podman, service: api } }",
        INSIDE,
    ));
    project.write(
        "compose.yaml",
        "services:\n  db:\n    image: localhost/postgres\n  api:\n    image: localhost/debian:12\n",
    );
    let out = with_standin(&project, &[("localhost/debian:12", &root)])
        .args(["run", "--env", "debian12"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(project.path().join("inside.txt").exists());
    let result = project.json("verify-matrix-results/verify-matrix-debian12.json");
    assert_eq!(check(&result, "where")["status"], "PASS");
    assert_eq!(result["runner"]["container"], true);
}

#[test]
fn real_podman_runs_the_container_or_blocks_it_with_its_own_words() {
    let root = rootfs();
    let image = "localhost/verify-matrix-debian:12";
    let exists = Command::new("podman")
        .args(["image", "exists", image])
        .status()
        .expect("podman is installed (scripts/test.sh installs Debian's podman)");
    if !exists.success() {
        let mut tar = Command::new("tar")
            .arg("-C")
            .arg(&root)
            .args(["-c", "."])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let imported = Command::new("podman")
            .args(["import", "--quiet", "-", image])
            .stdin(tar.stdout.take().unwrap())
            .output()
            .unwrap();
        assert!(tar.wait().unwrap().success());
        assert!(imported.status.success(), "{imported:?}");
    }
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: debian12\n    container: {image}\n    enter: {{ container: {{ engine: podman }} }}\nchecks:\n{INSIDE}"
    ));
    let out = project
        .std_cmd()
        .args(["run", "--env", "debian12"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let probe = Command::new("podman")
        .args(["run", "--rm", image, "/bin/true"])
        .output()
        .unwrap();
    if probe.status.success() {
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        let result = project.json("verify-matrix-results/verify-matrix-debian12.json");
        assert_eq!(check(&result, "where")["status"], "PASS");
        assert_eq!(result["runner"]["container_runtime"], "podman");
    } else {
        // Podman cannot start a container here; the environment is blocked with what
        // its runtime said, word for word.
        let said = String::from_utf8_lossy(&probe.stderr);
        let said = said.trim().lines().last().unwrap_or_default();
        #[allow(clippy::print_stderr)]
        {
            eprintln!("podman cannot start containers on this machine: {said}");
        }
        assert_eq!(out.status.code(), Some(3), "{stdout}");
        assert!(
            stdout.contains("debian12: could not be entered: its way in exited with"),
            "{stdout}"
        );
        let reason = stdout
            .lines()
            .find(|l| l.starts_with("  - debian12: could not be entered"))
            .unwrap_or_default();
        let start: String = said.chars().take(60).collect();
        assert!(reason.contains(&start), "{reason} lacks {said}");
    }
}

#[test]
fn a_dev_container_is_brought_up_by_the_real_cli_or_blocked_with_its_words() {
    let cli = std::env::var_os("VERIFY_MATRIX_DEVCONTAINER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            repo_root().join("target/tools/devcontainer/node_modules/.bin/devcontainer")
        });
    assert!(
        cli.exists(),
        "no devcontainer CLI at {} (scripts/test.sh installs it)",
        cli.display()
    );
    let project = Project::new(&manifest("{ devcontainer: . }", INSIDE));
    project.write(
        ".devcontainer/devcontainer.json",
        "{ \"image\": \"localhost/verify-matrix-debian:12\" }\n",
    );
    let bin = cli.parent().unwrap();
    let mut cmd = project.std_cmd();
    cmd.env(
        "PATH",
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    )
    .args(["run", "--all"]);
    // No Docker engine answers on these machines: `devcontainer up` fails asking it
    // for its containers, and says so. (The host fails the check, which passes only
    // inside.)
    ends_saying(
        cmd,
        1,
        "debian12: could not be entered: `devcontainer up` exited with 1: Command failed: docker ps",
    );
    let host = project.json("verify-matrix-results/verify-matrix-host.json");
    assert_eq!(check(&host, "where")["status"], "FAIL");
}

/// A real sshd on 127.0.0.1 with a throwaway host key and client key, stopped when
/// dropped.
struct Sshd {
    dir: tempfile::TempDir,
    port: u16,
    child: std::process::Child,
}

impl Sshd {
    fn start() -> Sshd {
        let dir = tempfile::tempdir().unwrap();
        for key in ["host_key", "key"] {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.path().join(key))
                .status()
                .expect("ssh-keygen (scripts/test.sh installs openssh-client)");
            assert!(made.success());
        }
        std::fs::copy(
            dir.path().join("key.pub"),
            dir.path().join("authorized_keys"),
        )
        .unwrap();
        // sshd's privilege separation folder.
        let _ = std::fs::create_dir_all("/run/sshd");
        let config = dir.path().join("sshd_config");
        // A free port, unless another process takes it first: then another try.
        for _ in 0..20 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .unwrap()
                .port();
            std::fs::write(
                &config,
                format!(
                    "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\nPubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\nPidFile none\n",
                    d = dir.path().display()
                ),
            )
            .unwrap();
            let mut child = Command::new("/usr/sbin/sshd")
                .args(["-D", "-e", "-f"])
                .arg(&config)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("sshd (scripts/test.sh installs openssh-server)");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Sshd { dir, port, child };
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("sshd did not start on 127.0.0.1");
    }

    /// `enter.ssh` for this server, copying to `path`.
    fn enter(&self, path: &Path) -> String {
        format!(
            "{{ ssh: {{ host: 127.0.0.1, port: {}, path: '{}', options: [-i, '{}', -o, StrictHostKeyChecking=no, -o, UserKnownHostsFile=/dev/null, -o, LogLevel=ERROR] }} }}",
            self.port,
            path.display(),
            self.dir.path().join("key").display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_remote_host_gets_the_files_runs_the_checks_and_sends_the_results_home() {
    let sshd = Sshd::start();
    let remote = tempfile::tempdir().unwrap();
    let there = remote.path().join("work");
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: host\n  - name: box\n    enter: {}\nchecks:\n  - id: where\n    run: 'echo \"at $PWD\"; test \"$PWD\" = {}; cat data.txt'\n",
        sshd.enter(&there),
        there.display()
    ));
    project.git(&["init", "-q"]);
    project.write("data.txt", "first\n");
    project.write(".gitignore", "ignored.txt\nverify-matrix-results/\n");
    project.write("ignored.txt", "not copied\n");
    let run = || {
        project
            .std_cmd()
            .args(["run", "--env", "box"])
            .output()
            .unwrap()
    };
    let out = run();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let result = project.json("verify-matrix-results/verify-matrix-box.json");
    assert_eq!(check(&result, "where")["status"], "PASS");
    let log = project.read("verify-matrix-results/logs/box/where.log");
    assert!(log.contains(&format!("at {}", there.display())), "{log}");
    assert!(log.contains("first"), "{log}");
    assert!(there.join("data.txt").exists());
    assert!(
        !there.join("ignored.txt").exists(),
        "an ignored file was copied"
    );
    let binary = there.join(".verify-matrix/bin/cargo-verify-matrix");
    let sent = std::fs::metadata(&binary).unwrap().modified().unwrap();

    // A file deleted here is gone there; the binary is not sent again.
    std::fs::remove_file(project.path().join("data.txt")).unwrap();
    let out = run();
    assert_eq!(out.status.code(), Some(1));
    assert!(!there.join("data.txt").exists());
    assert_eq!(
        std::fs::metadata(&binary).unwrap().modified().unwrap(),
        sent
    );
    let result = project.json("verify-matrix-results/verify-matrix-box.json");
    assert_eq!(check(&result, "where")["status"], "FAIL");
}

#[test]
fn an_interrupt_reaches_the_remote_run_and_what_it_wrote_comes_home() {
    let sshd = Sshd::start();
    let remote = tempfile::tempdir().unwrap();
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: box\n    enter: {}\nchecks:\n  - {{ id: quick, run: 'true' }}\n  - {{ id: slow, run: sleep 61.82 }}\n",
        sshd.enter(&remote.path().join("work")),
    ));
    let mut cmd = project.std_cmd();
    cmd.args(["run", "--env", "box"]);
    let mut tool = start_until_alive(cmd, "sleep 61.82");
    signal(tool.id(), "INT");
    assert_eq!(tool.wait().unwrap().code(), Some(130));
    assert!(common::wait_until_gone("sleep 61.82"));
    let result = project.json("verify-matrix-results/verify-matrix-box.json");
    assert_eq!(result["outcome"], "interrupted");
    assert_eq!(check(&result, "quick")["status"], "PASS");
    assert!(
        project
            .path()
            .join("verify-matrix-results/logs/box/slow.log")
            .exists()
    );
}

#[test]
fn a_host_that_does_not_answer_blocks_its_environment() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - name: host\n  - name: box\n    enter: {{ ssh: {{ host: 127.0.0.1, port: {port}, path: /srv/work }} }}\nchecks:\n  - {{ id: a, run: 'true' }}\n"
    ));
    let mut cmd = project.std_cmd();
    cmd.args(["run", "--all"]);
    ends_saying(
        cmd,
        3,
        &format!(
            "box: could not be entered: `127.0.0.1` did not answer over ssh: `ssh` exited with 255: ssh: connect to host 127.0.0.1 port {port}: Connection refused"
        ),
    );
    let host = project.json("verify-matrix-results/verify-matrix-host.json");
    assert_eq!(check(&host, "a")["status"], "PASS");
    // The coordinator's signal: the environment is INFRA_BLOCKED.
    let signal = project
        .std_cmd()
        .args(["run", "--all", "--format", "signal"])
        .output()
        .unwrap();
    let signal = String::from_utf8_lossy(&signal.stdout);
    assert!(
        signal.starts_with(
            "INFRA_BLOCKED: verify-matrix.yml\n\nIssue: Environment 'box' unavailable\n"
        ),
        "{signal}"
    );
}

#[test]
fn each_way_in_names_what_is_wrong_with_it_at_its_place() {
    let project =
        Project::new("version: 1\nenvironments: [{name: a}]\nchecks: [{id: x, run: 'true'}]\n");
    project.write("compose.yaml", "services:\n  api:\n    image: x\n");
    project.write(".devcontainer/devcontainer.json", "{}\n");
    for (enter, place, expected) in [
        (
            "{ container: { engine: podmn, image: x } }",
            "bad.yml:6:30 (environments[1].enter.container.engine)",
            "unknown container engine `podmn` (did you mean `podman`?); give `docker` or `podman`",
        ),
        (
            "{ container: { engine: docker } }",
            "bad.yml:6:20 (environments[1].enter.container)",
            "`enter.container` has no image: give `image`, or the environment's `container`",
        ),
        (
            "{ compose: { file: other.yaml, service: api } }",
            "bad.yml:6:26 (environments[1].enter.compose.file)",
            "`other.yaml` does not exist",
        ),
        (
            "{ compose: { service: apj } }",
            "bad.yml:6:29 (environments[1].enter.compose.service)",
            "service `apj` is not in `compose.yaml` (did you mean `api`?); it defines: api",
        ),
        (
            "{ compose: { file: ../../etc/compose.yaml, service: api } }",
            "bad.yml:6:26 (environments[1].enter.compose.file)",
            "`../../etc/compose.yaml` is outside the repository; give a path inside it",
        ),
        (
            "{ devcontainer: /etc }",
            "bad.yml:6:23 (environments[1].enter.devcontainer)",
            "`/etc` is outside the repository; give a path inside it",
        ),
        (
            "{ devcontainer: sub }",
            "bad.yml:6:23 (environments[1].enter.devcontainer)",
            "`sub` has no dev container configuration in the repository",
        ),
        (
            "{ ssh: { host: box, path: srv/work } }",
            "bad.yml:6:33 (environments[1].enter.ssh.path)",
            "`enter.ssh.path` is relative (`srv/work`); give the absolute path of the folder on `box` the repository is copied to",
        ),
        (
            "{ ssh: { host: box, path: /w }, container: { image: x } }",
            "bad.yml:6:14 (environments[1].enter.ssh)",
            "`enter` gives more than one way in (`container`, `ssh`); give one",
        ),
        (
            "{ }",
            "bad.yml:6:7 (environments[1].enter)",
            "`enter` says no way in; give one of `command`, `container`, `compose`, `devcontainer`, `ssh`",
        ),
    ] {
        let manifest = format!(
            "version: 1\nenvironments:\n  - name: host\n  - name: inside\n    enter:\n      {enter}\nchecks:\n  - {{ id: x, run: 'true' }}\n"
        );
        project.write("bad.yml", &manifest);
        let out = project
            .std_cmd()
            .args(["plan", "--manifest", "bad.yml"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{enter}: {stderr}");
        assert!(stderr.contains(expected), "{enter}:\n{stderr}");
        assert!(stderr.contains(place), "{enter}:\n{stderr}");
    }
}

#[test]
fn a_dev_container_found_by_its_folder_passes_the_manifest_check_and_github_ignores_it() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - name: dev\n    runs-on: ubuntu-latest\n    enter: { devcontainer: . }\nchecks:\n  - { id: x, run: 'true' }\n",
    );
    project.write(".devcontainer.json", "{}\n");
    let out = project.std_cmd().args(["plan"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // On GitHub each environment is its own job: `plan --format github` ignores `enter`.
    let github = project
        .std_cmd()
        .args(["plan", "--format", "github"])
        .output()
        .unwrap();
    let plan: Value = serde_json::from_slice(&github.stdout).unwrap();
    assert!(!plan.to_string().contains("devcontainer"), "{plan}");
    assert!(plan.to_string().contains("ubuntu-latest"), "{plan}");
}
