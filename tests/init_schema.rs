//! `init` (detects the repository, writes the manifest and workflow, refuses to
//! overwrite) and `schema` (the manifest's JSON Schema, checked against every fixture
//! manifest).

mod common;

use std::path::{Path, PathBuf};

use common::{Project, bin, repo_root};
use serde_json::Value;

fn schema() -> Value {
    let out = bin().arg("schema").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).expect("schema prints JSON")
}

fn yaml_as_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    serde_json::to_value(yaml).unwrap()
}

/// Every manifest the repository ships that the parser accepts.
fn valid_fixture_manifests() -> Vec<PathBuf> {
    let root = repo_root();
    let mut found = vec![root.join("verify-matrix.yml")];
    let walk = walkdir::WalkDir::new(root.join("fixtures")).sort_by_file_name();
    // Workflow files are GitHub's format, not ours.
    let walk = walk
        .into_iter()
        .filter_entry(|e| e.file_name() != "workflows");
    for entry in walk {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy();
        let in_valid = entry
            .path()
            .parent()
            .is_some_and(|p| p.ends_with("manifests/valid"));
        if name == "verify-matrix.yml" || (in_valid && name.ends_with(".yml")) {
            found.push(entry.into_path());
        }
    }
    found
}

#[test]
fn every_fixture_manifest_validates_against_the_schema() {
    let schema = schema();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let manifests = valid_fixture_manifests();
    assert!(manifests.len() >= 4, "{manifests:?}");
    for path in manifests {
        // The parser accepts it ...
        let plan = bin()
            .args(["plan", "--format", "json", "--manifest"])
            .arg(&path)
            .output()
            .unwrap();
        if plan.status.code() != Some(0) {
            panic!(
                "{} is not a valid manifest: {}",
                path.display(),
                String::from_utf8_lossy(&plan.stderr)
            );
        }
        // ... and so does the schema.
        let errors: Vec<String> = validator
            .iter_errors(&yaml_as_json(&path))
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    }
}

#[test]
fn the_schema_refuses_what_the_parser_refuses_for_its_shape() {
    let validator = jsonschema::validator_for(&schema()).unwrap();
    let dir = repo_root().join("fixtures/manifests/invalid");
    // Problems of shape (keys, types, values); the others (duplicate ids, undeclared
    // environments, one kind per check) are for validation, which says where.
    for name in [
        "unknown-key",
        "unknown-top-level-key",
        "unknown-shell",
        "missing-version",
        "empty-environments",
        "not-a-mapping",
        "invalid-id",
    ] {
        let instance = yaml_as_json(&dir.join(format!("{name}.yml")));
        assert!(!validator.is_valid(&instance), "{name} passes the schema");
    }
}

#[test]
fn the_schema_documents_every_key_for_editors() {
    let schema = schema();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    let check = &schema["definitions"]["RawCheck"]["properties"];
    let keys: Vec<&String> = check.as_object().unwrap().keys().collect();
    for key in [
        "run",
        "test",
        "not-file",
        "git-clean",
        "all-of",
        "any-of",
        "must-be-effective",
        "exit-code",
    ] {
        assert!(
            keys.iter().any(|k| *k == key),
            "{key} missing from {keys:?}"
        );
        assert!(
            check[key]["description"].is_string(),
            "{key} has no description"
        );
    }
}

fn init(project: &Project, args: &[&str]) -> std::process::Output {
    project.std_cmd().arg("init").args(args).output().unwrap()
}

/// `init ARGS`, which must succeed; what it printed to stderr.
fn init_ok(project: &Project, args: &[&str]) -> String {
    let out = init(project, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

#[test]
fn init_in_a_cargo_workspace_writes_a_manifest_that_plans_and_the_workflow() {
    let project = Project::empty();
    project.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"a\", \"b\"]\nresolver = \"2\"\n",
    );
    for member in ["a", "b"] {
        project.write(
            &format!("{member}/Cargo.toml"),
            &format!("[package]\nname = \"{member}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        );
        project.write(&format!("{member}/src/lib.rs"), "");
    }
    let stderr = init_ok(&project, &[]);
    assert!(
        stderr.contains("found a Cargo workspace of 2 packages"),
        "{stderr}"
    );

    let manifest = project.read("verify-matrix.yml");
    assert!(
        manifest.contains("run: cargo clippy --workspace --all-targets -- -D warnings"),
        "{manifest}"
    );
    assert!(
        manifest.contains("test: cargo test --workspace"),
        "{manifest}"
    );
    let plan = project
        .cmd()
        .args(["plan", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        plan.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let plan: Value = serde_json::from_slice(&plan.stdout).unwrap();
    let checks: Vec<&str> = plan["environments"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(checks, ["fmt", "clippy", "tests"]);

    let workflow = project.read(".github/workflows/verify-matrix.yml");
    let fixture =
        std::fs::read_to_string(repo_root().join("fixtures/workflows/verify-matrix.yml")).unwrap();
    // The linted fixture workflow, with the toolchain set up in the run job.
    let setup = "      # The toolchains and dependencies the checks need.\n\
                 \x20     - uses: dtolnay/rust-toolchain@stable\n\
                 \x20       with:\n\
                 \x20         components: rustfmt, clippy\n";
    assert!(workflow.contains(setup), "{workflow}");
    assert_eq!(
        workflow.replace(
            setup,
            "      # Install here what the checks need (toolchains, dependencies).\n"
        ),
        fixture,
        "init writes the linted fixture workflow"
    );
}

#[test]
fn init_refuses_to_overwrite_without_force_and_writes_nothing() {
    let project = Project::empty();
    project.write("go.mod", "module example.com/m\n\ngo 1.22\n");
    project.write(".github/workflows/verify-matrix.yml", "mine\n");
    let out = init(&project, &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".github/workflows/verify-matrix.yml` already exists"),
        "{stderr}"
    );
    assert!(stderr.contains("--force"), "{stderr}");
    assert!(
        !project.path().join("verify-matrix.yml").exists(),
        "nothing was written"
    );
    assert_eq!(
        project.read(".github/workflows/verify-matrix.yml"),
        "mine\n"
    );

    init_ok(&project, &["--force"]);
    assert!(
        project
            .read("verify-matrix.yml")
            .contains("test: go test ./...")
    );
    assert_ne!(
        project.read(".github/workflows/verify-matrix.yml"),
        "mine\n"
    );
}

#[test]
fn init_detects_node_scripts_and_the_package_manager() {
    let project = Project::empty();
    project.write(
        "package.json",
        r#"{"name": "p", "scripts": {"test": "vitest run", "lint": "eslint .", "start": "node ."}}"#,
    );
    project.write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n");
    init_ok(&project, &["--no-workflow"]);
    assert!(
        !project.path().join(".github").exists(),
        "--no-workflow writes no workflow"
    );
    let manifest = project.read("verify-matrix.yml");
    for line in [
        "run: pnpm install --frozen-lockfile",
        "- id: pnpm-lint\n    run: pnpm run lint\n    gate: lint",
        "- id: pnpm-test\n    test: pnpm run test",
    ] {
        assert!(manifest.contains(line), "{line:?} missing:\n{manifest}");
    }
    assert!(!manifest.contains("start"), "{manifest}");
}
