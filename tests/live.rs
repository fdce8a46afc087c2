//! What `run` prints while it runs: GitHub workflow commands, and plain lines.

mod common;

use common::{Project, manifest_with};

fn stdout_of(project: &Project, args: &[&str]) -> String {
    let output = project
        .cmd()
        .args(args)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn github_groups_stream_each_checks_output_and_annotate_failures() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: hello\n    run: echo hello; printf 'no newline'\n",
        "  - id: bad\n    run: echo '100% broken'; exit 2\n",
        "  - id: optional\n    run: exit 1\n    required: false\n",
    )));
    let out = stdout_of(&project, &["run"]);
    assert!(
        out.contains("::group::hello (local)\nhello\nno newline\n::endgroup::\n"),
        "{out}"
    );
    assert!(
        out.contains("::group::bad (local)\n100% broken\n::endgroup::\n"),
        "{out}"
    );
    assert!(
        out.contains("::error title=bad failed in local::exit 2 (required 0) in "),
        "{out}"
    );
    assert_eq!(
        out.matches("::error").count(),
        1,
        "optional failures are not errors: {out}"
    );
}

#[test]
fn github_groups_stay_whole_with_several_jobs() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: a\n    run: for i in 1 2 3; do echo a$i; sleep 0.1; done\n",
        "  - id: b\n    run: for i in 1 2 3; do echo b$i; sleep 0.1; done\n",
    )));
    let out = stdout_of(&project, &["run", "--jobs", "2"]);
    assert!(
        out.contains("::group::a (local)\na1\na2\na3\n::endgroup::\n"),
        "{out}"
    );
    assert!(
        out.contains("::group::b (local)\nb1\nb2\nb3\n::endgroup::\n"),
        "{out}"
    );
}

#[test]
fn at_most_ten_error_annotations_then_a_notice() {
    let checks: String = (1..=12)
        .map(|i| format!("  - id: f{i}\n    run: exit 1\n"))
        .collect();
    let project = Project::new(&manifest_with(&checks));
    let out = stdout_of(&project, &["run"]);
    assert_eq!(
        out.matches("\n::error ").count() + usize::from(out.starts_with("::error ")),
        10,
        "{out}"
    );
    assert!(
        out.contains("::notice::2 more failed checks not annotated (GitHub shows 10 error annotations per step); see the table below\n"),
        "{out}"
    );
}

#[test]
fn annotation_text_is_escaped() {
    // A missing program's name ends up in the summary, `%` and all.
    let project = Project::new(&manifest_with(
        "  - id: y\n    shell: none\n    run: 'no-such-100%-program'\n",
    ));
    let out = stdout_of(&project, &["run"]);
    assert!(
        out.contains(
            "::error title=y failed in local::command not found: no-such-100%25-program\n"
        ),
        "{out}"
    );
}

#[test]
fn outside_actions_one_plain_line_per_finished_check() {
    let project = Project::new(&manifest_with(
        "  - id: a\n    run: echo out\n  - id: b\n    run: exit 3\n",
    ));
    let output = project.cmd().output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(" local ")).collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].trim_start().starts_with("PASS ["), "{stderr}");
    assert!(
        lines[0].contains("local a: passed (exit 0) in "),
        "{stderr}"
    );
    assert!(lines[1].trim_start().starts_with("FAIL ["), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "no escapes off a terminal");
    assert!(
        !String::from_utf8(output.stdout).unwrap().contains("out\n"),
        "raw output stays in the log"
    );
}
