//! `test: auto`: which test command a project uses, detected from its files.

use std::path::Path;

use super::CheckError;

/// What `test: auto` looked for, in order, for the error when nothing is found.
pub const AUTO_LOOKED_FOR: &str = "Cargo.toml, package.json with a \"test\" script, pyproject.toml/pytest.ini/setup.cfg/tox.ini/conftest.py, go.mod, mix.exs, a Makefile with a `test:` target";

/// The test command for the project in `cwd` (docs/formats.md §1, `test: auto`).
pub fn detect_test_command(cwd: &Path) -> Result<String, CheckError> {
    let has = |name: &str| cwd.join(name).is_file();
    if has("Cargo.toml") {
        return Ok(if on_path("cargo-nextest") {
            "cargo nextest run"
        } else {
            "cargo test"
        }
        .to_owned());
    }
    if has("package.json") {
        let text = std::fs::read_to_string(cwd.join("package.json")).unwrap_or_default();
        let script = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| {
                v.pointer("/scripts/test")
                    .and_then(|t| t.as_str())
                    .map(str::to_owned)
            });
        // `npm init` writes a test script that only fails: not a test suite.
        if script.is_some_and(|s| !s.contains("no test specified")) {
            return Ok("npm test".to_owned());
        }
    }
    let pytest_config = [
        "pyproject.toml",
        "pytest.ini",
        "setup.cfg",
        "tox.ini",
        "conftest.py",
    ]
    .iter()
    .any(|f| {
        has(f) && (*f != "setup.cfg" && *f != "tox.ini" || file_contains(&cwd.join(f), "pytest"))
    });
    if pytest_config {
        let python = if on_path("python") || !on_path("python3") {
            "python"
        } else {
            "python3"
        };
        return Ok(format!("{python} -m pytest"));
    }
    if has("go.mod") {
        return Ok("go test ./...".to_owned());
    }
    if has("mix.exs") {
        return Ok("mix test".to_owned());
    }
    for makefile in ["Makefile", "makefile", "GNUmakefile"] {
        let text = std::fs::read_to_string(cwd.join(makefile)).unwrap_or_default();
        if text
            .lines()
            .any(|l| l.starts_with("test:") || l.starts_with("test :"))
        {
            return Ok("make test".to_owned());
        }
    }
    Err(format!(
        "`test: auto` found no test suite in `{}`; looked for {AUTO_LOOKED_FOR}",
        cwd.display()
    )
    .into())
}

fn file_contains(path: &Path, needle: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains(needle))
}

/// Whether `program` is an executable file in a `PATH` folder.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let candidate = dir.join(program);
            candidate.is_file() || (cfg!(windows) && dir.join(format!("{program}.exe")).is_file())
        })
    })
}
