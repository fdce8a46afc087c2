use std::time::{Duration, SystemTime};

use super::*;

/// A folder with `files` (name, content) written in it.
fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

fn context(dir: &Path) -> Context {
    Context {
        cwd: dir.to_path_buf(),
        root: dir.to_path_buf(),
        started: Started::at(SystemTime::UNIX_EPOCH),
        redactor: Default::default(),
    }
}

fn read_one_named(name: &str, content: &str) -> Result<Reading, Problem> {
    let dir = folder(&[(name, content)]);
    read(&[ReportPattern::any(name)], &context(dir.path()))
}

fn read_one(content: &str) -> Result<Reading, Problem> {
    let dir = folder(&[("report.xml", content)]);
    read(&[ReportPattern::any("report.xml")], &context(dir.path()))
}

fn unreadable(content: &str) -> String {
    match read_one(content) {
        Err(Problem::Unreadable(reason)) => reason,
        other => panic!("expected unreadable, got {other:?}"),
    }
}

const SMALL: &str = r#"<?xml version="1.0"?>
<testsuite name="s">
  <testcase classname="a" name="one" time="0.5"/>
  <testcase classname="a" name="two"><failure message="boom">trace</failure></testcase>
  <testcase classname="a" name="three"><skipped/></testcase>
</testsuite>
"#;

#[test]
fn a_lone_testsuite_is_read_with_outcomes_and_times() {
    let reading = read_one(SMALL).unwrap();
    let c = &reading.counts;
    assert_eq!((c.passed, c.failed, c.skipped, c.flaky), (1, 1, 1, 0));
    assert_eq!(c.runner, "junit");
    let cases = &reading.report.cases;
    assert_eq!(cases[0].duration_ms, Some(500));
    assert_eq!(cases[1].outcome, TestOutcome::Failed);
    assert_eq!(cases[1].message.as_deref(), Some("boom"));
    assert_eq!(cases[1].output.as_deref(), Some("trace"));
    assert_eq!(reading.report.files, vec!["report.xml"]);
}

#[test]
fn a_doctype_is_refused_so_no_entity_is_ever_expanded() {
    let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]>
<testsuite name="s"><testcase name="&lol2;"/></testsuite>
"#;
    let reason = unreadable(laughs);
    assert!(reason.contains("DOCTYPE is refused"), "{reason}");
    assert!(reason.contains("line 2"), "{reason}");
    let external = r#"<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<testsuite name="s"><testcase name="&x;"/></testsuite>
"#;
    assert!(unreadable(external).contains("DOCTYPE is refused"));
}

#[test]
fn an_undeclared_entity_is_an_error_not_text() {
    let reason = unreadable(
        "<testsuite name=\"s\">\n<testcase name=\"a\"><failure>&secret;</failure></testcase></testsuite>",
    );
    assert!(reason.contains("unknown entity `&secret;`"), "{reason}");
    let reason = unreadable("<testsuite name=\"s\">\n<testcase name=\"&secret;\"/></testsuite>");
    assert!(reason.contains("attribute `name`"), "{reason}");
}

#[test]
fn predefined_and_character_references_are_text() {
    let reading = read_one(
        r#"<testsuite name="s"><testcase name="a &amp; &lt;b&gt; &#x263A;"><failure>x &lt; y&#10;z</failure></testcase></testsuite>"#,
    )
    .unwrap();
    let case = &reading.report.cases[0];
    assert_eq!(case.name, "a & <b> ☺");
    assert_eq!(case.output.as_deref(), Some("x < y\nz"));
}

#[test]
fn a_report_cut_short_is_an_error_with_its_line() {
    let cut = &SMALL[..SMALL
        .find("<testcase classname=\"a\" name=\"three\"")
        .unwrap()];
    let reason = unreadable(cut);
    assert!(reason.contains("ends inside an element"), "{reason}");
    let reason = unreadable("<testsuite name=\"s\">\n<testcase name=\"a\">\n</testsuite>");
    assert!(reason.contains("malformed XML"), "{reason}");
    assert!(reason.contains("line 3"), "{reason}");
}

#[test]
fn other_documents_are_not_reports() {
    assert!(unreadable("<html><body/></html>").contains("root element is <html>"));
    assert!(unreadable("").contains("empty"));
    assert!(unreadable("   \n").contains("empty"));
    assert!(unreadable("PASS all good").contains("not a test report"));
    assert!(unreadable("{\"results\": 3}").contains("not a JSON test report"));
    let reason = unreadable("{\"name\": \"a package.json\"}");
    assert!(
        reason.contains("no known test report") && reason.contains("`testResults` (Jest, Vitest)"),
        "{reason}"
    );
    // A document that is none of them whole: Mocha's stats without its lists.
    assert!(unreadable("{\"stats\": {\"tests\": 3}}").contains("without its `passes`"));
}

#[test]
fn nesting_is_bounded() {
    let deep = format!(
        "<testsuites>{}{}</testsuites>",
        "<testsuite name=\"x\">".repeat(100),
        "</testsuite>".repeat(100)
    );
    assert!(unreadable(&deep).contains("nested deeper than 64"));
}

#[test]
fn kept_text_is_bounded() {
    let name = "n".repeat(5000);
    let trace = format!("{}END", "line of a trace\n".repeat(50_000));
    let xml = format!(
        "<testsuite name=\"s\"><testcase name=\"{name}\"><failure message=\"{}\">{trace}</failure></testcase></testsuite>",
        "m".repeat(5000)
    );
    let reading = read_one(&xml).unwrap();
    let case = &reading.report.cases[0];
    assert_eq!(case.name.chars().count(), MAX_NAME_CHARS + 1);
    assert!(case.message.as_ref().unwrap().chars().count() <= MAX_MESSAGE_CHARS + 1);
    let output = case.output.as_ref().unwrap();
    assert!(
        output.chars().count() < MAX_OUTPUT_CHARS + 100,
        "{}",
        output.len()
    );
    assert!(output.contains("characters left out"));
}

#[test]
fn reruns_in_a_row_are_one_test_flaky_when_the_last_passed() {
    // pytest's suite: pytest-rerunfailures writes a rerun as the same case again.
    let xml = r#"<testsuite name="pytest">
<testcase classname="m" name="t"/><testcase classname="m" name="t"/>
<testcase classname="m" name="u"/><testcase classname="m" name="u"/><testcase classname="m" name="u"><failure>x</failure></testcase>
<testcase classname="m" name="v"/>
</testsuite>"#;
    let reading = read_one(xml).unwrap();
    let outcomes: Vec<_> = reading
        .report
        .cases
        .iter()
        .map(|c| (c.name.as_str(), c.outcome))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("t", TestOutcome::Flaky),
            ("u", TestOutcome::Failed),
            ("v", TestOutcome::Passed)
        ]
    );
    assert_eq!(reading.counts.flaky, 1);
}

#[test]
fn the_suite_is_the_classname_else_the_whole_path_of_the_suites_around_the_case() {
    let xml = r#"<testsuites><testsuite name="outer"><testsuite name="inner">
<testcase name="a"/><testcase name="n" classname="test"/></testsuite><testcase name="b"/><testcase name="c" classname="K"/></testsuite><testcase name="top" classname="test"/></testsuites>"#;
    let reading = read_one(xml).unwrap();
    let suites: Vec<_> = reading
        .report
        .cases
        .iter()
        .map(|c| c.suite.as_str())
        .collect();
    // Node's `classname="test"` says nothing of where the test is: its suites do.
    assert_eq!(
        suites,
        vec!["outer › inner", "outer › inner", "outer", "K", "test"]
    );
}

/// Each test of `reading` as `suite | name`.
pub(super) fn suite_and_name(reading: &Reading) -> Vec<String> {
    reading
        .report
        .cases
        .iter()
        .map(|c| format!("{} | {}", c.suite, c.name))
        .collect()
}

/// mocha-junit-reporter's full title is the `describe()` path and the test's own title,
/// either way round; a title that only ends the same way is left as written.
#[test]
fn a_mocha_full_title_is_its_describe_path_and_its_own_title() {
    let xml = r#"<testsuites><testsuite name="nested">
<testcase name="strings nested splits" classname="splits"/>
<testcase classname="strings nested joins" name="joins"/>
<testcase name="unnested splits" classname="splits"/>
<testcase name="nested" classname="nested"/>
</testsuite></testsuites>"#;
    let ids = suite_and_name(&read_one(xml).unwrap());
    assert_eq!(
        ids,
        vec![
            "strings nested | splits",
            "strings nested | joins",
            "splits | unnested splits",
            "nested | nested",
        ]
    );
}

/// Bazel writes its test's log in the suite, beside the one case: the case's output;
/// a suite of two cases keeps its output to itself.
#[test]
fn a_suites_output_beside_its_one_case_is_that_cases() {
    let xml = r#"<testsuites><testsuite name="t" tests="1" errors="1">
<testcase name="t" status="run"><error message="exited with error code 1"></error></testcase>
<system-out><![CDATA[Traceback: No module named 'x']]></system-out></testsuite>
<testsuite name="u"><testcase name="a"><failure message="f"/></testcase><testcase name="b"/>
<system-out>not a's</system-out></testsuite></testsuites>"#;
    let reading = read_one(xml).unwrap();
    let outputs: Vec<_> = reading
        .report
        .cases
        .iter()
        .map(|c| c.output.clone().unwrap_or_default())
        .collect();
    assert!(outputs[0].contains("No module named 'x'"), "{outputs:?}");
    assert!(!outputs[1].contains("not a's"), "{outputs:?}");
}

#[test]
fn a_repository_path_in_a_tests_name_loses_the_checkouts_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let xml = format!(
        r#"<testsuite name="{r}/test"><testcase name="{r}/test/empty.test.js"/><testcase classname="file://{r}/a.js" name="other /elsewhere/{r}x"/></testsuite>"#,
        r = root.display()
    );
    std::fs::write(root.join("report.xml"), xml).unwrap();
    let reading = read(&[ReportPattern::any("report.xml")], &context(&root)).unwrap();
    let names: Vec<(&str, &str)> = reading
        .report
        .cases
        .iter()
        .map(|c| (c.suite.as_str(), c.name.as_str()))
        .collect();
    let other = format!("other /elsewhere/{}x", root.display());
    assert_eq!(
        names,
        vec![("test", "test/empty.test.js"), ("a.js", other.as_str())]
    );
}

#[test]
fn ctrf_statuses_and_flaky() {
    let json = r#"{"results": {"tool": {"name": "x"}, "summary": {}, "tests": [
  {"name": "a", "status": "passed", "duration": 12},
  {"name": "b", "status": "passed", "flaky": true},
  {"name": "c", "status": "failed", "message": "no", "trace": "at x", "suite": ["f", "g"]},
  {"name": "d", "status": "pending"},
  {"name": "e", "status": "other", "rawStatus": "todo"}
]}}"#;
    let reading = read_one(json).unwrap();
    let c = &reading.counts;
    assert_eq!((c.passed, c.failed, c.skipped, c.flaky), (2, 1, 2, 1));
    // `other` the runner calls anything but not run (a timeout) never passes; nor do
    // totals the tests do not bear out.
    let timed_out = r#"{"results": {"summary": {"tests": 2, "failed": 0}, "tests": [
  {"name": "a", "status": "passed"},
  {"name": "b", "status": "other", "rawStatus": "timedOut"}
]}}"#;
    let c = read_one(timed_out).unwrap().counts;
    assert_eq!((c.passed, c.failed), (1, 1));
    let hidden = r#"{"results": {"summary": {"tests": 2, "passed": 1, "failed": 1}, "tests": [
  {"name": "a", "status": "passed"}
]}}"#;
    let hidden = read_one(hidden).unwrap();
    assert_eq!((hidden.counts.passed, hidden.counts.failed), (1, 1));
    assert!(
        hidden.report.cases[1]
            .message
            .as_deref()
            .unwrap()
            .contains("the summary counts 1 failed, it lists 0; 2 tests, it lists 1")
    );
    assert_eq!(reading.report.format, "ctrf");
    assert_eq!(reading.report.cases[2].suite, "f › g");
    let bad = r#"{"results": {"tests": [{"name": "a", "status": "passed"},
{"name": "b", "status": "won"}]}}"#;
    match read_one(bad) {
        Err(Problem::Unreadable(reason)) => {
            assert!(
                reason.contains("results.tests[1]: unknown status `won`"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    let broken = "{\"results\": {\"tests\": [\n{\"name\": \"a\", \"status\": }]}}";
    let reason = unreadable(broken);
    assert!(reason.contains("line 2"), "{reason}");
}

#[test]
fn go_events_and_a_broken_event_line() {
    let events = concat!(
        "{\"Action\":\"run\",\"Package\":\"m/p\",\"Test\":\"TestA\"}\n",
        "{\"Action\":\"output\",\"Package\":\"m/p\",\"Test\":\"TestA\",\"Output\":\"=== RUN   TestA\\n\"}\n",
        "{\"Action\":\"output\",\"Package\":\"m/p\",\"Test\":\"TestA\",\"Output\":\"    a_test.go:9: want 2\\n\"}\n",
        "{\"Action\":\"fail\",\"Package\":\"m/p\",\"Test\":\"TestA\",\"Elapsed\":0.25}\n",
        "# m/p build noise\n",
        "{\"Action\":\"pass\",\"Package\":\"m/p\",\"Test\":\"TestB\",\"Elapsed\":0}\n",
        "{\"Action\":\"fail\",\"Package\":\"m/p\",\"Elapsed\":0.3}\n",
    );
    let reading = read_one(events).unwrap();
    assert_eq!(reading.report.format, "go-test-json");
    let c = &reading.counts;
    assert_eq!((c.passed, c.failed), (1, 1));
    let a = &reading.report.cases[0];
    assert_eq!(a.message.as_deref(), Some("a_test.go:9: want 2"));
    assert_eq!(a.duration_ms, Some(250));
    let broken = format!("{events}{{\"Action\":\"pass\",\n");
    let reason = unreadable(&broken);
    assert!(reason.contains("line 8"), "{reason}");
}

#[test]
fn a_pattern_matching_nothing_or_an_old_file_gives_no_evidence() {
    let dir = folder(&[("old.xml", SMALL)]);
    match read(&[ReportPattern::any("out/*.xml")], &context(dir.path())) {
        Err(Problem::Missing(reason)) => {
            assert!(reason.contains("no report: `out/*.xml` matched no file"))
        }
        other => panic!("{other:?}"),
    }
    let mut later = context(dir.path());
    later.started = Started::at(SystemTime::now() + Duration::from_secs(5));
    match read(&[ReportPattern::any("old.xml")], &later) {
        Err(Problem::Missing(reason)) => {
            assert!(reason.contains("report `old.xml` predates the check"))
        }
        other => panic!("{other:?}"),
    }
}

/// A report written in the same second as the check's start, by an earlier check, is
/// left over: the attempt found it and left it as it was.
#[test]
fn a_report_the_attempt_did_not_write_is_left_over_within_the_same_second() {
    let dir = folder(&[("junit.xml", SMALL)]);
    let mut ctx = context(dir.path());
    ctx.started = Started::now(&[ReportPattern::any("junit.xml")], dir.path());
    match read(&[ReportPattern::any("junit.xml")], &ctx) {
        Err(Problem::Missing(reason)) => {
            assert!(reason.contains("was not written by the check"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    // Written again (as the runner does), it is the attempt's own.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(dir.path().join("junit.xml"), SMALL).unwrap();
    assert!(read(&[ReportPattern::any("junit.xml")], &ctx).is_ok());
}

/// A report dated in the future could pass for fresh forever: it is refused.
#[test]
fn a_report_dated_in_the_future_is_refused() {
    let dir = folder(&[("junit.xml", SMALL)]);
    let file = std::fs::File::options()
        .write(true)
        .open(dir.path().join("junit.xml"))
        .unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(3600))
        .unwrap();
    let mut ctx = context(dir.path());
    ctx.started = Started::at(SystemTime::now());
    match read(&[ReportPattern::any("junit.xml")], &ctx) {
        Err(Problem::Missing(reason)) => {
            assert!(reason.contains("dated in the future"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn globs_find_reports_in_folders_and_add_them_up() {
    let dir = folder(&[
        ("target/a/junit.xml", SMALL),
        ("target/b/junit.xml", SMALL),
        ("target/b/other.txt", "x"),
    ]);
    let reading = read(
        &[ReportPattern::any("target/**/junit.xml")],
        &context(dir.path()),
    )
    .unwrap();
    assert_eq!(reading.counts.passed, 2);
    assert_eq!(
        reading.report.files,
        vec!["target/a/junit.xml", "target/b/junit.xml"]
    );
}

#[cfg(unix)]
#[test]
fn a_report_leading_outside_the_repository_is_refused() {
    let outside = folder(&[("secret.xml", SMALL)]);
    let dir = folder(&[]);
    std::os::unix::fs::symlink(outside.path().join("secret.xml"), dir.path().join("r.xml"))
        .unwrap();
    match read(&[ReportPattern::any("r.xml")], &context(dir.path())) {
        Err(Problem::Unreadable(reason)) => assert!(reason.contains("leads outside"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn patterns_stay_inside_the_checks_folder() {
    assert!(check_pattern("target/junit.xml").is_ok());
    assert!(check_pattern("reports/**/*.xml").is_ok());
    assert!(check_pattern("../x.xml").unwrap_err().contains("`..`"));
    assert!(
        check_pattern("/tmp/x.xml")
            .unwrap_err()
            .contains("absolute")
    );
    assert!(
        check_pattern("a/[b.xml")
            .unwrap_err()
            .contains("not a valid glob")
    );
    assert!(check_pattern(" ").unwrap_err().contains("empty"));
}

#[test]
fn counts_disagree_on_failures_or_on_tests_that_ran() {
    let counts = |passed, failed, skipped| TestCounts {
        passed,
        failed,
        skipped,
        runner: "x".into(),
        ..TestCounts::default()
    };
    // Equal.
    assert!(!counts_disagree(&counts(5, 1, 0), &counts(5, 1, 0), 0));
    // A report without the skipped tests (nextest, mocha).
    assert!(!counts_disagree(&counts(5, 1, 2), &counts(5, 1, 0), 0));
    // A todo the report calls passed: the same tests in all.
    assert!(!counts_disagree(&counts(3, 1, 2), &counts(4, 1, 1), 0));
    // A test that ran is missing, or a failure is.
    assert!(counts_disagree(&counts(5, 1, 0), &counts(4, 1, 0), 0));
    assert!(counts_disagree(&counts(5, 1, 0), &counts(6, 0, 0), 0));
    // A test file that failed to load: a failure of the report's, not a test the
    // log counts.
    assert!(!counts_disagree(&counts(4, 1, 2), &counts(4, 2, 2), 1));
    assert!(counts_disagree(&counts(4, 1, 2), &counts(4, 2, 2), 0));
}

#[test]
fn seconds_are_read_as_reports_write_them() {
    assert_eq!(seconds_to_ms("0.123"), Some(123));
    assert_eq!(seconds_to_ms("1,234.5"), Some(1_234_500));
    assert_eq!(seconds_to_ms("-1"), None);
    assert_eq!(seconds_to_ms("NaN"), None);
}

/// Two tests with the same title (jest's `it.each` with a fixed title, vitest's
/// data-driven `[object Object]`) are two tests, neither flaky; pytest's repeated case
/// is a rerun (its suite is `pytest`), and so is a repeat the suite's own count leaves
/// out.
#[test]
fn repeated_names_are_tests_unless_the_runner_counts_them_as_reruns() {
    let same_title = r#"<testsuites name="jest tests" tests="3"><testsuite name="sum" tests="3">
        <testcase classname="sum adds" name="sum adds"/>
        <testcase classname="sum adds" name="sum adds"/>
        <testcase classname="sum other" name="sum other"/>
    </testsuite></testsuites>"#;
    let reading = read_one(same_title).unwrap();
    assert_eq!(
        (reading.counts.passed, reading.counts.flaky),
        (3, 0),
        "{:?}",
        reading.counts
    );
    assert_eq!(reading.report.cases.len(), 3);
    let pytest_rerun = r#"<testsuites name="pytest tests"><testsuite name="pytest" tests="1">
        <testcase classname="t" name="test_x"/>
        <testcase classname="t" name="test_x"/>
    </testsuite></testsuites>"#;
    let reading = read_one(pytest_rerun).unwrap();
    assert_eq!((reading.counts.passed, reading.counts.flaky), (1, 1));
    let counted_once = r#"<testsuite name="other" tests="1">
        <testcase classname="t" name="a"/>
        <testcase classname="t" name="a"/>
    </testsuite>"#;
    let reading = read_one(counted_once).unwrap();
    assert_eq!((reading.counts.passed, reading.counts.flaky), (1, 1));
}

/// `go test -json` of a cached package replays its tests, then says `(cached)`: the
/// reading says so, since its tests were not run now.
#[test]
fn a_cached_go_package_is_a_no_op_of_the_report() {
    let events = concat!(
        r#"{"Action":"start","Package":"example.com/calc"}"#,
        "\n",
        r#"{"Action":"run","Package":"example.com/calc","Test":"TestAdd"}"#,
        "\n",
        r#"{"Action":"pass","Package":"example.com/calc","Test":"TestAdd","Elapsed":0}"#,
        "\n",
        r#"{"Action":"output","Package":"example.com/calc","Output":"ok  \texample.com/calc\t(cached)\n"}"#,
        "\n",
        r#"{"Action":"pass","Package":"example.com/calc","Elapsed":0}"#,
        "\n",
    );
    let reading = read_one(events).unwrap();
    assert_eq!(reading.counts.passed, 1);
    assert_eq!(
        reading.noop.as_deref(),
        Some("ok   example.com/calc (cached)")
    );
    let fresh = events.replace("(cached)", "0.012s");
    assert_eq!(read_one(&fresh).unwrap().noop, None);
}

#[test]
fn skipped_tests_a_suite_counts_but_does_not_list_are_counted_once() {
    // libtest's JUnit: ignored tests only in `tests` and `skipped`.
    let libtest = r#"<?xml version="1.0" encoding="UTF-8"?><testsuites><testsuite name="test" package="test" id="0" errors="0" failures="0" tests="3" skipped="2" ><testcase classname="tests" name="a" time="0"/></testsuite></testsuites>"#;
    let c = read_one(libtest).unwrap().counts;
    assert_eq!((c.passed, c.failed, c.skipped), (1, 0, 2));
    // Listed skipped cases are not counted again, at any level of nesting.
    let listed = r#"<testsuites tests="3" skipped="2"><testsuite name="s" tests="3" skipped="2">
        <testcase classname="a" name="one"/>
        <testcase classname="a" name="two"><skipped/></testcase>
        <testcase classname="a" name="three"><skipped/></testcase>
    </testsuite></testsuites>"#;
    let c = read_one(listed).unwrap().counts;
    assert_eq!((c.passed, c.failed, c.skipped), (1, 0, 2));
    // Unlisted in the inner suite, declared again by the outer one: once.
    let nested = r#"<testsuites tests="4" skipped="2"><testsuite name="s" tests="4" skipped="2">
        <testcase classname="a" name="one"/>
        <testcase classname="a" name="two"/>
    </testsuite></testsuites>"#;
    let c = read_one(nested).unwrap().counts;
    assert_eq!((c.passed, c.failed, c.skipped), (2, 0, 2));
    // A `skipped` count that the `tests` count does not account for adds nothing, and
    // the test the `tests` count declares beyond the one listed is said.
    let odd = r#"<testsuite name="s" tests="2" skipped="5"><testcase classname="a" name="one"/></testsuite>"#;
    let reading = read_one(odd).unwrap();
    let c = &reading.counts;
    assert_eq!((c.passed, c.failed, c.skipped), (1, 1, 0));
    assert_eq!(
        reading.report.cases[1].message.as_deref(),
        Some("the suite `s` counts 2 tests, its cases show 1")
    );
}

#[test]
fn one_run_written_by_two_reporters_is_counted_once() {
    // jest with jest-junit and jest-ctrf-json-reporter, one run (a real capture): the
    // todo is a passed case to one, skipped to the other; six tests either way.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reports/jest");
    let ctx = context(&fixture);
    let both = |patterns: &[&str]| {
        let patterns: Vec<_> = patterns.iter().map(|p| ReportPattern::any(*p)).collect();
        read(&patterns, &ctx).unwrap()
    };
    let junit = both(&["junit.xml"]);
    let together = both(&["junit.xml", "ctrf.json"]);
    assert_eq!(together.counts, junit.counts);
    assert_eq!(together.report.cases, junit.report.cases);
    assert_eq!(together.report.files, vec!["junit.xml", "ctrf.json"]);
    // Named the other way round, the CTRF reading is the one kept.
    let ctrf = both(&["ctrf.json", "junit.xml"]);
    assert_eq!(ctrf.counts.runner, "ctrf");
    assert_eq!((ctrf.counts.passed, ctrf.counts.skipped), (3, 2));
    assert_eq!(ctrf.report.cases.len(), 6);

    // Different runs in one check (two runners, different counts) are added up, and
    // so are the files of one format.
    let dir = folder(&[
        ("a.xml", SMALL),
        (
            "b.json",
            r#"{"results":{"tests":[{"name":"x","status":"passed","duration":1}]}}"#,
        ),
    ]);
    let reading = read(
        &[ReportPattern::any("a.xml"), ReportPattern::any("b.json")],
        &context(dir.path()),
    )
    .unwrap();
    assert_eq!((reading.counts.passed, reading.counts.failed), (2, 1));
    let dir = folder(&[("a.xml", SMALL), ("b.xml", SMALL)]);
    let reading = read(&[ReportPattern::any("*.xml")], &context(dir.path())).unwrap();
    assert_eq!(reading.counts.failed, 2);
}

#[test]
fn a_panics_values_follow_its_place_and_its_backtrace_is_left_out() {
    // nextest's message is the panic's first line; the values are in the text below it.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reports/nextest");
    let reading = read(&[ReportPattern::any("junit.xml")], &context(&fixture)).unwrap();
    let failed = reading
        .report
        .cases
        .iter()
        .find(|c| c.name == "tests::subtract_is_wrong")
        .unwrap();
    assert_eq!(
        failed.message.as_deref(),
        Some(
            "thread 'tests::subtract_is_wrong' (5950) panicked at src/lib.rs:21:9:\n\
             assertion `left == right` failed: adding a negative number\n  left: 1\n right: 3"
        )
    );
    // A message of its own is kept as it is (pytest's, beside a traceback).
    assert_eq!(first_lines("boom", "trace\nmore"), "boom");
    assert_eq!(first_lines("", "trace\nmore"), "trace\nmore");
}

/// What a report says failed is never passed over: a suite's own `<failure>` or
/// `<error>` (a set-up that failed), failures its counts declare and its cases do not
/// show, GoogleTest's tests that did not run, a `go test -json` package that failed
/// without a failed test, a test that never ended, a stream cut before its package's
/// end.
#[test]
fn failures_outside_the_cases_and_tests_that_never_ran_are_never_passes() {
    let counts = |text: &str| {
        let c = read_one(text).unwrap().counts;
        (c.passed, c.failed, c.skipped)
    };
    // JUnit: a suite's own error (JUnit 5's BeforeAll), and declared failures unlisted.
    assert_eq!(
        counts(
            r#"<testsuites><testsuite name="s" tests="3" failures="1" errors="1"><error message="BeforeAll failed"/><testcase classname="c" name="ok"/></testsuite></testsuites>"#
        ),
        (1, 2, 0)
    );
    assert_eq!(
        counts(
            r#"<testsuite name="s" tests="2" failures="1"><testcase classname="c" name="ok"/></testsuite>"#
        ),
        (1, 1, 0)
    );
    // Counted once, inner suite and outer alike.
    assert_eq!(
        counts(
            r#"<testsuites failures="1"><testsuite name="s" failures="1"><testcase classname="c" name="bad"><failure/></testcase><testcase classname="c" name="ok"/></testsuite></testsuites>"#
        ),
        (1, 1, 0)
    );
    // GoogleTest: disabled (`notrun`) and skipped (`result="skipped"`) did not pass.
    assert_eq!(
        counts(
            r#"<testsuites><testsuite name="S" tests="3" disabled="1"><testcase name="DISABLED_A" status="notrun" result="suppressed" classname="S"/><testcase name="B" status="run" result="skipped" classname="S"/><testcase name="C" status="run" result="completed" classname="S"/></testsuite></testsuites>"#
        ),
        (1, 0, 2)
    );
    // go test -json: TestMain panicked after a test passed; a test that never ended; a
    // stream cut before its package's end.
    let go = |lines: &[&str]| counts(&(lines.join("\n") + "\n"));
    assert_eq!(
        go(&[
            r#"{"Action":"run","Package":"p","Test":"TestA"}"#,
            r#"{"Action":"pass","Package":"p","Test":"TestA"}"#,
            r#"{"Action":"output","Package":"p","Output":"panic: in TestMain\n"}"#,
            r#"{"Action":"fail","Package":"p"}"#,
        ]),
        (1, 1, 0)
    );
    assert_eq!(
        go(&[
            r#"{"Action":"run","Package":"p","Test":"TestA"}"#,
            r#"{"Action":"pass","Package":"p","Test":"TestA"}"#,
            r#"{"Action":"run","Package":"p","Test":"TestSlow"}"#,
            r#"{"Action":"output","Package":"p","Test":"TestSlow","Output":"panic: test timed out\n"}"#,
            r#"{"Action":"fail","Package":"p"}"#,
        ]),
        (1, 1, 0)
    );
    assert_eq!(
        go(&[
            r#"{"Action":"run","Package":"p","Test":"TestA"}"#,
            r#"{"Action":"pass","Package":"p","Test":"TestA"}"#,
        ]),
        (1, 1, 0)
    );
    // A build's own events (an ImportPath, no Package) are not a package.
    assert_eq!(
        go(&[
            r##"{"ImportPath":"p [p.test]","Action":"build-output","Output":"# warning\n"}"##,
            r#"{"Action":"run","Package":"p","Test":"TestA"}"#,
            r#"{"Action":"pass","Package":"p","Test":"TestA"}"#,
            r#"{"Action":"pass","Package":"p"}"#,
        ]),
        (1, 0, 0)
    );
}

/// A repeated case is a pytest rerun only as pytest-rerunfailures writes it (bare
/// earlier attempts): one that says it failed or was skipped is a run of its own
/// (pytest-xdist's `--dist each`); PHPUnit 9's warnings, GoogleTest-like statuses in
/// any case and counts written with a fraction are read; `go tool test2json` without
/// `-p` names no package and its end still counts.
#[test]
fn repeats_warnings_statuses_and_unnamed_packages() {
    let counts = |text: &str| {
        let c = read_one(text).unwrap().counts;
        (c.passed, c.failed, c.skipped)
    };
    assert_eq!(
        counts(
            r#"<testsuites name="pytest tests"><testsuite name="pytest" tests="2" failures="1"><testcase classname="t" name="test_worker"><failure message="gw0"/></testcase><testcase classname="t" name="test_worker"/></testsuite></testsuites>"#
        ),
        (1, 1, 0)
    );
    assert_eq!(
        counts(
            r#"<testsuites name="pytest tests"><testsuite name="pytest" tests="1"><testcase classname="t" name="a"><failure/></testcase><testcase classname="t" name="a"><skipped/></testcase></testsuite></testsuites>"#
        ),
        (0, 1, 1)
    );
    assert_eq!(
        counts(
            r#"<testsuites><testsuite name="T" tests="1" warnings="1"><testcase name="Warning" class="PHPUnit\Framework\WarningTestCase"><warning>No tests found in class "T".</warning></testcase></testsuite></testsuites>"#
        ),
        (0, 1, 0)
    );
    assert_eq!(
        counts(
            r#"<testsuite name="s"><testcase name="a" status="NOTRUN"/><testcase name="b" status="failed"/><testcase name="c" result="SKIPPED"/><testcase name="d"/></testsuite>"#
        ),
        (1, 1, 2)
    );
    assert_eq!(
        counts(r#"<testsuite name="s" failures="1.0"><testcase name="a"/></testsuite>"#),
        (1, 1, 0)
    );
    let go = |lines: &[&str]| counts(&(lines.join("\n") + "\n"));
    assert_eq!(
        go(&[
            r#"{"Action":"run","Test":"TestA"}"#,
            r#"{"Action":"pass","Test":"TestA"}"#,
            r#"{"Action":"output","Output":"FAIL\n"}"#,
            r#"{"Action":"fail","Elapsed":0.1}"#,
        ]),
        (1, 1, 0)
    );
    assert_eq!(
        go(&[
            r#"{"Action":"run","Test":"TestA"}"#,
            r#"{"Action":"pass","Test":"TestA"}"#,
        ]),
        (1, 1, 0)
    );
    // A package's failure is not taken back by a later pass.
    assert_eq!(
        go(&[
            r#"{"Action":"run","Package":"p","Test":"TestA"}"#,
            r#"{"Action":"pass","Package":"p","Test":"TestA"}"#,
            r#"{"Action":"fail","Package":"p","Test":""}"#,
            r#"{"Action":"pass","Package":"p"}"#,
        ]),
        (1, 1, 0)
    );
}

/// UTF-16 reports (Windows PowerShell 5's `>` writes them), with a byte-order mark and
/// without, read as their text; a cut one says so.
#[test]
fn utf16_reports_are_read_as_their_text() {
    let xml = "<?xml version=\"1.0\" encoding=\"utf-16\"?>\r\n<testsuite name=\"s\" tests=\"2\" failures=\"1\"><testcase classname=\"c\" name=\"ok\"/><testcase classname=\"c\" name=\"bad\"><failure message=\"nope\"/></testcase></testsuite>\r\n";
    let utf16 = |text: &str, bom: bool, little: bool| -> Vec<u8> {
        let mut bytes = Vec::new();
        let units = (bom.then_some(0xFEFF_u16))
            .into_iter()
            .chain(text.encode_utf16());
        for unit in units {
            bytes.extend(if little {
                unit.to_le_bytes()
            } else {
                unit.to_be_bytes()
            });
        }
        bytes
    };
    for (bom, little) in [(true, true), (true, false), (false, true), (false, false)] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.xml"), utf16(xml, bom, little)).unwrap();
        let c = read(&[ReportPattern::any("r.xml")], &context(dir.path()))
            .unwrap_or_else(|e| panic!("bom {bom}, little {little}: {e:?}"))
            .counts;
        assert_eq!((c.passed, c.failed), (1, 1), "bom {bom}, little {little}");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut cut = utf16(xml, true, true);
    cut.pop();
    std::fs::write(dir.path().join("r.xml"), cut).unwrap();
    match read(&[ReportPattern::any("r.xml")], &context(dir.path())) {
        Err(Problem::Unreadable(why)) => assert!(why.contains("odd number of bytes"), "{why}"),
        other => panic!("{other:?}"),
    }
}

/// Jest's, Mocha's and RSpec's JSON whose totals claim more than they list, whose
/// statuses are not known, or which failed outside any test: never a green count.
#[test]
fn json_reports_that_claim_more_than_they_list_or_fail_outside_tests_are_failures() {
    let failures = |json: &str| -> Vec<(String, TestOutcome, String)> {
        let reading = read_one_named("report.json", json).unwrap();
        reading
            .report
            .cases
            .iter()
            .filter(|c| c.outcome.is_failure())
            .map(|c| {
                (
                    c.name.to_string(),
                    c.outcome,
                    c.message.as_deref().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    // Jest: five tests claimed, one listed; a status not known here; a file that
    // failed with no failing test.
    let jest = r#"{"numTotalTests": 5, "numFailedTests": 0, "numRuntimeErrorTestSuites": 1,
      "testResults": [
        {"name": "a.test.js", "status": "passed", "assertionResults": [
          {"ancestorTitles": ["d"], "title": "t", "status": "passed"},
          {"ancestorTitles": [], "title": "odd", "status": "focused"}]},
        {"name": "b.test.js", "status": "failed", "message": "SyntaxError: x", "assertionResults": []}]}"#;
    let found = failures(jest);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[0].0, "odd");
    assert_eq!(found[1].0, "(the test file itself)");
    assert_eq!(found[1].2, "SyntaxError: x");
    assert_eq!(found[2].2, "the summary counts 5 tests, it lists 2");
    // Mocha: stats that claim a failure its lists do not show.
    let mocha = r#"{"stats": {"tests": 1, "failures": 1}, "passes": [{"title": "t", "fullTitle": "d t"}],
      "failures": [], "pending": [], "tests": []}"#;
    let found = failures(mocha);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].2, "the summary counts 1 failures, it lists 0");
    // RSpec: an unknown status, an error outside the examples, totals that lie.
    let rspec = r#"{"version": "3.12.0", "examples": [
        {"description": "a", "full_description": "X a", "status": "passed"},
        {"description": "b", "full_description": "X b", "status": "bogus"}],
      "summary": {"example_count": 4, "failure_count": 0, "errors_outside_of_examples_count": 1},
      "messages": ["An error occurred while loading ./spec/x_spec.rb"]}"#;
    let found = failures(rspec);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[0].0, "X b");
    assert_eq!(found[1].0, "(errors outside of examples)");
    assert_eq!(found[2].2, "the summary counts 4 examples, it lists 2");
    let reading = read_one_named("report.json", rspec).unwrap();
    assert_eq!(reading.outside_failures, 2);
}

/// Names and messages in JSON reports are neutralised as XML ones are: control
/// characters and terminal escapes never reach a line of output.
#[test]
fn json_reports_names_are_one_line_without_control_characters() {
    let jest = "{\"numTotalTests\": 1, \"testResults\": [{\"name\": \"a.js\", \"status\": \"failed\",
      \"assertionResults\": [{\"ancestorTitles\": [\"\\u001b[31mred\"], \"title\": \"two\\nlines\\u0007\",
      \"status\": \"failed\", \"failureMessages\": [\"boom\\u001b]8;;http://x\\u0007\"]}]}]}";
    let reading = read_one_named("report.json", jest).unwrap();
    let case = &reading.report.cases[0];
    for text in [case.suite.as_str(), case.name.as_str()] {
        assert!(!text.chars().any(char::is_control), "{text:?}");
    }
    assert_eq!(case.name.trim_end(), "two lines");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, failure_persistence: None, ..Default::default() })]

    /// Any bytes, and any JSON shaped like each format's, give a reading or an error,
    /// never a panic.
    #[test]
    fn any_json_report_gives_a_reading_or_an_error(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
        status in "[a-z]{0,8}",
        n in proptest::prelude::any::<u64>(),
        line in proptest::prelude::any::<i64>(),
        duration in proptest::prelude::any::<f64>(),
    ) {
        let _ = read_one_named("report.json", &String::from_utf8_lossy(&bytes));
        let documents = [
            format!(r#"{{"numTotalTests": {n}, "numFailedTests": {n}, "testResults": [{{"name": "f", "status": "{status}", "assertionResults": [{{"title": "t", "status": "{status}", "duration": {duration:?}, "invocations": {n}, "location": {{"line": {line}}}}}]}}]}}"#),
            format!(r#"{{"stats": {{"tests": {n}, "failures": {n}}}, "passes": [{{"title": "t", "duration": {duration:?}, "currentRetry": {n}}}], "failures": [], "pending": []}}"#),
            format!(r#"{{"examples": [{{"description": "d", "status": "{status}", "line_number": {line}, "run_time": {duration:?}}}], "summary": {{"example_count": {n}, "errors_outside_of_examples_count": {n}}}}}"#),
        ];
        for document in documents {
            let _ = read_one_named("report.json", &document);
        }
    }
}

mod tap;

/// Surefire counts every failed run in its suite's `failures`, reruns included: those
/// are not failures the cases hide; a count beyond them still is.
#[test]
fn a_suites_failures_may_count_the_reruns_its_cases_carry_and_no_more() {
    let report = |declared: u32| {
        format!(
            r#"<testsuite name="S" tests="2" failures="{declared}">
<testcase classname="S" name="broken"><failure message="no"/><rerunFailure message="no"/><rerunFailure message="no"/></testcase>
<testcase classname="S" name="flaky"><flakyFailure message="once"/></testcase>
</testsuite>"#
        )
    };
    let reading = read_one(&report(4)).unwrap();
    let c = &reading.counts;
    assert_eq!((c.passed, c.failed, c.flaky), (1, 1, 1));
    let reading = read_one(&report(5)).unwrap();
    assert_eq!(reading.counts.failed, 2);
    assert!(
        reading
            .report
            .cases
            .iter()
            .any(|c| c.name == "(the suite itself)"),
        "{:?}",
        reading.report.cases
    );
}

/// Reads the files of `folder` as `patterns` name them (path, and format when given).
fn read_as(dir: &Path, patterns: &[(&str, Option<&str>)]) -> Result<Reading, Problem> {
    let patterns: Vec<ReportPattern> = patterns
        .iter()
        .map(|(path, format)| ReportPattern {
            path: (*path).to_owned(),
            format: format.map(|f| f.parse().unwrap()),
        })
        .collect();
    read(&patterns, &context(dir))
}

fn unreadable_reason(reading: Result<Reading, Problem>) -> String {
    match reading {
        Err(Problem::Unreadable(reason)) => reason,
        other => panic!("expected unreadable, got {other:?}"),
    }
}

/// `reports: { path, format }`: the named reader reads the file whatever its first
/// lines look like; unnamed, the same file is no report.
#[test]
fn a_named_format_reads_a_file_its_content_does_not_show() {
    let dir = folder(&[(
        "out.tap",
        "running the suite\nok 1 - a\nnot ok 2 - b\n1..2\n",
    )]);
    let reason = unreadable_reason(read_as(dir.path(), &[("out.tap", None)]));
    assert!(reason.contains("not a test report"), "{reason}");
    let reading = read_as(dir.path(), &[("out.tap", Some("tap"))]).unwrap();
    assert_eq!((reading.counts.passed, reading.counts.failed), (1, 1));
    assert_eq!(reading.counts.runner, "tap");
}

/// A named format that the file is not in is an error naming both, never a reading in
/// another format; an empty file is empty in every format.
#[test]
fn a_named_format_the_file_is_not_in_is_an_error() {
    let jest = r#"{"numTotalTests": 1, "numFailedTests": 1, "testResults": [{"name": "f.js", "status": "failed", "assertionResults": [{"title": "t", "fullName": "t", "status": "failed", "ancestorTitles": [], "failureMessages": ["boom"]}]}]}"#;
    let dir = folder(&[("r.json", jest), ("empty.xml", "")]);
    let reason = unreadable_reason(read_as(dir.path(), &[("r.json", Some("mocha-json"))]));
    assert!(
        reason.contains("not a mocha-json report: the document has no `stats`"),
        "{reason}"
    );
    let reason = unreadable_reason(read_as(dir.path(), &[("r.json", Some("junit"))]));
    assert!(reason.contains("r.json"), "{reason}");
    let reason = unreadable_reason(read_as(dir.path(), &[("r.json", Some("tap"))]));
    assert!(reason.contains("r.json"), "{reason}");
    let reason = unreadable_reason(read_as(dir.path(), &[("empty.xml", Some("junit"))]));
    assert!(reason.contains("empty"), "{reason}");
    // Jest-shaped, read as Vitest because the manifest says so.
    let reading = read_as(dir.path(), &[("r.json", Some("vitest-json"))]).unwrap();
    assert_eq!(
        (reading.counts.failed, reading.report.format.as_str()),
        (1, "vitest-json")
    );
}

/// A document with two formats' keys (a passing CTRF `results` beside a failing Jest
/// `testResults`) could be read green or red: refused until its format is named.
#[test]
fn a_json_document_in_two_formats_is_refused_unless_one_is_named() {
    let both = r#"{"results": {"tool": {"name": "x"}, "summary": {"tests": 1, "passed": 1, "failed": 0, "skipped": 0, "pending": 0, "other": 0, "start": 0, "stop": 1}, "tests": [{"name": "t", "status": "passed", "duration": 1}]},
"numTotalTests": 1, "numFailedTests": 1, "testResults": [{"name": "f.js", "status": "failed", "assertionResults": [{"title": "t", "fullName": "t", "status": "failed", "ancestorTitles": [], "failureMessages": ["boom"]}]}]}"#;
    let dir = folder(&[("r.json", both)]);
    let reason = unreadable_reason(read_as(dir.path(), &[("r.json", None)]));
    assert!(
        reason.contains("the keys of more than one report format: `results` (CTRF) and `testResults` (Jest, Vitest)"),
        "{reason}"
    );
    let reading = read_as(dir.path(), &[("r.json", Some("jest-json"))]).unwrap();
    assert_eq!(reading.counts.failed, 1);
    let reading = read_as(dir.path(), &[("r.json", Some("ctrf"))]).unwrap();
    assert_eq!((reading.counts.passed, reading.counts.failed), (1, 0));
}

/// One file named by two patterns: in two formats it is refused; named once, its
/// format holds whichever pattern comes first.
#[test]
fn one_file_in_two_named_formats_is_refused() {
    let dir = folder(&[("out.tap", "ok 1 - a\n1..1\n")]);
    let reason = unreadable_reason(read_as(
        dir.path(),
        &[("*.tap", Some("tap")), ("out.tap", Some("junit"))],
    ));
    assert!(
        reason.contains("`out.tap` is named as tap and as junit"),
        "{reason}"
    );
    let reading = read_as(dir.path(), &[("*.tap", None), ("out.tap", Some("tap"))]).unwrap();
    assert_eq!((reading.counts.passed, reading.report.files.len()), (1, 1));
}

/// Counts a suite declares are held against its cases without ever overflowing: a
/// `tests` count beyond its cases (and beyond any suite around it that accounts for
/// them) is a failing case, counts near the largest number are read, not added up past
/// it, and a `<rerunFailure>` with no final outcome is a failure.
#[test]
fn a_suites_counts_that_its_cases_do_not_bear_out_are_said_never_overflowed() {
    let counts = |text: &str| {
        let reading = read_one(text).unwrap();
        let c = &reading.counts;
        let said: Vec<String> = reading
            .report
            .cases
            .iter()
            .filter(|c| c.name == "(the suite itself)")
            .filter_map(|c| c.message.as_deref().map(str::to_owned))
            .collect();
        ((c.passed, c.failed, c.skipped), said)
    };
    let max = u64::MAX;
    let (c, said) = counts(&format!(
        r#"<testsuite name="s" tests="{max}" skipped="{max}"><testcase name="a"/></testsuite>"#
    ));
    assert_eq!(c, (1, 1, 0));
    assert_eq!(
        said,
        [format!(
            "the suite `s` counts {max} tests, its cases show 1"
        )]
    );
    let half = max / 2 + 1;
    let (c, _) = counts(&format!(
        r#"<testsuites><testsuite name="a" tests="{half}" skipped="{half}"/><testsuite name="b" tests="{half}" skipped="{half}"/></testsuites>"#
    ));
    assert_eq!(c.0, 0);
    assert!(c.1 >= 1, "{c:?}");
    let (c, said) = counts(
        r#"<testsuite name="s" tests="10" failures="0"><testcase name="a"/><testcase name="b"/><testcase name="c"/></testsuite>"#,
    );
    assert_eq!(c, (3, 1, 0));
    assert_eq!(said, ["the suite `s` counts 10 tests, its cases show 3"]);
    // An inner suite's count beyond its cases, with nothing around it to account.
    let (c, said) = counts(
        r#"<testsuites><testsuite name="inner" tests="4"><testcase name="a"/></testsuite></testsuites>"#,
    );
    assert_eq!(c, (1, 1, 0));
    assert_eq!(said, ["the suite `inner` counts 4 tests, its cases show 1"]);
    // mocha-junit-reporter: the pending test is in its suite's `tests`, and only the
    // root's `skipped` says what it was.
    let (c, said) = counts(
        r#"<testsuites tests="2" skipped="1"><testsuite name="inner" tests="2"><testcase name="a"/></testsuite></testsuites>"#,
    );
    assert_eq!((c, said.len()), ((1, 0, 1), 0));
    // A suite with no cases still counts what it holds.
    let (c, said) = counts(
        r#"<testsuites><testsuite name="x" tests="5" failures="5"/><testsuite name="y"><testcase name="a"/></testsuite></testsuites>"#,
    );
    assert_eq!(c, (1, 1, 0));
    assert_eq!(
        said,
        ["the suite `x` counts 5 failed or errored tests, its cases show 0"]
    );
    // Failed again on its rerun, and no final outcome written: failed, not passed.
    let (c, said) = counts(
        r#"<testsuite name="s" tests="1" failures="1"><testcase name="a"><rerunFailure message="boom"/></testcase></testsuite>"#,
    );
    assert_eq!((c, said.len()), ((0, 1, 0), 0));
}

/// Jest's and Vitest's own word on the run is held against what they list: files that
/// failed to run and are not listed, and a run that did not succeed with no failing
/// test (Vitest's unhandled errors), are failures, never an empty green.
#[test]
fn a_jest_run_that_did_not_succeed_is_never_green() {
    let failed = |text: &str| {
        let reading = read_one_named("r.json", text).unwrap();
        let names: Vec<String> = reading
            .report
            .cases
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        (reading.counts.failed, names)
    };
    let (n, names) = failed(
        r#"{"success": false, "numRuntimeErrorTestSuites": 1, "numTotalTests": 0, "numFailedTests": 0, "testResults": []}"#,
    );
    assert_eq!(n, 2);
    assert_eq!(names, ["(the report's summary)", "(the run itself)"]);
    let (n, names) = failed(
        r#"{"success": false, "numTotalTests": 1, "numFailedTests": 0, "testResults": [{"name": "a.test.js", "status": "passed", "assertionResults": [{"title": "t", "status": "passed"}]}]}"#,
    );
    assert_eq!((n, names[1].as_str()), (1, "(the run itself)"));
    let (n, _) = failed(
        r#"{"success": true, "numTotalTests": 1, "numFailedTests": 0, "testResults": [{"name": "a.test.js", "status": "passed", "assertionResults": [{"title": "t", "status": "passed"}]}]}"#,
    );
    assert_eq!(n, 0);
}

/// Catch2 marks every `[!mayfail]` test with a `<skipped>`: one that failed is not a
/// failure of the run (Catch2 counts it "failed as expected", and exits 0) and is
/// counted as skipped; one that passed is a pass.
#[test]
fn a_catch2_mayfail_test_that_failed_is_skipped_and_one_that_passed_passed() {
    let reading = read_one(
        r#"<testsuites><testsuite name="t" tests="2" failures="0"><testcase classname="t.global" name="may fail" status="run"><skipped message="TEST_CASE tagged with !mayfail"/><failure message="add(1, 1) == 3" type="REQUIRE">at t.cpp:15</failure></testcase><testcase classname="t.global" name="may pass" status="run"><skipped message="TEST_CASE tagged with !mayfail"/></testcase></testsuite></testsuites>"#,
    )
    .unwrap();
    let c = &reading.counts;
    assert_eq!((c.passed, c.failed, c.skipped), (1, 0, 1));
}

/// A JSON report is read in one pass, its tests handed on as they come: a key given
/// twice (a second list of tests, a second total) is refused rather than one of them
/// chosen; with a format named, the other formats' lists are passed over unread.
#[test]
fn a_json_reports_keys_are_read_once_each() {
    let twice = r#"{"examples": [{"description": "a", "status": "failed"}], "examples": [{"description": "a", "status": "passed"}]}"#;
    match read_one_named("r.json", twice) {
        Err(Problem::Unreadable(reason)) => {
            assert!(reason.contains("`examples` is given twice"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let both = r#"{"examples": [{"description": "a", "status": "failed"}], "results": {"tests": [{"name": "b", "status": "passed"}]}}"#;
    let dir = folder(&[("r.json", both)]);
    let reading = read_as(dir.path(), &[("r.json", Some("ctrf"))]).unwrap();
    let names: Vec<&str> = reading
        .report
        .cases
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["b"]);
    let reading = read_as(dir.path(), &[("r.json", Some("rspec-json"))]).unwrap();
    assert_eq!(reading.counts.failed, 1);
}

/// What a JSON or `go test -json` report says failed outside its lists is a failure:
/// a Jest file whose status is no pass, Mocha's `tests` list holding an error its
/// `failures` do not, RSpec's load error in `messages`, a `FAIL` line between go's
/// events; a go stream with no event is no report, and CTRF's `summary` may not be
/// given twice.
#[test]
fn what_a_report_says_failed_outside_its_lists_is_a_failure() {
    let failed = |name: &str, text: &str| {
        let reading = read_one_named(name, text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        reading.counts.failed
    };
    let jest_file = |status: &str| {
        format!(
            r#"{{"testResults": [{{"name": "a.test.js", "status": "{status}", "message": "Test suite failed to run", "assertionResults": []}}, {{"name": "b.test.js", "status": "passed", "assertionResults": [{{"title": "t", "status": "passed"}}]}}]}}"#
        )
    };
    for status in ["error", "weird", "FAILED", ""] {
        assert_eq!(failed("r.json", &jest_file(status)), 1, "{status}");
    }
    assert_eq!(failed("r.json", &jest_file("passed")), 0);
    let exec_error = r#"{"testResults": [{"name": "a.test.js", "status": "passed", "testExecError": {"message": "boom"}, "assertionResults": []}]}"#;
    assert_eq!(failed("r.json", exec_error), 1);
    let mocha = r#"{"stats": {"tests": 1, "failures": 0}, "tests": [{"title": "a", "fullTitle": "s a", "err": {"message": "boom"}}], "passes": [{"title": "a", "fullTitle": "s a", "err": {}}], "failures": [], "pending": []}"#;
    assert_eq!(failed("r.json", mocha), 1);
    let mocha_ok = mocha.replace(r#""err": {"message": "boom"}"#, r#""err": {}"#);
    assert_eq!(failed("r.json", &mocha_ok), 0);
    let rspec = r#"{"examples": [{"description": "a", "status": "passed"}], "summary": {"example_count": 1, "failure_count": 0, "errors_outside_of_examples_count": 0}, "messages": ["An error occurred while loading ./spec/broken_spec.rb"]}"#;
    assert_eq!(failed("r.json", rspec), 1);
    let go = "# example.com/x\n./x.go:3:2: undefined: foo\nFAIL\texample.com/x [build failed]\n{\"Action\":\"pass\",\"Package\":\"other\",\"Test\":\"TestA\"}\n{\"Action\":\"pass\",\"Package\":\"other\"}\n";
    let dir = folder(&[("go.json", go), ("plain.txt", "--- FAIL: TestA\nFAIL\n")]);
    let reading = read_as(dir.path(), &[("go.json", Some("go-test-json"))]).unwrap();
    assert_eq!((reading.counts.passed, reading.counts.failed), (1, 1));
    let reason = unreadable_reason(read_as(dir.path(), &[("plain.txt", Some("go-test-json"))]));
    assert!(reason.contains("no `go test -json` event"), "{reason}");
    let ctrf = r#"{"results": {"summary": {"tests": 1, "failed": 1}, "summary": {"tests": 0, "failed": 0}, "tests": []}}"#;
    match read_one_named("r.json", ctrf) {
        Err(Problem::Unreadable(reason)) => {
            assert!(
                reason.contains("`results.summary` is given twice"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
}

/// A failure after more passes than are listed is still named: the last places of the
/// list are a failure's.
#[test]
fn a_failure_after_a_hundred_thousand_passes_is_named() {
    let mut tests: Vec<String> = (0..MAX_CASES)
        .map(|i| format!(r#"{{"name": "t{i}", "status": "passed"}}"#))
        .collect();
    tests.push(r#"{"name": "the one", "status": "failed", "message": "boom"}"#.to_owned());
    let text = format!(r#"{{"results": {{"tests": [{}]}}}}"#, tests.join(","));
    let reading = read_one_named("r.json", &text).unwrap();
    assert_eq!(reading.counts.failed, 1);
    assert!(
        reading.report.cases.iter().any(|c| c.name == "the one"),
        "the failure is listed"
    );
    assert_eq!(reading.report.cases.len(), MAX_CASES - FAILURES_ONLY + 1);
    assert_eq!(reading.report.left_out, FAILURES_ONLY as u64);
}

/// One Playwright report of one spec holding `test`, with `stats` as given.
fn playwright(test: &str, stats: &str) -> String {
    format!(
        r#"{{"suites": [{{"title": "a.spec.ts", "specs": [{{"title": "t", "file": "a.spec.ts", "tests": [{test}]}}]}}], "errors": [], "stats": {stats}}}"#
    )
}

const ONE_EXPECTED: &str = r#"{"expected": 1, "unexpected": 0, "flaky": 0, "skipped": 0}"#;
const ONE_FLAKY: &str = r#"{"expected": 0, "unexpected": 0, "flaky": 1, "skipped": 0}"#;
const ONE_SKIPPED: &str = r#"{"expected": 0, "unexpected": 0, "flaky": 0, "skipped": 1}"#;

/// A Playwright test's outcome is worked out from its runs and what they were expected
/// to end as; its `status`, the spec's `ok` and the report's `stats` must all say the
/// same. Whatever says otherwise, or is not known, is a failure: never a pass taken
/// from a word alone.
#[test]
fn a_playwright_test_passes_only_when_its_runs_show_it() {
    let counts = |test: &str, stats: &str| {
        let text = playwright(test, stats);
        let c = read_one_named("r.json", &text)
            .unwrap_or_else(|e| panic!("{text}: {e:?}"))
            .counts;
        (c.passed, c.flaky, c.skipped, c.failed)
    };
    let test = |status: &str, expected: &str, runs: &str| {
        format!(r#"{{"status": "{status}", "expectedStatus": "{expected}", "results": [{runs}]}}"#)
    };
    let run = |status: &str| format!(r#"{{"status": "{status}"}}"#);
    let (passed, failed, skipped) = (run("passed"), run("failed"), run("skipped"));
    // What a real run writes.
    assert_eq!(
        counts(&test("expected", "passed", &passed), ONE_EXPECTED),
        (1, 0, 0, 0)
    );
    let retried = format!("{failed}, {passed}");
    assert_eq!(
        counts(&test("flaky", "passed", &retried), ONE_FLAKY),
        (1, 1, 0, 0)
    );
    assert_eq!(
        counts(&test("skipped", "skipped", &skipped), ONE_SKIPPED),
        (0, 0, 1, 0)
    );
    // `test.fail()`: a failed run is what was expected.
    assert_eq!(
        counts(&test("expected", "failed", &failed), ONE_EXPECTED),
        (1, 0, 0, 0)
    );
    // Words that its runs do not bear out.
    for (status, stats) in [
        ("expected", ONE_EXPECTED),
        ("flaky", ONE_FLAKY),
        ("skipped", ONE_SKIPPED),
    ] {
        let (p, _, s, f) = counts(&test(status, "passed", &failed), stats);
        assert!(f >= 1 && p == 0 && s == 0, "{status} over a failed run");
    }
    let (p, _, _, f) = counts(
        &test("flaky", "passed", &format!("{failed}, {failed}")),
        ONE_FLAKY,
    );
    assert!(f >= 1 && p == 0, "flaky with no passing run");
    let (p, _, _, f) = counts(
        &test("expected", "passed", &format!("{passed}, {failed}")),
        ONE_EXPECTED,
    );
    assert!(f >= 1 && p == 0, "a failure after the pass");
    let (_, _, s, f) = counts(
        &test("skipped", "passed", &format!("{failed}, {skipped}")),
        ONE_SKIPPED,
    );
    assert!(f >= 1 && s == 0, "skipped after a failure");
    let (p, _, _, f) = counts(&test("expected", "passed", &run("timedOut")), ONE_EXPECTED);
    assert!(f >= 1 && p == 0, "timed out");
    let (p, _, _, f) = counts(
        &test("expected", "passed", &run("interrupted")),
        ONE_EXPECTED,
    );
    assert!(f >= 1 && p == 0, "interrupted");
    // A passed run that carries an error is no pass.
    let erring = r#"{"status": "passed", "errors": [{"message": "soft assertion"}]}"#;
    let (p, _, _, f) = counts(&test("expected", "passed", erring), ONE_EXPECTED);
    assert!(f >= 1 && p == 0, "a passed run with an error");
    // No run at all.
    let (p, _, _, f) = counts(&test("expected", "passed", ""), ONE_EXPECTED);
    assert!(f >= 1 && p == 0, "no run");
    // Statuses not known, in any case or none.
    for status in ["Failed", "FAILED", "TimedOut", "weird", "", "passed "] {
        let (p, _, _, f) = counts(&test("expected", "passed", &run(status)), ONE_EXPECTED);
        assert!(f >= 1 && p == 0, "run status {status:?}");
    }
    let (p, _, _, f) = counts(
        r#"{"status": "expected", "expectedStatus": "passed", "results": [{}]}"#,
        ONE_EXPECTED,
    );
    assert!(f >= 1 && p == 0, "a run with no status");
    for expected in ["wat", "PASSED", "Failed"] {
        let (p, _, _, f) = counts(&test("expected", expected, &failed), ONE_EXPECTED);
        assert!(f >= 1 && p == 0, "expected status {expected:?}");
    }
    // Without `expectedStatus` a run must pass.
    let (p, _, _, f) = counts(
        r#"{"status": "expected", "results": [{"status": "failed"}]}"#,
        ONE_EXPECTED,
    );
    assert!(f >= 1 && p == 0, "no expected status");
}

/// Playwright's `stats` are counted from the tests it lists: any difference, either
/// way and in any category, is a failure; a total given twice, or keys of Mocha's
/// beside Playwright's, are refused; a spec Playwright marks failed is a failure.
#[test]
fn playwrights_stats_and_specs_are_held_to_its_tests() {
    let pass =
        r#"{"status": "expected", "expectedStatus": "passed", "results": [{"status": "passed"}]}"#;
    let failed = |text: &str| {
        read_one_named("r.json", text)
            .unwrap_or_else(|e| panic!("{text}: {e:?}"))
            .counts
            .failed
    };
    assert_eq!(failed(&playwright(pass, ONE_EXPECTED)), 0);
    for stats in [
        r#"{"expected": 0, "unexpected": 0, "flaky": 1, "skipped": 0}"#,
        r#"{"expected": 0, "unexpected": 0, "flaky": 0, "skipped": 1}"#,
        r#"{"expected": 0, "unexpected": 0, "flaky": 0, "skipped": 0}"#,
        r#"{"expected": 2, "unexpected": 0, "flaky": 0, "skipped": 0}"#,
        r#"{"expected": 1, "unexpected": 1, "flaky": 0, "skipped": 0}"#,
        r#"{"expected": 0, "unexpected": 1}"#,
    ] {
        assert_eq!(failed(&playwright(pass, stats)), 1, "{stats}");
    }
    let refused = |text: &str, why: &str| match read_one_named("r.json", text) {
        Err(Problem::Unreadable(reason)) => assert!(reason.contains(why), "{reason}"),
        other => panic!("{text}: {other:?}"),
    };
    refused(
        &playwright(
            pass,
            r#"{"expected": 1, "unexpected": 1, "unexpected": 0, "flaky": 0, "skipped": 0}"#,
        ),
        "`unexpected` is given twice",
    );
    refused(
        &playwright(
            pass,
            r#"{"expected": -1, "unexpected": 0, "flaky": 0, "skipped": 0}"#,
        ),
        "Playwright's `stats`",
    );
    // Mocha's keys beside Playwright's: in its stats, or its lists.
    let both = r#"{"expected": 1, "unexpected": 0, "flaky": 0, "skipped": 0, "passes": 1, "failures": 1, "tests": 2}"#;
    refused(&playwright(pass, both), "more than one report format");
    let ghost = playwright(pass, ONE_EXPECTED).replace(
        r#""errors": []"#,
        r#""errors": [], "passes": [{"title": "ghost", "fullTitle": "ghost"}]"#,
    );
    refused(&ghost, "more than one report format");
    let dir = folder(&[("r.json", &ghost)]);
    let named = read_as(dir.path(), &[("r.json", Some("playwright-json"))]).unwrap();
    assert_eq!(
        (named.counts.passed, named.counts.failed),
        (1, 0),
        "Mocha's list left unread"
    );
    // Playwright's stats without its suites: no tests to hold them to.
    refused(
        &format!(r#"{{"errors": [], "stats": {ONE_EXPECTED}}}"#),
        "has no `suites`",
    );
    // A spec marked failed with no failed test.
    let text =
        playwright(pass, ONE_EXPECTED).replace(r#""tests": ["#, r#""ok": false, "tests": ["#);
    assert_eq!(failed(&text), 1);
    // A spec with no test that Playwright marks failed.
    let text = playwright(pass, ONE_EXPECTED).replace(
        r#"}]}], "errors""#,
        r#"}, {"title": "broken", "ok": false}]}], "errors""#,
    );
    assert_eq!(failed(&text), 1);
    // Duplicated keys of a test or a run are refused as serde refuses any.
    refused(
        &playwright(
            r#"{"status": "expected", "expectedStatus": "failed", "expectedStatus": "passed", "results": [{"status": "passed"}]}"#,
            ONE_EXPECTED,
        ),
        "duplicate field",
    );
}

/// A control character at either end of a name is no part of it: the name recorded is
/// the one a quarantine entry (trimmed where written) names.
#[test]
fn a_names_control_characters_at_its_ends_are_dropped() {
    assert_eq!(one_line("bel\u{7}", 100), "bel");
    assert_eq!(one_line("\u{1b}x\ty\n", 100), "x y");
    assert_eq!(one_line("\u{2028}a\u{2029}b", 100), "a b");
}
