//! The Action's install step (`action/install.sh`) picks the release asset of every
//! runner the release builds for — Linux x64/ARM64 (musl), macOS x64/ARM64, Windows x64 —
//! downloads it and its `.sha256` from the release (here a local HTTP server), checks the
//! digest and puts the binary on `PATH`; a digest that does not match fails the step and
//! never falls back to building.
//!
//! The asset served for every target holds the same small program (a script printing
//! the version): what is tested is which asset is asked for and how it is checked, on
//! this machine; the binaries themselves are built by `release.yml`. Local users' installer
//! (`install.sh`) is held to the same: its asset, its digest, nothing installed on a
//! mismatch.
#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::repo_root;

const VERSION: &str = "9.8.7";

/// Serves the files under `root` over HTTP on 127.0.0.1 (GET only; 404 when missing),
/// recording each request's path.
fn serve(root: &Path) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let (root, seen) = (root.to_path_buf(), requests.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            // The headers, up to the blank line.
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
            seen.lock().unwrap().push(path.clone());
            let file = root.join(path.trim_start_matches('/'));
            let response = match std::fs::read(&file) {
                Ok(body) if !path.contains("..") => {
                    let mut r = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    r.extend(body);
                    r
                }
                _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec(),
            };
            let _ = stream.write_all(&response);
        }
    });
    (port, requests)
}

/// The release: for each target, `cargo-verify-matrix-VERSION-TARGET.tar.gz` holding a
/// program that prints the version, and its `.sha256` (wrong for `bad_digest`).
fn release(dir: &Path, targets: &[&str], bad_digest: Option<&str>) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let program = bin.join("cargo-verify-matrix");
    std::fs::write(
        &program,
        format!("#!/bin/sh\necho cargo-verify-matrix {VERSION}\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.join(format!("v{VERSION}"));
    std::fs::create_dir_all(&out).unwrap();
    for target in targets {
        let asset = format!("cargo-verify-matrix-{VERSION}-{target}.tar.gz");
        let status = Command::new("tar")
            .arg("-czf")
            .arg(out.join(&asset))
            .arg("-C")
            .arg(&bin)
            .arg("cargo-verify-matrix")
            .status()
            .unwrap();
        assert!(status.success());
        let digest = Command::new("sha256sum")
            .arg(out.join(&asset))
            .output()
            .unwrap();
        let mut digest = String::from_utf8(digest.stdout).unwrap();
        if bad_digest == Some(*target) {
            digest = format!("{}{}", "0".repeat(64), &digest[64..]);
        }
        std::fs::write(out.join(format!("{asset}.sha256")), digest).unwrap();
    }
}

/// Runs the install step as a runner of `os`/`arch` would.
fn install(port: u16, os: &str, arch: &str, temp: &Path) -> std::process::Output {
    let github_path = temp.join("github-path");
    Command::new("bash")
        .arg(repo_root().join("action/install.sh"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", temp)
        .env("VERIFY_MATRIX_COMMAND", "run")
        .env("VERIFY_MATRIX_VERSION", VERSION)
        .env(
            "VERIFY_MATRIX_RELEASES_URL",
            format!("http://127.0.0.1:{port}"),
        )
        .env("GITHUB_ACTION_PATH", repo_root())
        .env("GITHUB_PATH", &github_path)
        .env("RUNNER_TEMP", temp)
        .env("RUNNER_OS", os)
        .env("RUNNER_ARCH", arch)
        .output()
        .unwrap()
}

const RUNNERS: &[(&str, &str, &str)] = &[
    ("Linux", "X64", "x86_64-unknown-linux-musl"),
    ("Linux", "ARM64", "aarch64-unknown-linux-musl"),
    ("macOS", "X64", "x86_64-apple-darwin"),
    ("macOS", "ARM64", "aarch64-apple-darwin"),
    ("Windows", "X64", "x86_64-pc-windows-msvc"),
];

#[test]
fn every_runner_downloads_its_own_asset_checks_it_and_puts_it_on_path() {
    let site = tempfile::tempdir().unwrap();
    let targets: Vec<&str> = RUNNERS.iter().map(|r| r.2).collect();
    release(site.path(), &targets, None);
    let (port, requests) = serve(site.path());
    for (os, arch, target) in RUNNERS {
        let temp = tempfile::tempdir().unwrap();
        requests.lock().unwrap().clear();
        let out = install(port, os, arch, temp.path());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{os}/{arch}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let asset = format!("/v{VERSION}/cargo-verify-matrix-{VERSION}-{target}.tar.gz");
        assert_eq!(
            *requests.lock().unwrap(),
            [asset.clone(), format!("{asset}.sha256")],
            "{os}/{arch}"
        );
        assert!(stdout.contains("SHA-256 verified"), "{os}/{arch}: {stdout}");
        assert!(
            stdout.contains(&format!("cargo-verify-matrix {VERSION}")),
            "{stdout}"
        );
        let on_path = std::fs::read_to_string(temp.path().join("github-path")).unwrap();
        let bin = temp
            .path()
            .join(format!("cargo-verify-matrix-{VERSION}/bin"));
        assert_eq!(on_path.trim(), bin.to_str().unwrap());
        assert!(bin.join("cargo-verify-matrix").is_file());
    }
}

#[test]
fn a_digest_that_does_not_match_fails_and_never_falls_back_to_building() {
    let site = tempfile::tempdir().unwrap();
    release(
        site.path(),
        &["x86_64-pc-windows-msvc"],
        Some("x86_64-pc-windows-msvc"),
    );
    let (port, _) = serve(site.path());
    let temp = tempfile::tempdir().unwrap();
    let out = install(port, "Windows", "X64", temp.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "SHA-256 mismatch for cargo-verify-matrix-9.8.7-x86_64-pc-windows-msvc.tar.gz"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("cargo install"), "{stdout}");
    assert!(!temp.path().join("github-path").exists());
}

/// Runs `install.sh ARGS…` against the release served on `port`, as a user's shell.
fn install_locally(port: u16, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg(repo_root().join("install.sh"))
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env(
            "VERIFY_MATRIX_RELEASES_URL",
            format!("http://127.0.0.1:{port}"),
        )
        .output()
        .unwrap()
}

#[test]
fn the_install_script_puts_this_machines_asset_in_cargos_bin_after_checking_it() {
    let arch = String::from_utf8(Command::new("uname").arg("-m").output().unwrap().stdout).unwrap();
    let native = match arch.trim() {
        "aarch64" | "arm64" => "aarch64-unknown-linux-musl",
        _ => "x86_64-unknown-linux-musl",
    };
    let site = tempfile::tempdir().unwrap();
    let targets: Vec<&str> = RUNNERS.iter().map(|r| r.2).collect();
    release(site.path(), &targets, Some("aarch64-apple-darwin"));
    let (port, requests) = serve(site.path());

    // This machine's asset, into ~/.cargo/bin.
    let home = tempfile::tempdir().unwrap();
    let out = install_locally(port, home.path(), &["--version", VERSION]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let asset = format!("/v{VERSION}/cargo-verify-matrix-{VERSION}-{native}.tar.gz");
    assert_eq!(
        *requests.lock().unwrap(),
        [asset.clone(), format!("{asset}.sha256")]
    );
    let bin = home.path().join(".cargo/bin/cargo-verify-matrix");
    let version = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("cargo-verify-matrix {VERSION}")
    );
    assert!(stdout.contains("is not on PATH"), "{stdout}");

    // Another target's asset, into a folder named; its digest does not match: nothing
    // is installed, and an earlier binary there is left as it was.
    let to = home.path().join("tools");
    std::fs::create_dir_all(&to).unwrap();
    std::fs::write(to.join("cargo-verify-matrix"), "earlier").unwrap();
    let to_arg = to.to_str().unwrap();
    let out = install_locally(
        port,
        home.path(),
        &[
            "--version",
            &format!("v{VERSION}"),
            "--target",
            "aarch64-apple-darwin",
            "--to",
            to_arg,
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "SHA-256 mismatch for cargo-verify-matrix-{VERSION}-aarch64-apple-darwin.tar.gz"
        )) && stderr.contains("nothing was installed"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(to.join("cargo-verify-matrix")).unwrap(),
        "earlier"
    );

    // A release with no asset for the target named, and arguments that are not values.
    let out = install_locally(
        port,
        home.path(),
        &[
            "--version",
            VERSION,
            "--target",
            "riscv64gc-unknown-linux-gnu",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot download"),
        "{out:?}"
    );
    for bad in [
        &["--version", "1.0;rm"][..],
        &["--target", "a b"],
        &["--wat"],
    ] {
        let out = install_locally(port, home.path(), bad);
        assert_eq!(out.status.code(), Some(1), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("install.sh: error:"),
            "{out:?}"
        );
    }
}

/// What a hostile release could hand the installer: a link named as the binary, a
/// digest file with no digest on a machine with no tool to compute one. Nothing is
/// installed, nothing outside `--to` is touched; an upper-case digest is still a digest.
#[test]
fn the_install_script_installs_nothing_from_a_release_it_cannot_check() {
    use std::os::unix::fs::PermissionsExt as _;
    let target = "x86_64-unknown-linux-musl";
    let asset = format!("cargo-verify-matrix-{VERSION}-{target}.tar.gz");
    let site = tempfile::tempdir().unwrap();
    let out = site.path().join(format!("v{VERSION}"));
    std::fs::create_dir_all(&out).unwrap();
    let home = tempfile::tempdir().unwrap();
    let victim = home.path().join("victim");
    std::fs::write(&victim, "secret").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The asset's only entry is a link to the victim, with a true digest.
    let packed = site.path().join("packed");
    std::fs::create_dir_all(&packed).unwrap();
    std::os::unix::fs::symlink(&victim, packed.join("cargo-verify-matrix")).unwrap();
    let status = Command::new("tar")
        .arg("-czf")
        .arg(out.join(&asset))
        .arg("-C")
        .arg(&packed)
        .arg("cargo-verify-matrix")
        .status()
        .unwrap();
    assert!(status.success());
    let digest = Command::new("sha256sum")
        .arg(out.join(&asset))
        .output()
        .unwrap();
    // Upper case, as some tools write it.
    std::fs::write(
        out.join(format!("{asset}.sha256")),
        String::from_utf8(digest.stdout).unwrap().to_uppercase(),
    )
    .unwrap();
    let (port, _) = serve(site.path());
    let to = home.path().join("bin");
    let args = [
        "--version",
        VERSION,
        "--target",
        target,
        "--to",
        to.to_str().unwrap(),
    ];
    let out_link = install_locally(port, home.path(), &args);
    let stderr = String::from_utf8_lossy(&out_link.stderr);
    assert_eq!(out_link.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is not a regular file"), "{stderr}");
    assert!(!to.join("cargo-verify-matrix").exists());
    let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret");

    // An empty digest file, on a machine with no sha256sum or shasum.
    std::fs::write(out.join(format!("{asset}.sha256")), "").unwrap();
    let tools = home.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    for tool in [
        "sh", "curl", "tar", "gzip", "awk", "mktemp", "cat", "chmod", "mv", "mkdir", "rm", "uname",
        "sed", "cp",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .unwrap();
        let found = String::from_utf8(found.stdout).unwrap();
        std::os::unix::fs::symlink(found.trim(), tools.join(tool)).unwrap();
    }
    let out = Command::new(tools.join("sh"))
        .arg(repo_root().join("install.sh"))
        .args(args)
        .env_clear()
        .env("PATH", &tools)
        .env("HOME", home.path())
        .env(
            "VERIFY_MATRIX_RELEASES_URL",
            format!("http://127.0.0.1:{port}"),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("neither sha256sum nor shasum"), "{stderr}");
    assert!(!to.join("cargo-verify-matrix").exists());
}
