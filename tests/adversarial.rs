//! Adversarial artifacts (fixtures/adversarial/): each case spoils the results of two
//! real runs in one way, and `merge` must answer with exactly the expected exit code and
//! messages (`expected.txt`), never showing anything from outside the artifacts.
//! `UPDATE_EXPECT=1 cargo test --test adversarial` rewrites the expectations; review the
//! diff before committing it.

mod common;

use std::path::{Path, PathBuf};

use common::Project;
use serde_json::Value;

const MANIFEST: &str = include_str!("../fixtures/adversarial/verify-matrix.yml");
const SECRET: &str = "TOKEN=hunter2";

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/adversarial");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    cases
}

/// Copies the case's files into `artifacts/`, keeping symlinks as symlinks.
fn overlay(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let control = [
            "edits.json",
            "copies.json",
            "sparse.txt",
            "expected.txt",
            "stdout-has.txt",
        ];
        if control.contains(&name.to_str().unwrap())
            && from.parent().unwrap().file_name().unwrap() == "adversarial"
        {
            continue;
        }
        let target = to.join(&name);
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            overlay(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn read_json(path: &Path) -> Option<Value> {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| serde_json::from_str(&text).unwrap())
}

/// Sets up one case in a fresh project with `a` and `b` run into artifact folders.
fn spoiled(case: &Path) -> Project {
    let project = Project::new(MANIFEST);
    project.write("secret.txt", &format!("{SECRET}\n"));
    for env in ["a", "b"] {
        project.run_env(env, &format!("artifacts/verify-matrix-{env}"));
    }
    let artifacts = project.path().join("artifacts");
    overlay(case, &artifacts);
    if let Some(copies) = read_json(&case.join("copies.json")) {
        for (to, from) in copies.as_object().unwrap() {
            let to = artifacts.join(to);
            std::fs::create_dir_all(&to).unwrap();
            overlay(&artifacts.join(from.as_str().unwrap()), &to);
        }
    }
    if let Some(edits) = read_json(&case.join("edits.json")) {
        for (file, changes) in edits.as_object().unwrap() {
            let path = artifacts.join(file);
            let mut value = read_json(&path).unwrap();
            // Pointers name a check's fields (`/checks/0/status`): its object, as
            // format 2 wrote it and the tool still reads it.
            common::checks_as_objects(&mut value);
            for (pointer, new) in changes.as_object().unwrap() {
                *value.pointer_mut(pointer).unwrap() = new.clone();
            }
            std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        }
    }
    if let Ok(sparse) = std::fs::read_to_string(case.join("sparse.txt")) {
        for line in sparse.lines() {
            let (name, len) = line.split_once(' ').unwrap();
            let file = std::fs::File::create(artifacts.join(name)).unwrap();
            file.set_len(len.parse().unwrap()).unwrap();
        }
    }
    project
}

#[test]
fn every_adversarial_case_gets_its_expected_answer() {
    let cases = cases();
    assert!(cases.len() >= 9, "fixtures missing: {cases:?}");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let project = spoiled(&case);
        let out = project
            .cmd()
            .args([
                "merge",
                "--out",
                "report.json",
                "--format",
                "markdown",
                "artifacts",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        let actual = format!("exit {}\n---\n{stderr}", out.status.code().unwrap());
        // Whatever the case, nothing outside the artifacts is ever shown or kept.
        let report =
            std::fs::read_to_string(project.path().join("report.json")).unwrap_or_default();
        assert!(
            !stdout.contains("hunter2") && !report.contains("hunter2"),
            "{name}: the secret leaked"
        );
        if out.status.code() == Some(4) {
            assert_eq!(stdout, "", "{name}: refused input prints no report");
            assert!(report.is_empty(), "{name}: refused input writes no report");
        }
        if let Ok(lines) = std::fs::read_to_string(case.join("stdout-has.txt")) {
            for line in lines.lines() {
                assert!(
                    stdout.lines().any(|l| l == line),
                    "{name}: no line `{line}` in:\n{stdout}"
                );
            }
        }
        let expected_path = case.join("expected.txt");
        if update {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "{name}:\n--- expected\n{expected}--- actual\n{actual}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
