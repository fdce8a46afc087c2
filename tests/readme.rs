//! README's Quick start is what CI runs: its two commands are run by `.ci/run`, as on a
//! fresh Debian or Ubuntu machine (Debian's Python first on PATH, pip refusing to
//! install outside a virtual environment).

use std::path::Path;

fn read(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

/// The commands of the first `sh` block under "## Quick start".
fn quick_start_commands(readme: &str) -> Vec<String> {
    let section = &readme[readme
        .find("## Quick start")
        .expect("a Quick start section")..];
    let block = &section[section.find("```sh\n").expect("an sh block") + 6..];
    let block = &block[..block.find("```").expect("the block's end")];
    block
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn ci_runs_the_two_quick_start_commands_on_debians_python() {
    let commands = quick_start_commands(&read("README.md"));
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert!(
        commands[0].starts_with("cargo run --locked --no-default-features -- run "),
        "{commands:?}"
    );
    assert_eq!(commands[1], "scripts/test.sh");
    let ci = read(".ci/run");
    assert!(
        ci.contains(r#"fresh() { env PATH="/usr/bin:$PATH" PIP_REQUIRE_VIRTUALENV=1 "$@"; }"#),
        "{ci}"
    );
    for command in &commands {
        assert!(
            ci.lines().any(|line| line == format!("fresh {command}")),
            "`.ci/run` does not run README's `{command}` the fresh way"
        );
    }
}

#[test]
fn the_test_script_installs_only_under_target() {
    let script = read("scripts/test.sh");
    let tools = read("scripts/tools.sh");
    for text in [&script, &tools] {
        assert!(!text.contains("--user"), "{text}");
        assert!(!text.contains("--break-system-packages"), "{text}");
        assert!(!text.contains("npm install -g"), "{text}");
    }
    // Every pip install goes through the project's virtual environment.
    for line in script.lines().chain(tools.lines()) {
        if line.contains("pip install") && !line.trim_start().starts_with('#') {
            assert!(line.contains("\"$python\" -m pip install"), "{line}");
        }
    }
    assert!(tools.contains("TOOLS_VENV=${TOOLS_VENV:-target/tools/venv}"));
    let readme = read("README.md");
    for package in read("scripts/requirements/test.txt").lines() {
        let name = package.split("==").next().unwrap();
        assert!(readme.contains(name), "README does not list {name}");
    }
}

/// The demo, then README's render example over its folder: the matrix, VERIFIED.
#[test]
fn the_demo_and_the_render_example_work_as_readme_gives_them() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/verify-matrix.yml");
    let bin = env!("CARGO_BIN_EXE_cargo-verify-matrix");
    let run = std::process::Command::new(bin)
        .current_dir(dir.path())
        .args(["run", "--manifest"])
        .arg(&manifest)
        .args([
            "--env",
            "c-locale",
            "--env",
            "utf8-locale",
            "--out",
            "demo-results",
        ])
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let render = std::process::Command::new(bin)
        .current_dir(dir.path())
        .args(["render", "--manifest"])
        .arg(&manifest)
        .arg("demo-results")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&render.stdout);
    assert_eq!(
        render.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&render.stderr)
    );
    assert!(
        text.contains("\nAll Required Environments: VERIFIED\n"),
        "{text}"
    );
    assert!(
        text.contains("| Check | c-locale | utf8-locale |"),
        "{text}"
    );
}

/// The book's fork-safe recipe is the shipped one (which the act tests run), word for
/// word: a recipe written beside it went stale once (its publish job never installed
/// the tool).
#[test]
fn the_fork_safe_recipe_in_the_book_is_the_shipped_workflow() {
    let readme = read("docs/github-actions.md");
    let fixture = read("fixtures/workflows/fork-safe/verify-matrix-publish.yml");
    let head = "```yaml\n# .github/workflows/verify-matrix-publish.yml (shipped as fixtures/workflows/fork-safe/)\n";
    let start = readme.find(head).expect("the recipe's block") + head.len();
    let block = &readme[start..];
    let block = &block[..block.find("```\n").expect("the block's end")];
    assert_eq!(block, fixture);
    assert!(fixture.contains("uses: verify-matrix/cargo-verify-matrix@v1"));
}

/// README is a landing page: what it is, the comment, the three steps, the two
/// commands, and the way into the book — at most 200 lines.
#[test]
fn readme_is_a_landing_page_into_the_book() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(lines <= 200, "README has {lines} lines");
    assert!(readme.contains("docs/screenshots/comment.png"));
    let setup = &readme[readme.find("## Set up in three steps").expect("the setup")..];
    for step in ["1. **Install**", "2. **Write the manifest", "3. **Push"] {
        assert!(setup.contains(step), "no step `{step}`");
    }
    assert!(setup.contains("cargo verify-matrix init"));
    for chapter in [
        "docs/getting-started.md",
        "docs/configuration.md",
        "docs/github-actions.md",
        "docs/local-use.md",
        "docs/agents.md",
        "docs/formats.md",
        "docs/security.md",
        "BENCHMARKS.md",
    ] {
        assert!(
            readme.contains(&format!("]({chapter})")),
            "no link to {chapter}"
        );
    }
}
