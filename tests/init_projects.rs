//! `init` on real projects: the manifest it writes passes on the first run, and the
//! workflow it writes sets up the toolchain with the ecosystem's official action and
//! passes actionlint. Rust, Node (without a lock file, where `npm ci` would refuse) and
//! Python projects are run for real; Go's manifest and workflow are checked without a
//! Go toolchain (none is on the test machine).

mod common;

use std::path::Path;
use std::process::Command;

use common::std_bin;

/// Writes `files` into a fresh git repository whose branch is `master`, commits them,
/// runs `init` there (nothing it writes committed yet, as a newcomer's first run
/// finds it), then returns the folder.
fn initialised(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "master"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "the project"]);
    let out = std_bin()
        .current_dir(dir.path())
        .arg("init")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    // The results folder is ignored, and `init` says so; the workflow runs on the
    // repository's branch.
    assert!(said.contains("added verify-matrix-results/ to "), "{said}");
    let gitignore = std::fs::read_to_string(dir.path().join(".gitignore")).unwrap();
    assert!(
        gitignore.lines().any(|l| l == "verify-matrix-results/"),
        "{gitignore}"
    );
    let workflow =
        std::fs::read_to_string(dir.path().join(".github/workflows/verify-matrix.yml")).unwrap();
    assert!(
        workflow.contains("\n    branches: [master]\n"),
        "{workflow}"
    );
    dir
}

/// The generated workflow passes actionlint and sets up what `steps` name.
fn workflow_sets_up(dir: &Path, steps: &[&str]) {
    let path = dir.join(".github/workflows/verify-matrix.yml");
    let workflow = std::fs::read_to_string(&path).unwrap();
    for step in steps {
        assert!(workflow.contains(step), "{step} missing:\n{workflow}");
    }
    let out = Command::new("actionlint")
        .args(["-no-color"])
        .arg(&path)
        .output()
        .expect("actionlint must be installed (scripts/test.sh does)");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `run` in the folder, as on the machine the manifest's `linux` environment detects:
/// VERIFIED, with every check passing, the optional ones too (nothing `init` wrote, and
/// nothing the first run makes, fails it).
fn first_run_is_verified(dir: &Path) -> String {
    let out = std_bin().current_dir(dir).arg("run").output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("All Required Environments: VERIFIED"),
        "{text}"
    );
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("│ ")).collect();
    assert!(rows.len() > 1, "{text}");
    for row in &rows[1..] {
        assert!(row.contains("│ PASS "), "every pair passes: {row}\n{text}");
    }
    // Run again: what the first run left (its results, a lock file) fails nothing.
    let again = std_bin().current_dir(dir).arg("run").output().unwrap();
    let again_text = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(0), "{again_text}");
    assert!(
        !again_text.contains("│ FAIL ") && !again_text.contains("│ ERROR "),
        "{again_text}"
    );
    text
}

#[test]
fn a_rust_crate_passes_on_the_first_run() {
    let dir = initialised(&[
        (
            "Cargo.toml",
            "[package]\nname = \"first\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        (
            "src/lib.rs",
            "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n}\n",
        ),
    ]);
    workflow_sets_up(dir.path(), &["- uses: dtolnay/rust-toolchain@stable"]);
    let text = first_run_is_verified(dir.path());
    assert!(
        text.contains("1 test passed") && !text.contains("1 tests"),
        "{text}"
    );
}

#[test]
fn a_node_package_without_a_lock_file_passes_on_the_first_run() {
    let dir = initialised(&[
        (
            "package.json",
            r#"{"name": "first", "version": "1.0.0", "scripts": {"test": "node --test"}}"#,
        ),
        (
            "test/add.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => assert.strictEqual(1 + 2, 3));\n",
        ),
    ]);
    let manifest = std::fs::read_to_string(dir.path().join("verify-matrix.yml")).unwrap();
    assert!(manifest.contains("run: npm install\n"), "{manifest}");
    workflow_sets_up(dir.path(), &["- uses: actions/setup-node@v6"]);
    first_run_is_verified(dir.path());
}

#[test]
fn a_python_project_passes_on_the_first_run() {
    let dir = initialised(&[
        (
            "pyproject.toml",
            "[project]\nname = \"first\"\nversion = \"0.1.0\"\n",
        ),
        (
            "tests/test_add.py",
            "def test_adds():\n    assert 1 + 2 == 3\n",
        ),
    ]);
    workflow_sets_up(
        dir.path(),
        &[
            "- uses: actions/setup-python@v6",
            "python -m pip install pytest",
        ],
    );
    first_run_is_verified(dir.path());
}

#[test]
fn a_go_module_gets_setup_go() {
    let dir = initialised(&[("go.mod", "module example.com/first\n\ngo 1.22\n")]);
    workflow_sets_up(
        dir.path(),
        &["- uses: actions/setup-go@v6", "go-version-file: go.mod"],
    );
    let manifest = std::fs::read_to_string(dir.path().join("verify-matrix.yml")).unwrap();
    assert!(manifest.contains("test: go test ./...\n"), "{manifest}");
}

/// A Node package whose `test` script runs jest: `init` asks jest for its JSON report
/// and reads it, and keeps the report out of git. The first run is VERIFIED with each
/// test of the report recorded. (jest is the one scripts/test.sh installs, on PATH as
/// a project's `node_modules/.bin` would put it.)
#[test]
fn a_jest_package_is_judged_by_jests_own_report_from_the_first_run() {
    let jest = std::env::var_os("VERIFY_MATRIX_JEST")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| common::repo_root().join("target/tools/jest"));
    let bin = jest.join("node_modules/.bin");
    assert!(
        bin.join("jest").exists(),
        "scripts/test.sh installs jest in {}",
        jest.display()
    );
    let dir = initialised(&[
        (
            "package.json",
            r#"{"name": "first", "version": "1.0.0", "scripts": {"test": "jest"}}"#,
        ),
        (
            "sum.test.js",
            "describe('sum', () => {\n  test('adds', () => expect(1 + 2).toBe(3));\n});\n",
        ),
    ]);
    let manifest = std::fs::read_to_string(dir.path().join("verify-matrix.yml")).unwrap();
    assert!(
        manifest.contains("    test: npm test -- --ci --json --outputFile=jest-report.json\n    reports: jest-report.json\n"),
        "{manifest}"
    );
    let gitignore = std::fs::read_to_string(dir.path().join(".gitignore")).unwrap();
    assert!(
        gitignore.lines().any(|l| l == "/jest-report.json"),
        "{gitignore}"
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std_bin()
        .current_dir(dir.path())
        .env("PATH", path)
        .arg("run")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            dir.path()
                .join("verify-matrix-results/verify-matrix-linux.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let test = results["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command_id"] == "npm-test")
        .unwrap()
        .clone();
    assert_eq!(test["tests"]["format"], "jest-json", "{test}");
    assert_eq!(
        test["tests"]["cases"][0]["suite"], "sum.test.js › sum",
        "{test}"
    );
}
