//! The manifest through the real binary: every invalid fixture gives its exact message
//! and exit code 4; discovery; Cargo.toml metadata; the cargo subcommand spelling.

mod common;

use common::{Project, bin, repo_root};
use predicates::prelude::*;

#[test]
fn every_invalid_manifest_fixture_gives_its_expected_message_and_exit_4() {
    let dir = repo_root().join("fixtures/manifests/invalid");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yml") {
            continue;
        }
        let name = path.file_name().unwrap().to_str().unwrap();
        let expected = std::fs::read_to_string(path.with_extension("expected"))
            .unwrap_or_else(|_| panic!("{name} has no .expected file"));
        let output = bin()
            .current_dir(&dir)
            .args(["plan", "--manifest", name])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(4), "{name}: exit code");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            expected,
            "{name}: message"
        );
        assert!(output.stdout.is_empty(), "{name}: nothing on stdout");
        seen += 1;
    }
    assert!(seen >= 20, "only {seen} invalid fixtures found");
}

#[test]
fn every_message_names_file_line_column_and_key_path() {
    let dir = repo_root().join("fixtures/manifests/invalid");
    for name in [
        "unknown-key",
        "duplicate-id",
        "undeclared-environment",
        "two-kinds",
        "zero-timeout",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.expected"))).unwrap();
        let location =
            regex::Regex::new(&format!(r"--> {name}\.yml:\d+:\d+ \(checks\[\d+\][^)]*\)")).unwrap();
        assert!(location.is_match(&text), "{name}: {text}");
    }
}

#[test]
fn the_manifest_is_found_from_a_subfolder_up_to_the_repository_root() {
    let project =
        Project::new("version: 1\nenvironments: [{name: here}]\nchecks: [{id: a, run: 'true'}]\n");
    std::fs::create_dir(project.path().join(".git")).unwrap();
    std::fs::create_dir_all(project.path().join("crates/deep")).unwrap();
    project
        .cmd()
        .current_dir(project.path().join("crates/deep"))
        .args(["plan", "--format", "json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"check\": \"a\""));
}

#[test]
fn the_search_stops_at_the_repository_root() {
    let project = Project::new("version: 1\nenvironments: [{name: outer}]\n");
    std::fs::create_dir_all(project.path().join("inner/.git")).unwrap();
    project
        .cmd()
        .current_dir(project.path().join("inner"))
        .arg("plan")
        .assert()
        .code(4)
        .stderr(predicate::str::contains("no manifest found"));
}

#[test]
fn github_verify_matrix_yml_is_found_too() {
    let project = Project::empty();
    project.write(
        ".github/verify-matrix.yml",
        "version: 1\nenvironments: [{name: gh}]\n",
    );
    project
        .cmd()
        .args(["plan", "--format", "github"])
        .assert()
        .success()
        .stdout("{\"include\":[{\"environment\":\"gh\",\"runs-on\":\"ubuntu-latest\"}]}\n");
}

#[test]
fn cargo_toml_metadata_is_a_manifest() {
    let project = Project::empty();
    project.write(
        "Cargo.toml",
        r#"[package]
name = "demo"
version = "0.1.0"
edition = "2021"

[package.metadata.verify-matrix]
version = 1
environments = [{ name = "from-cargo" }]
checks = [{ id = "unit", run = "true" }]
"#,
    );
    project.write("src/lib.rs", "");
    project
        .cmd()
        .args(["plan", "--format", "json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"environment\": \"from-cargo\""));
}

#[test]
fn cargo_toml_metadata_errors_name_the_file_and_key_path() {
    let project = Project::empty();
    project.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[package.metadata.verify-matrix]\nversion = 1\nenvironments = [{ name = \"x\" }]\nchecks = [{ id = \"unit\", run = \"true\", timeout = 0 }]\n",
    );
    project.write("src/lib.rs", "");
    project
        .cmd()
        .arg("plan")
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "timeout must be greater than zero",
        ))
        .stderr(predicate::str::contains(
            "--> Cargo.toml:6:1 (checks[0].timeout)",
        ));
}

#[test]
fn the_digest_ignores_comments_and_formatting() {
    let a = Project::new("version: 1\nenvironments: [{name: x}]\nchecks: [{id: a, run: 'true'}]\n");
    let b = Project::new(
        "# a comment\nversion: 1\n\nchecks:\n  - run: \"true\"\n    id: a\nenvironments:\n  - name: x   # trailing\n",
    );
    let digest = |p: &Project| {
        let out = p.cmd().args(["plan", "--format", "json"]).output().unwrap();
        let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        plan["digest"].as_str().unwrap().to_owned()
    };
    assert_eq!(digest(&a), digest(&b));
    assert!(digest(&a).starts_with("sha256:"));
    let c =
        Project::new("version: 1\nenvironments: [{name: x}]\nchecks: [{id: a, run: 'false'}]\n");
    assert_ne!(digest(&a), digest(&c));
}

#[test]
fn cargo_subcommand_spelling_works_for_help_and_version() {
    bin()
        .args(["verify-matrix", "--version"])
        .assert()
        .success()
        .stdout(format!(
            "cargo-verify-matrix {}\n",
            env!("CARGO_PKG_VERSION")
        ));
    bin()
        .args(["verify-matrix", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Usage: cargo verify-matrix [OPTIONS]",
        ));
    bin()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Usage: cargo-verify-matrix [OPTIONS]",
        ));
}

#[test]
fn real_cargo_finds_the_subcommand_on_path() {
    let binary = assert_cmd::cargo::cargo_bin("cargo-verify-matrix");
    let dir = binary.parent().unwrap();
    let path = std::env::join_paths(
        std::iter::once(dir.to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let project =
        Project::new("version: 1\nenvironments: [{name: only}]\nchecks: [{id: a, run: 'true'}]\n");
    let output = std::process::Command::new(env!("CARGO"))
        .args(["verify-matrix", "plan", "--format", "github"])
        .current_dir(project.path())
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "{\"include\":[{\"environment\":\"only\",\"runs-on\":\"ubuntu-latest\"}]}\n"
    );
}

#[test]
fn usage_errors_exit_2() {
    bin().args(["plan", "--format", "yaml"]).assert().code(2);
    bin().args(["no-such-command"]).assert().code(2);
}

#[test]
fn global_options_go_before_or_after_the_command() {
    let project =
        Project::new("version: 1\nenvironments: [{name: only}]\nchecks: [{id: a, run: 'true'}]\n");
    std::fs::rename(
        project.path().join("verify-matrix.yml"),
        project.path().join("m.yml"),
    )
    .unwrap();
    project
        .cmd()
        .args(["--manifest", "m.yml", "-q", "plan"])
        .assert()
        .success();
    project
        .cmd()
        .args(["plan", "--manifest", "m.yml", "-q"])
        .assert()
        .success();
    // Quiet: the final table and nothing else.
    project
        .cmd()
        .args(["-q", "--manifest", "m.yml", "run"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "All Required Environments: VERIFIED",
        ))
        .stderr("");
    project
        .cmd()
        .args(["--manifest", "m.yml", "--env", "only", "plan"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("options of `run`"));
}

#[test]
fn help_texts() {
    for (name, args) in [
        ("help", vec!["--help"]),
        ("help_plan", vec!["plan", "--help"]),
        ("help_run", vec!["run", "--help"]),
        ("help_render", vec!["render", "--help"]),
    ] {
        let output = bin().args(&args).env("COLUMNS", "100").output().unwrap();
        assert!(output.status.success());
        insta::assert_snapshot!(name, String::from_utf8(output.stdout).unwrap());
    }
}

/// What a hostile pull request could put in the manifest is refused with a position
/// before any parser can be made to work hard; a byte-order mark is fine.
#[test]
fn hostile_manifests_are_refused_before_parsing() {
    let project = Project::empty();
    let plan = |name: &str| {
        let out = project
            .cmd()
            .args(["plan", "--format", "json", "--manifest", name])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    project.write(
        "bom.yml",
        "\u{feff}version: 1\nenvironments: [{name: linux}]\nchecks: [{id: a, run: 'true'}]\n",
    );
    assert_eq!(plan("bom.yml"), (Some(0), String::new()));

    let big = std::fs::File::create(project.path().join("big.yml")).unwrap();
    big.set_len(17 * 1024 * 1024).unwrap();
    let (code, err) = plan("big.yml");
    assert_eq!(code, Some(4));
    assert_eq!(
        err,
        "error: manifest `big.yml` is larger than 16777216 bytes; it was not read\n"
    );

    let header = "version: 1\nenvironments: [{name: linux}]\nchecks: []\n";
    let flow = format!(
        "{header}x: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    project.write("flow.yml", &flow);
    let dashes = format!("{header}x:\n{}1\n", "- ".repeat(100_000));
    project.write("dashes.yml", &dashes);
    for (name, at) in [
        ("flow.yml", "flow.yml:4:67"),
        ("dashes.yml", "dashes.yml:5:"),
    ] {
        let (code, err) = plan(name);
        assert_eq!(code, Some(4), "{name}");
        assert!(
            err.starts_with("error: the manifest nests deeper than 64 levels\n"),
            "{name}: {err}"
        );
        assert!(err.contains(&format!(" --> {at}")), "{name}: {err}");
        assert!(err.len() < 1000, "{name}: the snippet is cut: {err}");
    }
}

/// Each command's help lists the shared options that do something there, and no other;
/// every command still accepts all four, so older scripts keep working.
#[test]
fn help_lists_the_shared_options_where_they_apply() {
    let cases: [(&str, &[&str]); 10] = [
        ("plan", &["--manifest"]),
        ("run", &["--manifest", "--color", "--quiet"]),
        ("merge", &["--manifest", "--color", "--quiet"]),
        ("render", &["--manifest", "--color", "--quiet"]),
        ("publish", &["--manifest", "--quiet", "--verbose"]),
        ("report", &["--manifest", "--color", "--quiet", "--verbose"]),
        ("validate-signal", &["--manifest"]),
        ("init", &["--quiet"]),
        ("exec", &[]),
        ("schema", &[]),
    ];
    for (command, listed) in cases {
        let output = bin().args([command, "--help"]).output().unwrap();
        assert!(output.status.success(), "{command} --help");
        let help = String::from_utf8(output.stdout).unwrap();
        for option in ["--manifest", "--color", "--quiet", "--verbose"] {
            let shown = help
                .lines()
                .any(|l| l.trim_start().starts_with(option) || l.contains(&format!(", {option}")));
            assert_eq!(
                shown,
                listed.contains(&option),
                "`{command} --help` and {option}:\n{help}"
            );
        }
    }
    let project =
        Project::new("version: 1\nenvironments: [{name: only}]\nchecks: [{id: a, run: 'true'}]\n");
    project
        .cmd()
        .args(["schema", "--quiet", "--color", "never", "-v"])
        .assert()
        .success();
}
