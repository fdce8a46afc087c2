//! The matrix as a reviewer reads it: a summary line on top, test counts in the grid,
//! the checks' names, optional failures as advisory, and failure summaries that show as
//! written (HTML entities inside raw HTML, not markdown escapes).

mod common;

use common::Project;

const MANIFEST: &str = "version: 1
environments: [{name: a}, {name: b}]
checks:
  - id: unit_tests
    name: Unit tests
    test: 'printf \"running 3 tests\\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n\"'
  - { id: readme, file: README.md, required: false, environment: a }
";

/// Both environments run, then `render --format FORMAT` of their folder.
fn rendered(manifest: &str, format: &str) -> String {
    let project = Project::new(manifest);
    project.run_envs(&["a", "b"]);
    project.stdout_of(&["render", "--format", format, "results"])
}

#[test]
fn the_markdown_opens_with_a_summary_and_shows_counts_names_and_advisories() {
    let text = rendered(MANIFEST, "markdown");
    // Under the verdict, the advisory (it never blocks), then the counts: required and
    // optional pairs apart, tests (not test runs), the duration labelled.
    assert_eq!(
        text.lines().nth(3).unwrap(),
        "- 🟡 Optional, does not block: readme in a failed",
        "{text}"
    );
    let summary = text.lines().nth(5).unwrap();
    assert!(
        summary.starts_with(
            "2 of 2 required pairs passed · optional: 1 failed · 3 tests × 2 environments · longest environment "
        ),
        "{text}"
    );
    assert!(
        text.contains("\n| unit_tests · Unit tests | ✅ 3 | ✅ 3 |\n"),
        "{text}"
    );
    assert!(
        text.contains("\n| readme (optional) | 🟡 failed | – |\n"),
        "{text}"
    );
    // The optional failure stands under a VERIFIED banner, as advisory.
    assert!(
        text.contains("\nAll Required Environments: VERIFIED\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "<details><summary>🟡 readme (optional) in a: no match for `README.md` in .</summary>"
        ),
        "the summary must show its backticks as written:\n{text}"
    );
}

#[test]
fn the_html_grid_keeps_optional_names_and_counts() {
    let html = rendered(MANIFEST, "html");
    assert!(
        html.contains("<p class=\"summary\">2 of 2 required pairs passed · optional: 1 failed · 3 tests × 2 environments · longest environment "),
        "{html}"
    );
    assert!(
        html.contains("<tr><th>unit_tests <span class=\"name\">Unit tests</span></th>"),
        "{html}"
    );
    assert!(html.contains("✅ PASS · 3 tests"), "{html}");
    assert!(
        html.contains("<tr><th>readme (optional)</th><td class=\"advisory\""),
        "{html}"
    );
    assert!(html.contains("🟡 FAIL (optional)"), "{html}");
    assert!(
        html.contains(
            "<summary>🟡 readme (optional) in a: no match for `README.md` in .</summary>"
        ),
        "{html}"
    );
}

#[test]
fn html_in_a_failure_summary_is_shown_not_rendered_nor_a_mention() {
    let manifest = "version: 1
environments: [{name: a}, {name: b}]
checks:
  - { id: page, file: '<b>x</b>@octocat.html' }
";
    let text = rendered(manifest, "markdown");
    let summary = text
        .lines()
        .find(|l| l.starts_with("<details><summary>"))
        .unwrap_or_else(|| panic!("no failure block:\n{text}"));
    assert!(
        summary.contains("&lt;b&gt;x&lt;/b&gt;&#64;octocat.html"),
        "{summary}"
    );
    assert!(
        !summary.contains("<b>") && !summary.contains('\\'),
        "{summary}"
    );
}

/// `publish --dry-run` works anywhere, as README says: outside Actions and a git
/// repository, with nothing naming the repository or the commit, it shows placeholders.
#[test]
fn a_dry_run_needs_no_repository_or_commit() {
    let project = Project::new(MANIFEST);
    project.run_envs(&["a", "b"]);
    project.merge_into("results", "report.json");
    let out = project
        .std_cmd()
        .args([
            "publish",
            "--dry-run",
            "--to",
            "comment,check-run",
            "--pr",
            "3",
            "report.json",
        ])
        .env_remove("GITHUB_REPOSITORY")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_EVENT_NAME")
        .env_remove("GITHUB_EVENT_PATH")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("=== PR comment on OWNER/NAME#3: POST /repos/OWNER/NAME/issues/3/comments"),
        "{text}"
    );
    assert!(
        text.contains("=== check run: POST /repos/OWNER/NAME/check-runs"),
        "{text}"
    );
}

#[test]
fn a_mistyped_command_gets_a_suggestion() {
    let out = common::std_bin().arg("plna").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a similar subcommand exists: 'plan'"), "{err}");
}

/// One word per outcome in every format: a timeout is an ERROR (live and in the table,
/// as its result says) whose reason says it timed out, an ineffective gate says so
/// rather than "failed … (exit 0)", and a check that errored before it had an exit code
/// is an error (ERROR in the terminal, "❌ error" in the grid), counted as failed, never
/// as missing.
#[test]
fn one_vocabulary_for_timeouts_ineffective_gates_and_errors() {
    let manifest = "version: 1
environments: [{name: a}]
checks:
  - { id: slow, run: 'sleep 5', timeout: 1s }
  - { id: gate, test: 'true' }
  - { id: suite, test: auto }
";
    let project = Project::new(manifest);
    let run = project
        .std_cmd()
        .args(["run", "--env", "a", "--out", "results/a"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&run.stdout);
    let row = |id: &str| {
        table
            .lines()
            .find(|l| l.contains(&format!("│ {id} ")))
            .unwrap_or_else(|| panic!("no {id} row:\n{table}"))
            .to_owned()
    };
    assert!(row("slow").contains("│ ERROR "), "{table}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.trim_start().starts_with("ERROR") && l.contains(" a slow: timed out")),
        "{stderr}"
    );
    assert!(row("gate").contains("│ FAIL "), "{table}");
    assert!(row("suite").contains("│ ERROR "), "{table}");
    let text = project.stdout_of(&["render", "results"]);
    assert!(
        text.contains("\n0 of 3 pairs passed · 3 failed · "),
        "{text}"
    );
    assert!(text.contains("\n| suite | ❌ error |\n"), "{text}");
    assert!(text.contains("\n- slow timed out in a (exit "), "{text}");
    assert!(
        text.contains("\n- gate in a: the gate was ineffective ("),
        "{text}"
    );
    assert!(!text.contains("gate failed in a (exit 0)"), "{text}");
}

#[test]
fn the_html_report_says_what_run_verified_what_and_when_in_one_form_of_duration() {
    let project = Project::new(MANIFEST);
    project.run_envs_in_run(
        &["a", "b"],
        &[("GITHUB_RUN_ID", "9000002"), ("GITHUB_RUN_NUMBER", "41")],
    );
    project.merge_into("results", "report.json");
    let finished = project.json("report.json")["finished_at"]
        .as_str()
        .expect("the report says when its legs finished")
        .to_owned();
    let html = project.stdout_of(&["render", "--format", "html", "report.json"]);
    assert!(
        html.contains(&format!(
            "<p class=\"provenance\">Commit <code><a href=\"https://github.com/o/r/commit/0123456789abcdef0123456789abcdef01234567\">0123456</a></code> · run <a href=\"https://github.com/o/r/actions/runs/9000002\">#41</a> · finished {} UTC</p>",
            finished.trim_end_matches('Z').replacen('T', " ", 1)
        )),
        "{html}"
    );
    // Durations in the summaries' form (`4ms`), not seconds with a decimal beside them.
    assert!(!html.contains("0.0 s"), "{html}");
    assert!(!html.contains(" ms, "), "{html}");
}

/// An optional check is optional in every state: one that errored before it had an
/// exit code, one that failed, under a VERIFIED banner; in the counts, the grid (its
/// name marked, each cell saying what happened), the table, and the check run's title
/// (which counts what passed, never what ran).
#[test]
fn an_optional_check_is_optional_in_every_state_count_and_title() {
    let manifest = "version: 1
environments: [{name: a}]
checks:
  - { id: unit, run: 'true' }
  - { id: tree, git-clean: ., cwd: nowhere, required: false }
  - { id: opt, run: 'false', required: false }
";
    let project = Project::new(manifest);
    let run = project
        .std_cmd()
        .args(["run", "--env", "a", "--out", "results"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let table = String::from_utf8_lossy(&run.stdout);
    // Manifest order, the optional check marked, the error said as its result says.
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("│ ")).collect();
    assert!(rows[1].starts_with("│ unit "), "{table}");
    assert!(rows[2].starts_with("│ tree (optional) "), "{table}");
    assert!(rows[2].contains("│ ERROR "), "{table}");
    assert!(
        rows[2].contains("working directory `") && rows[2].contains("does not exist"),
        "{table}"
    );
    assert!(rows[3].starts_with("│ opt (optional) "), "{table}");
    let text = project.stdout_of(&["render", "results"]);
    assert!(
        text.contains("\n## ✅ Environment Verification Matrix: VERIFIED\n"),
        "{text}"
    );
    assert!(
        text.contains("\n- 🟡 Optional, does not block: tree in a errored; opt in a failed\n"),
        "{text}"
    );
    assert!(
        text.contains("\n1 of 1 required pair passed · optional: 2 failed · "),
        "{text}"
    );
    assert!(
        text.contains("\n| tree (optional) | 🟡 error |\n"),
        "{text}"
    );
    assert!(
        text.contains("\n| opt (optional) | 🟡 failed |\n"),
        "{text}"
    );
    assert!(!text.contains("❌"), "nothing required failed:\n{text}");
    let json = project.stdout_of(&["render", "--format", "json", "results"]);
    let report: cargo_verify_matrix::results::Report = serde_json::from_str(&json).unwrap();
    assert_eq!(
        cargo_verify_matrix::publish::check_run::title(&report),
        "VERIFIED: 1 check passed in a; 2 optional checks did not pass (does not block)"
    );
}

/// What makes a variant environment what it is is shown where each environment ran (its
/// variables, a secret's value masked), and each failure says the command that runs it
/// again on this machine.
#[test]
fn variants_show_their_variables_and_failures_their_local_command() {
    let manifest = "version: 1
environments:
  - name: plain
  - { name: old, env: { APP_MODE: old, API_TOKEN: hunter2-not-shown } }
checks:
  - { id: unit, run: 'test \"$APP_MODE\" != old' }
";
    let project = Project::new(manifest);
    let run = project
        .std_cmd()
        .args(["run", "--env", "plain", "--env", "old", "--out", "results"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{table}");
    assert!(
        table.contains("\nreproduce: cargo verify-matrix run --env old --check unit\n"),
        "{table}"
    );
    let text = project.stdout_of(&["render", "results"]);
    let old = text
        .lines()
        .find(|l| l.starts_with("- old — "))
        .unwrap_or_else(|| panic!("no place of old:\n{text}"));
    assert!(
        old.ends_with(", with API_TOKEN=\\*\\*\\* APP_MODE=old"),
        "{old}"
    );
    let plain = text.lines().find(|l| l.starts_with("- plain — ")).unwrap();
    assert!(!plain.contains(" with "), "{plain}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.contains("\n- reproduce: `cargo verify-matrix run --env old --check unit`\n"),
        "{text}"
    );
    let html = project.stdout_of(&["render", "--format", "html", "results"]);
    assert!(
        html.contains(
            "<p>Reproduce: <code>cargo verify-matrix run --env old --check unit</code></p>"
        ),
        "{html}"
    );
    assert!(html.contains("with API_TOKEN=*** APP_MODE=old"), "{html}");
}

/// The HTML page leads with the answer as the comment does: what failed, with its
/// failing test and message, before the counts and the grid; each failing test's trace
/// folded under it; where each environment ran and every pair folded, after.
#[test]
fn the_html_page_leads_with_what_failed_and_folds_the_rest() {
    let manifest = r#"version: 1
environments: [{name: a}]
checks:
  - id: junit
    test: printf '<testsuite name="s"><testcase classname="calc" name="adds"/><testcase classname="calc" name="divides"><failure message="division by zero">at calc.divide (calc.js:9)</failure></testcase></testsuite>' > r.xml
    reports: r.xml
"#;
    let project = Project::new(manifest);
    project.run_envs(&["a"]);
    let html = project.stdout_of(&["render", "--format", "html", "results"]);
    let at = |needle: &str| {
        html.find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in\n{html}"))
    };
    let answer = at("<h2>What failed</h2>");
    assert!(answer < at("<p class=\"summary\">"), "{html}");
    assert!(
        at("<p class=\"summary\">") < at("<h2>Matrix</h2>"),
        "{html}"
    );
    assert!(at("<h2>Matrix</h2>") < at("<h2>Failures</h2>"), "{html}");
    assert!(
        at("<h2>Failures</h2>") < at("<h2>What was verified</h2>"),
        "{html}"
    );
    let first = &html[answer..at("<p class=\"summary\">")];
    assert!(
        first.contains("<strong>junit in a: 1 test failed of 2")
            || first.contains("<strong>junit failed in a"),
        "{first}"
    );
    assert!(first.contains("divides"), "{first}");
    assert!(first.contains("— division by zero"), "{first}");
    assert!(
        html.contains("<details class=\"outcome\"><summary>trace</summary><pre><code>at calc.divide (calc.js:9)"),
        "{html}"
    );
    assert!(html.contains("<details><summary>Where each environment ran</summary>"));
    assert!(html.contains("<details><summary>Every executed pair</summary>"));
    assert!(!html.contains("<h2>Executed pairs</h2>"));
}

/// A cause longer than the one-line summary is kept whole: the summary stays one short
/// line (80 characters), the result keeps the rest in `cause`, and every place that
/// explains the failure shows it whole (the terminal's reasons, the comment's fold, the
/// HTML page), never a sentence cut in the middle.
#[test]
fn a_long_cause_is_kept_whole_beside_its_one_line_summary() {
    let manifest = r#"version: 1
environments: [{name: a}]
checks:
  - id: unit
    run: printf '<testsuite name="calc" tests="2"' > r.xml
    reports: r.xml
"#;
    let project = Project::new(manifest);
    let run = project
        .std_cmd()
        .args(["run", "--env", "a"])
        .output()
        .unwrap();
    let terminal = String::from_utf8_lossy(&run.stdout);
    let whole = "`r.xml`: malformed XML: syntax error: tag not closed: `>` not found before end of input, line 1";
    assert!(terminal.contains(whole), "{terminal}");
    let result = common::check_result(&project, "a", "unit");
    let summary = result["summary"].as_str().unwrap();
    assert_eq!(summary.chars().count(), 80, "{summary}");
    assert!(summary.ends_with('…'), "{summary}");
    let cause = result["cause"].as_str().unwrap();
    assert!(cause.ends_with(whole), "{cause}");
    assert!(
        cause.starts_with(&summary[..summary.len() - '…'.len_utf8()]),
        "{cause}"
    );
    let markdown = project.stdout_of(&["render", "--format", "markdown"]);
    assert!(
        markdown.contains(
            "\n- cause: report unreadable: \\`r.xml\\`: malformed XML: syntax error: tag not closed: \\`&gt;\\` not found before end of input, line 1\n"
        ),
        "{markdown}"
    );
    let html = project.stdout_of(&["render", "--format", "html"]);
    assert!(
        html.contains(
            "<p>Cause: report unreadable: `r.xml`: malformed XML: syntax error: tag not closed: `&gt;` not found before end of input, line 1</p>"
        ),
        "{html}"
    );
    // A cause the summary holds whole is not said twice.
    let short = Project::new(
        "version: 1\nenvironments: [{name: a}]\nchecks: [{id: unit, run: 'exit 3'}]\n",
    );
    short
        .std_cmd()
        .args(["run", "--env", "a"])
        .output()
        .unwrap();
    assert!(
        common::check_result(&short, "a", "unit")
            .get("cause")
            .is_none()
    );
    let markdown = short.stdout_of(&["render", "--format", "markdown"]);
    assert!(!markdown.contains("- cause:"), "{markdown}");
}

/// Each fact once in the comment: a failing test the runner's report names is in the
/// answer and in its pair's fold with its place and message, and not again in a log
/// tail; a failure no report explains keeps its log tail, the only evidence there is.
#[test]
fn the_comment_says_a_failing_test_once_in_its_fold() {
    let manifest = r#"version: 1
environments: [{name: a}]
checks:
  - id: junit
    test: |
      printf '<testsuite name="s"><testcase classname="calc" name="adds"/><testcase classname="calc" name="divides"><failure message="division by zero">at calc.divide</failure></testcase></testsuite>' > r.xml
      echo 'FAIL calc divides: division by zero'
      exit 1
    reports: r.xml
  - id: bare
    run: echo 'bare says why it failed'; exit 1
"#;
    let project = Project::new(manifest);
    project.run_envs(&["a"]);
    let markdown = project.stdout_of(&["render", "--format", "markdown", "results"]);
    let fold = |check: &str| {
        let start = markdown
            .find(&format!("<details><summary>❌ {check} in a"))
            .unwrap_or_else(|| panic!("no fold of {check}:\n{markdown}"));
        let end = start + markdown[start..].find("</details>").unwrap();
        &markdown[start..end]
    };
    let junit = fold("junit");
    assert!(
        junit.contains("\n- calc › divides: division by zero\n"),
        "{junit}"
    );
    assert_eq!(junit.matches("division by zero").count(), 1, "{junit}");
    assert!(!junit.contains("```"), "{junit}");
    assert!(
        fold("bare").contains("```text\nbare says why it failed\n```"),
        "{markdown}"
    );
}

/// A result file's `cause` is untrusted text: a forged one of many lines and thousands
/// of characters reaches the verdict's reasons as one line of at most 1,000 characters,
/// as `run` writes it.
#[test]
fn a_forged_cause_is_bounded_to_one_line_in_the_verdict() {
    let manifest = r#"version: 1
environments: [{name: a}]
checks:
  - id: unit
    run: printf '<testsuite name="calc" tests="2"' > r.xml
    reports: r.xml
"#;
    let project = Project::new(manifest);
    project.run_envs(&["a"]);
    let file = "results/a/verify-matrix-a.json";
    let mut result = project.json(file);
    let forged = format!("forged\n{}", "x".repeat(20_000));
    // As a check that errored before it had an exit code: the reason is its cause.
    result["checks"][0]["cause"] = serde_json::Value::String(forged);
    result["checks"][0]["exit_code"] = serde_json::Value::Null;
    project.write(file, &result.to_string());
    project.merge_into("results", "report.json");
    let report = project.json("report.json");
    let reason = report["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .find(|r| r.contains("forged"))
        .unwrap_or_else(|| panic!("no reason with the cause: {report}"));
    assert!(!reason.contains('\n'), "{reason}");
    assert!(
        reason.chars().count() < 1_100,
        "{} characters",
        reason.chars().count()
    );
    assert!(reason.ends_with('…'), "{reason}");
}
