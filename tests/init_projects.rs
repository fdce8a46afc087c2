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
    let (code, test) = run_check(dir.path(), &bin, "npm-test");
    assert_eq!(code, Some(0), "{test}");
    assert_eq!(test["tests"]["format"], "jest-json", "{test}");
    assert_eq!(
        test["tests"]["cases"][0]["suite"], "sum.test.js › sum",
        "{test}"
    );
}

/// Runs `run` in `dir` with `path_first` ahead on PATH; the exit code and the result of
/// the check `id` in the `linux` environment.
fn run_check(dir: &Path, path_first: &Path, id: &str) -> (Option<i32>, serde_json::Value) {
    let path = format!(
        "{}:{}",
        path_first.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std_bin()
        .current_dir(dir)
        .env("PATH", path)
        .arg("run")
        .output()
        .unwrap();
    let mut results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("verify-matrix-results/verify-matrix-linux.json"))
            .unwrap_or_else(|e| panic!("{e}: {out:?}")),
    )
    .unwrap();
    common::checks_as_objects(&mut results);
    let check = results["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command_id"] == id)
        .unwrap_or_else(|| panic!("no {id}: {results}"))
        .clone();
    (out.status.code(), check)
}

/// A Perl distribution (`t/*.t`): `init` runs `prove` verbosely and reads its TAP, so
/// the first run is VERIFIED with each test recorded, and a failing test is named with
/// its file and line. (Real `prove`, Debian's perl.)
#[test]
fn a_perl_distribution_is_judged_by_proves_tap() {
    let dir = initialised(&[
        (
            "lib/Add.pm",
            "package Add;\nsub add { $_[0] + $_[1] }\n1;\n",
        ),
        (
            "t/add.t",
            "use strict;\nuse warnings;\nuse Test::More tests => 2;\nuse Add;\nis(Add::add(1, 2), 3, 'adds');\nis(Add::add(2, 2), 4, 'adds twos');\n",
        ),
    ]);
    let manifest = std::fs::read_to_string(dir.path().join("verify-matrix.yml")).unwrap();
    assert!(
        manifest.contains("  - id: prove\n    test: prove -lrv --merge t | tee prove-report.tap\n    reports: prove-report.tap\n"),
        "{manifest}"
    );
    let gitignore = std::fs::read_to_string(dir.path().join(".gitignore")).unwrap();
    assert!(
        gitignore.lines().any(|l| l == "/prove-report.tap"),
        "{gitignore}"
    );
    workflow_sets_up(dir.path(), &[]);
    first_run_is_verified(dir.path());
    let (_, check) = run_check(dir.path(), dir.path(), "prove");
    assert_eq!(check["tests"]["format"], "tap", "{check}");
    assert_eq!(check["test_counts"]["passed"], 2, "{check}");

    std::fs::write(
        dir.path().join("t/add.t"),
        "use strict;\nuse warnings;\nuse Test::More tests => 2;\nuse Add;\nis(Add::add(1, 2), 3, 'adds');\nis(Add::add(2, 2), 5, 'adds twos');\n",
    )
    .unwrap();
    let (code, check) = run_check(dir.path(), dir.path(), "prove");
    assert_eq!(code, Some(1), "{check}");
    assert_eq!(check["status"], "FAIL", "{check}");
    let failed: Vec<&serde_json::Value> = check["tests"]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{check}");
    assert_eq!(failed[0]["name"], "adds twos");
    assert_eq!(failed[0]["file"], "t/add.t", "{check}");
    assert_eq!(failed[0]["line"], 6, "{check}");
}

/// A .NET solution: `init` builds it and reads the TRX file `dotnet test` writes per test
/// project, from a folder emptied first, so a second run reads its own file only.
/// `dotnet` cannot run on these machines: a stand-in on PATH writes a TRX file a real
/// `dotnet test` wrote (fixtures/reports/trx/dotnet-trx.trx, under a new name each run,
/// as dotnet names them by time) into `--results-directory`, and exits 1 as dotnet does
/// when a test failed.
#[test]
fn a_dotnet_solution_is_judged_by_its_trx_files() {
    let dir = initialised(&[
        ("App.sln", "\n"),
        ("App/App.csproj", "<Project Sdk=\"Microsoft.NET.Sdk\"/>\n"),
    ]);
    let manifest = std::fs::read_to_string(dir.path().join("verify-matrix.yml")).unwrap();
    assert!(
        manifest.contains("  - id: dotnet-test\n    test: rm -rf TestResults && dotnet test --logger trx --results-directory TestResults\n    reports: \"TestResults/**/*.trx\"\n"),
        "{manifest}"
    );
    workflow_sets_up(
        dir.path(),
        &["- uses: actions/setup-dotnet@v5\n        with:\n          dotnet-version: 8.0.x\n"],
    );
    let tools = tempfile::tempdir().unwrap();
    let trx = common::repo_root().join("fixtures/reports/trx/dotnet-trx.trx");
    let stand_in = tools.path().join("dotnet");
    std::fs::write(
        &stand_in,
        format!(
            "#!/bin/sh\n[ \"$1\" = build ] && exit 0\nwhile [ \"$#\" -gt 0 ]; do [ \"$1\" = --results-directory ] && out=\"$2\"; shift; done\nmkdir -p \"$out\"\ncp '{}' \"$out/runner_host_$(date +%s%N).trx\"\nexit 1\n",
            trx.display()
        ),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&stand_in).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&stand_in, permissions).unwrap();
    for run in 0..2 {
        let (code, check) = run_check(dir.path(), tools.path(), "dotnet-test");
        assert_eq!(code, Some(1), "run {run}: {check}");
        assert_eq!(check["status"], "FAIL", "run {run}: {check}");
        assert_eq!(check["tests"]["format"], "trx", "run {run}: {check}");
        // The runner's own counts, from this run's one file.
        assert_eq!(check["test_counts"]["failed"], 5, "run {run}: {check}");
        assert_eq!(check["test_counts"]["passed"], 5, "run {run}: {check}");
        assert_eq!(
            check["tests"]["files"].as_array().map(Vec::len),
            Some(1),
            "run {run}: {check}"
        );
    }
}
