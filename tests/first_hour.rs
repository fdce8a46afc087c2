//! A newcomer's first hour: every answer says what to do next. A missing manifest names
//! `init`, a tab or an unquoted `: ` in YAML is named as such, a machine that is none of
//! the environments is told how to run the checks there, `render` reads where `run`
//! writes, a skipped manifest draws no half table, and one of a thing is singular.

mod common;

use common::Project;

/// The binary in `project` with `args`: its exit code, stdout and stderr.
fn ran(project: &Project, args: &[&str]) -> (Option<i32>, String, String) {
    let out = project.std_cmd().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_missing_manifest_names_init() {
    let project = Project::empty();
    let (code, _, err) = ran(&project, &["run"]);
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("no manifest found"), "{err}");
    assert!(err.contains("`cargo verify-matrix init`"), "{err}");
}

#[test]
fn a_tab_and_an_unquoted_colon_are_named_with_their_fix() {
    let project = Project::new("version: 1\nenvironments:\n\t- name: a\nchecks: []\n");
    let (code, _, err) = ran(&project, &["plan"]);
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains("a tab; YAML indents with spaces only"),
        "{err}"
    );
    assert!(err.contains("verify-matrix.yml:3:"), "{err}");
    project.write(
        "verify-matrix.yml",
        "version: 1\nenvironments: [{name: a}]\nchecks:\n  - id: x\n    run: echo a: b\n",
    );
    let (code, _, err) = ran(&project, &["plan"]);
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("verify-matrix.yml:5:"), "{err}");
    assert!(
        err.contains("quote the value (`run: 'echo a: b'`) or write it as a block"),
        "{err}"
    );
}

#[test]
fn a_machine_that_is_no_environment_is_told_how_to_run_the_checks_there() {
    // An environment for another system than this one (as `init` on a Mac declares
    // macos, run on Linux), and the one this machine is.
    let other = if cfg!(target_os = "macos") {
        "linux"
    } else {
        "macos"
    };
    let project = Project::new(&format!(
        "version: 1\nenvironments:\n  - {{ name: there, detect: {{ os: {other} }} }}\nchecks:\n  - {{ id: unit, run: 'true' }}\n"
    ));
    let (code, out, err) = ran(&project, &["run", "--env", "there"]);
    // As the book says it, side by side with what the binary does.
    let book = std::fs::read_to_string(common::repo_root().join("docs/local-use.md")).unwrap();
    assert!(
        book.contains("a verdict (exit 3 when nothing failed)"),
        "the book no longer says what this test checks"
    );
    assert_eq!(code, Some(3), "{out}{err}");
    assert!(err.contains("refused: there: not run here"), "{err}");
    assert!(
        err.contains("nothing ran: this machine (")
            && err.contains("is none of the chosen environments")
            && err.contains("`cargo verify-matrix init` declares the system it runs on"),
        "{err}"
    );
    // One required pair, said as one.
    assert!(
        out.contains("Partial run: 0 of 1 required pair; not a verdict"),
        "{out}"
    );
}

#[test]
fn render_reads_where_run_writes_and_one_test_is_singular() {
    let project = Project::new(&common::manifest_with(concat!(
        "  - id: one\n",
        "    test: 'printf \"running 1 test\\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n\"'\n",
    )));
    let (code, out, err) = ran(&project, &["run"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("1 test passed in "), "{out}");
    assert!(!out.contains("1 tests"), "{out}");
    let (code, markdown, err) = ran(&project, &["render"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        markdown.contains("## ✅ Environment Verification Matrix: VERIFIED"),
        "{markdown}"
    );
    assert!(
        markdown.contains("1 of 1 pair passed · 1 test · "),
        "{markdown}"
    );
    let (_, html, _) = ran(&project, &["render", "--format", "html"]);
    assert!(html.contains("✅ PASS · 1 test<"), "{html}");
}

/// The book says every output keeps manifest order; the table of a run whose pairs
/// passed, failed, errored before an exit code and were not run keeps it.
#[test]
fn every_output_keeps_manifest_order_as_the_book_says() {
    let book = std::fs::read_to_string(common::repo_root().join("docs/local-use.md")).unwrap();
    assert!(
        book.contains("every output keeps manifest order"),
        "the book no longer says what this test checks"
    );
    let project = Project::new(&common::manifest_with(concat!(
        "  - { id: first, run: 'true' }\n",
        "  - { id: errs, git-clean: ., cwd: nowhere }\n",
        "  - { id: fails, run: 'exit 1' }\n",
        "  - { id: last, run: 'true' }\n",
    )));
    let (code, out, err) = ran(&project, &["run"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let order: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("│ "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(order, ["Check", "first", "errs", "fails", "last"], "{out}");
    let (_, merged, _) = ran(&project, &["merge", "verify-matrix-results"]);
    let order: Vec<&str> = merged
        .lines()
        .filter_map(|l| l.strip_prefix("│ "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        order,
        ["Check", "first", "errs", "fails", "last"],
        "{merged}"
    );
}

#[test]
fn a_skipped_manifest_draws_no_half_table() {
    let project = Project::new(
        "version: 1\nskip: true\nenvironments: [{name: a}]\nchecks:\n  - { id: x, run: 'true' }\n",
    );
    let (code, out, err) = ran(&project, &["run"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!out.contains('┌') && !out.contains('├'), "{out}");
    assert!(
        out.starts_with("no check ran: the manifest says `skip: true`\n"),
        "{out}"
    );
    assert!(out.contains("All Required Environments: SKIPPED"), "{out}");
}

/// The "Common errors" page quotes the binary's own words: each case is run, and what
/// it prints is found on the page as it is.
#[test]
fn the_common_errors_page_quotes_what_the_binary_says() {
    let page = std::fs::read_to_string(common::repo_root().join("docs/common-errors.md")).unwrap();
    let quoted = |said: &str| {
        assert!(
            page.contains(said),
            "docs/common-errors.md does not quote: {said}"
        );
    };
    let first_line = |text: &str| text.lines().next().unwrap_or_default().to_owned();
    let project = Project::empty();
    let (_, _, err) = ran(&project, &["plan"]);
    let tail = err
        .split_once(", and for ")
        .map(|(_, rest)| format!(", and for {}", rest.trim_end()))
        .unwrap();
    quoted(&tail);
    for manifest in [
        "version: 1\nenvironments:\n\t- name: a\nchecks: []\n",
        "version: 1\nenvironments: [{name: a}]\nchecks:\n  - id: x\n    run: echo a: b\n",
        "environments: [{name: a}]\nchecks: []\n",
        "version: 1\nenvironments: [{name: a}]\nchecks:\n  - id: unit\n    rn: 'true'\n",
    ] {
        project.write("verify-matrix.yml", manifest);
        let (code, _, err) = ran(&project, &["plan"]);
        assert_eq!(code, Some(4), "{err}");
        quoted(&first_line(&err));
    }
    let (code, _, err) = ran(&project, &["init", "--no-workflow"]);
    assert_eq!(code, Some(2), "{err}");
    quoted(&first_line(&err));
    project.write(
        "verify-matrix.yml",
        "version: 1\nenvironments: [{name: a}, {name: linux}]\nchecks:\n  - { id: unit, test: 'true', environment: a }\n  - { id: t2, run: 'sleep 5', timeout: 1s, environment: a }\n  - { id: lint, run: no-such-tool-3f9a, environment: linux }\n",
    );
    let (_, out, _) = ran(&project, &["run", "--env", "a", "--env", "linux"]);
    for reason in [
        "unit in a: the gate was ineffective (no test summary recognised), exit 0",
        "t2 timed out in a (exit 124)",
        "lint failed in linux: command not found (exit 127)",
    ] {
        assert!(out.contains(&format!("  - {reason}\n")), "{out}");
        quoted(reason);
    }
    project.write(
        "verify-matrix.yml",
        "version: 1\nenvironments: [{name: linux}]\nchecks:\n  - { id: unit, run: 'true' }\n  - { id: lint, run: 'true' }\n",
    );
    let (_, out, _) = ran(&project, &["run", "--check", "unit", "--out", "one"]);
    assert!(
        out.contains("Partial run: 1 of 2 required pairs; not a verdict"),
        "{out}"
    );
    let (_, merged, _) = ran(&project, &["merge", "one"]);
    let missing = merged
        .lines()
        .find_map(|l| l.strip_prefix("  - lint in linux: "))
        .unwrap_or_else(|| panic!("{merged}"));
    quoted(missing);
    // Nothing ran: the sentence that says why.
    let other = if cfg!(target_os = "macos") {
        "linux"
    } else {
        "macos"
    };
    project.write(
        "verify-matrix.yml",
        &format!("version: 1\nenvironments: [{{name: there, detect: {{os: {other}}}}}]\nchecks:\n  - {{ id: unit, run: 'true' }}\n"),
    );
    let (_, _, err) = ran(&project, &["run"]);
    let why = err
        .lines()
        .find(|l| l.starts_with("nothing ran: "))
        .unwrap_or_else(|| panic!("{err}"));
    let sentence = why.split_once(") ").map(|(_, rest)| rest).unwrap();
    let sentence = &sentence[..=sentence.find(". ").unwrap()];
    quoted(sentence);
}
