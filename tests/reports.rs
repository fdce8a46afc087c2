//! The runners' own reports in fixtures/reports/, captured from real runs: each report
//! gives exactly the tests written beside it (`<report>.expected.json`: one line per
//! test, `outcome suite › name`, and for a failure ` @ file:line: message`), and its
//! counts agree with what the runner's log said in the same run.

mod common;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cargo_verify_matrix::manifest::{Gate, ReportPattern};
use cargo_verify_matrix::results::TestResult;
use cargo_verify_matrix::run::effect::assess_file;
use cargo_verify_matrix::run::reports::{self, Context, Problem, Reading};
use common::repo_root;
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    repo_root().join("fixtures/reports")
}

fn read(dir: &Path, pattern: &str) -> Result<Reading, Problem> {
    let context = Context {
        cwd: dir.to_path_buf(),
        root: dir.to_path_buf(),
        started: reports::Started::at(SystemTime::UNIX_EPOCH),
        redactor: Default::default(),
    };
    reports::read(&[ReportPattern::any(pattern)], &context)
}

/// One test as the expected files write it.
fn line(test: &TestResult) -> String {
    let mut out = format!("{} {} › {}", test.outcome.as_str(), test.suite, test.name);
    if let Some(file) = &test.file {
        out.push_str(&format!(" @ {file}"));
        if let Some(line) = test.line {
            out.push_str(&format!(":{line}"));
        }
    }
    if let Some(message) = &test.message {
        let first = message.lines().next().unwrap_or_default();
        out.push_str(&format!(": {first}"));
    }
    out
}

fn actual(reading: &Reading) -> Value {
    let c = &reading.counts;
    json!({
        "format": reading.report.format.as_str(),
        "counts": { "passed": c.passed, "failed": c.failed, "skipped": c.skipped, "flaky": c.flaky },
        "tests": reading.report.cases.iter().map(line).collect::<Vec<_>>(),
    })
}

/// Every report with an `.expected.json` beside it, as (runner folder, report name).
fn cases() -> Vec<(PathBuf, String)> {
    let mut all = Vec::new();
    for runner in std::fs::read_dir(fixtures()).unwrap() {
        let runner = runner.unwrap().path();
        if !runner.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&runner).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(report) = name.strip_suffix(".expected.json") {
                all.push((runner.clone(), report.to_owned()));
            }
        }
    }
    all.sort();
    all
}

#[test]
fn every_captured_report_gives_its_expected_tests() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut checked = 0;
    let mut failures = Vec::new();
    for (dir, report) in cases() {
        let reading =
            read(&dir, &report).unwrap_or_else(|e| panic!("{}/{report}: {e:?}", dir.display()));
        let actual = actual(&reading);
        let expected_path = dir.join(format!("{report}.expected.json"));
        if update {
            std::fs::write(
                &expected_path,
                serde_json::to_string_pretty(&actual).unwrap() + "\n",
            )
            .unwrap();
        }
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&expected_path).unwrap()).unwrap();
        if actual != expected {
            failures.push(format!(
                "{}/{report}:\nexpected {expected:#}\nactual {actual:#}",
                dir.display()
            ));
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} reports checked");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runners whose closing lines our log reading does not count yet (GoogleTest's
/// `[  PASSED  ] 5 tests.`, Catch2's `test cases: 5 | 3 passed | 1 failed`, gotestsum's
/// `DONE 3 runs, 10 tests, 1 skipped, 4 failures`, Playwright's `1 failed` / `1 flaky` /
/// `1 passed (5.4s)`): their logs are kept beside the reports, and not compared.
const UNCOUNTED_LOGS: &[&str] = &["catch2", "gotestsum", "gtest", "playwright"];

#[test]
fn every_report_agrees_with_its_runs_log() {
    let mut checked = 0;
    for (dir, report) in cases() {
        // The log of the same run: `log.txt`, or `log-<variant>.txt` for `junit-<variant>`.
        let log = match report.split_once('-') {
            Some((_, variant)) => {
                dir.join(format!("log-{}.txt", variant.split('.').next().unwrap()))
            }
            None => dir.join("log.txt"),
        };
        if !log.exists() {
            continue;
        }
        let reading = read(&dir, &report).unwrap();
        let from_report = reading.counts;
        let counted = assess_file(Gate::Test, &log).test_counts;
        let runner = dir.file_name().unwrap().to_string_lossy();
        if UNCOUNTED_LOGS.contains(&runner.as_ref()) {
            assert!(
                counted.is_none(),
                "{} is counted now: take `{runner}` out of UNCOUNTED_LOGS",
                log.display()
            );
            continue;
        }
        let from_log = counted.unwrap_or_else(|| panic!("{} gives no counts", log.display()));
        assert!(
            !reports::counts_disagree(&from_log, &from_report, reading.outside_failures),
            "{}/{report}: the report says {from_report:?}, the log {from_log:?}",
            dir.display()
        );
        checked += 1;
    }
    assert!(checked >= 7, "only {checked} logs compared");
}

/// The published .NET reports (`trx/`, `nunit/`, `xunit/`) counted a second way, by
/// Python's `xml.etree` with the same rules written apart: only a pass passes, a test
/// that did not run is skipped, any other word fails; a data-driven parent counts
/// only through its rows unless it failed and none of them did; totals that claim
/// more tests or more failures than are listed are one more failure.
const DOTNET_COUNTS: &str = r#"
import sys, xml.etree.ElementTree as ET
def local(tag): return tag.rsplit('}', 1)[-1]
def num(v):
    try: return int(v)
    except (TypeError, ValueError): return None
def trx(root):
    out, written, written_failed = [], 0, 0
    def walk(res):
        nonlocal written, written_failed
        written += 1
        word = res.get('outcome')
        if word in ('Failed', 'Error', 'Timeout', 'Aborted'): written_failed += 1
        rows = [r for inner in res if local(inner.tag) == 'InnerResults' for r in inner]
        if rows:
            got = [x for r in rows for x in walk(r)]
            if word not in ('Passed', 'PassedButRunAborted', 'NotExecuted', 'Inconclusive') and 'failed' not in got:
                got.append('failed')
            return got
        if word in ('Passed', 'PassedButRunAborted'): return ['passed']
        if word in ('NotExecuted', 'Inconclusive'): return ['skipped']
        return ['failed']
    for part in root:
        if local(part.tag) == 'Results':
            for res in part: out += walk(res)
    for part in root:
        if local(part.tag) == 'ResultSummary':
            for c in part:
                if local(c.tag) == 'Counters':
                    failed = sum(num(c.get(k)) or 0 for k in ('failed', 'error', 'timeout', 'aborted'))
                    if (num(c.get('total')) or 0) > written or failed > written_failed: out.append('failed')
    return out
def nunit(root):
    out = []
    for case in root.iter('test-case'):
        r = case.get('result')
        if r is None:
            if (case.get('executed') or '').lower() == 'false': out.append('skipped')
            elif (case.get('success') or '').lower() == 'true': out.append('passed')
            else: out.append('failed')
        elif r in ('Passed', 'Success'): out.append('passed')
        elif r in ('Skipped', 'Ignored', 'Inconclusive'): out.append('skipped')
        else: out.append('failed')
    if root.tag == 'test-results':
        failed = (num(root.get('failures')) or 0) + (num(root.get('errors')) or 0)
    else:
        failed = num(root.get('failed')) or 0
    if (num(root.get('total')) or 0) > len(out) or failed > out.count('failed'): out.append('failed')
    return out
def xunit(root):
    out = []
    for a in ([root] if root.tag == 'assembly' else root.iter('assembly')):
        tests = [{'Pass': 'passed', 'Fail': 'failed', 'Skip': 'skipped', 'NotRun': 'skipped'}.get(t.get('result'), 'failed') for t in a.iter('test')]
        errors = len(list(a.iter('error')))
        out += tests + ['failed'] * errors
        if (num(a.get('total')) or 0) > len(tests) or (num(a.get('failed')) or 0) > tests.count('failed') or (num(a.get('errors')) or 0) > errors:
            out.append('failed')
    return out
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    read = {'TestRun': trx, 'test-run': nunit, 'test-results': nunit, 'assemblies': xunit, 'assembly': xunit}[local(root.tag)]
    got = read(root)
    print(path.rsplit('/', 1)[-1], got.count('passed'), got.count('failed'), got.count('skipped'))
"#;

#[test]
fn the_dotnet_reports_count_as_python_counts_them() {
    let mut files = Vec::new();
    for folder in ["trx", "nunit", "xunit"] {
        for (dir, report) in cases() {
            if dir.ends_with(folder) {
                files.push(dir.join(report));
            }
        }
    }
    assert!(files.len() >= 9, "{files:?}");
    let python = std::process::Command::new("python3")
        .arg("-c")
        .arg(DOTNET_COUNTS)
        .args(&files)
        .output()
        .unwrap();
    assert!(python.status.success(), "{python:?}");
    let python = String::from_utf8(python.stdout).unwrap();
    let ours: String = files
        .iter()
        .map(|file| {
            let reading = read(
                file.parent().unwrap(),
                file.file_name().unwrap().to_str().unwrap(),
            )
            .unwrap();
            let c = &reading.counts;
            format!(
                "{} {} {} {}\n",
                file.file_name().unwrap().to_string_lossy(),
                c.passed,
                c.failed,
                c.skipped
            )
        })
        .collect();
    assert_eq!(ours, python);
}

/// Every test name in a report, read by Python's own `xml.etree` and `json` (the names
/// as the file holds them, one per line; the format's name first): JUnit's
/// `testcase/@name`, CTRF's `results.tests[].name`, Jest's and Vitest's
/// `assertionResults[].title`, Mocha's `tests[].fullTitle` with its `pending`, RSpec's
/// `examples[].full_description`.
const PYTHON_NAMES: &str = r#"
import json, sys, xml.etree.ElementTree as ET
path = sys.argv[1]
text = open(path, encoding='utf-8-sig').read()
if text.lstrip().startswith('<'):
    try:
        roots = [ET.fromstring(text.encode())]
    except ET.ParseError:
        # libtest writes one document per test binary, one per line.
        roots = [ET.fromstring(l.encode()) for l in text.splitlines() if l.strip()]
    names = [e.get('name', '') for r in roots for e in r.iter() if e.tag.rsplit('}', 1)[-1] == 'testcase']
    print('junit')
else:
    doc = json.loads(text)
    if 'results' in doc:
        names = [t['name'] for t in doc['results']['tests']]
        print('ctrf')
    elif 'testResults' in doc:
        names = [a['title'] for f in doc['testResults'] for a in f['assertionResults']]
        print('jest')
    elif 'stats' in doc:
        names = [t['fullTitle'] for t in doc['tests'] + doc['pending']]
        print('mocha')
    else:
        names = [e['full_description'] for e in doc['examples']]
        print('rspec')
for name in sorted(set(names)):
    print(json.dumps(name))
"#;

/// The tests each captured JUnit, CTRF, Jest, Vitest, Mocha and RSpec report names are
/// the ones Python's own parsers find in it: no test lost, none made up. (A name that
/// begins with its suite is kept without it; a name with a line break is one line; the
/// reader's own cases for what is wrong outside the tests are not tests.)
#[test]
fn every_xml_and_json_report_names_the_tests_python_finds_in_it() {
    let mut checked = 0;
    for (dir, report) in cases() {
        let path = dir.join(&report);
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        if !matches!(ext, "xml" | "json") || report.starts_with("go-test") {
            continue;
        }
        let reading = read(&dir, &report).unwrap();
        if !matches!(
            reading.report.format.as_str(),
            "junit" | "ctrf" | "jest-json" | "vitest-json" | "mocha-json" | "rspec-json"
        ) {
            continue;
        }
        let python = std::process::Command::new("python3")
            .arg("-c")
            .arg(PYTHON_NAMES)
            .arg(&path)
            .output()
            .unwrap();
        assert!(python.status.success(), "{}: {python:?}", path.display());
        let python = String::from_utf8(python.stdout).unwrap();
        let mut lines = python.lines();
        let _format = lines.next();
        let theirs: std::collections::BTreeSet<String> = lines
            .map(|l| serde_json::from_str::<String>(l).unwrap())
            .map(|name| name.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        let ours: std::collections::BTreeSet<String> = reading
            .report
            .cases
            .iter()
            .filter(|c| !(c.name.starts_with("(") && c.name.ends_with(")")))
            .map(|c| c.name.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        // Ours may have lost the suite a name began with: each of ours is one of theirs,
        // whole or at its end, and there are as many.
        let unmatched: Vec<&String> = ours
            .iter()
            .filter(|name| {
                !theirs
                    .iter()
                    .any(|t| t == *name || t.ends_with(name.as_str()))
            })
            .collect();
        assert!(
            unmatched.is_empty() && ours.len() == theirs.len(),
            "{}: ours {ours:#?}\ntheirs {theirs:#?}\nunmatched {unmatched:?}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} reports compared");
}

// Through `run`: a check with `reports:` and `min-tests:`, on real commands.

use common::{Project, check_result, manifest_with};

fn pytest_project(checks: &str) -> Project {
    let project = Project::new(&manifest_with(checks));
    let source = fixtures().join("pytest/tests/test_math.py");
    project.write(
        "tests/test_math.py",
        &std::fs::read_to_string(source).unwrap(),
    );
    project
}

#[test]
fn pytest_with_a_junit_report_records_each_test_and_where_it_failed() {
    let project = pytest_project(concat!(
        "  - id: unit\n",
        "    test: python3 -m pytest -p no:cacheprovider --junitxml=out/junit.xml tests\n",
        "    reports: out/junit.xml\n",
    ));
    project.cmd().assert().code(1);
    let unit = check_result(&project, "local", "unit");
    assert_eq!(unit["status"], "FAIL");
    assert_eq!(unit["test_counts"]["runner"], "junit");
    assert_eq!(unit["test_counts"]["failed"], 3);
    assert_eq!(unit["tests_executed"], 7);
    assert_eq!(unit["gate_effective"], true);
    let tests = &unit["tests"];
    assert_eq!(tests["files"], json!(["out/junit.xml"]));
    assert_eq!(tests["log_counts"]["runner"], "pytest");
    let failed: Vec<String> = tests["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"] == "failed")
        .map(|c| {
            format!(
                "{} {}:{}",
                c["name"].as_str().unwrap(),
                c["file"].as_str().unwrap(),
                c["line"]
            )
        })
        .collect();
    assert_eq!(
        failed,
        vec![
            "test_subtract_is_wrong tests/test_math.py:18",
            "test_param[3] tests/test_math.py:37"
        ]
    );
    assert!(
        unit["summary"]
            .as_str()
            .unwrap()
            .contains("3 of 7 tests failed"),
        "{}",
        unit["summary"]
    );
}

/// pytest with an expected failure, an unexpected pass and deselected tests: its log
/// (`1 passed, 1 skipped, 2 deselected, 1 xfailed, 1 xpassed`) and its JUnit report
/// agree once each outcome is counted as pytest's report counts it, and a `min-tests`
/// equal to the tests that ran is met.
#[test]
fn pytest_xfail_xpass_and_deselected_tests_are_counted_as_its_report_counts_them() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: unit\n",
        "    test: python3 -m pytest -p no:cacheprovider -k 'not stress' --junitxml=out/junit.xml tests\n",
        "    reports: out/junit.xml\n",
        "    min-tests: 2\n",
    )));
    let source = fixtures().join("pytest/tests/test_outcomes.py");
    project.write(
        "tests/test_outcomes.py",
        &std::fs::read_to_string(source).unwrap(),
    );
    project.cmd().assert().success();
    let unit = check_result(&project, "local", "unit");
    assert_eq!(unit["status"], "PASS", "{unit}");
    assert_eq!(unit["tests_executed"], 2);
    assert_eq!(
        unit["test_counts"],
        json!({"passed": 2, "failed": 0, "skipped": 2, "runner": "junit"})
    );
    assert_eq!(unit["tests"]["log_counts"]["runner"], "pytest");
}

/// README's own `go test -json > report.json`: the log is empty, and a cached package
/// (its tests replayed, then `(cached)`) is a no-op: the gate ran no test.
#[test]
fn a_cached_go_test_json_report_is_no_evidence() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: unit\n",
        "    test: cat cached.json > report.json\n",
        "    reports: report.json\n",
    )));
    project.write(
        "cached.json",
        concat!(
            "{\"Action\":\"run\",\"Package\":\"example.com/calc\",\"Test\":\"TestAdd\"}\n",
            "{\"Action\":\"pass\",\"Package\":\"example.com/calc\",\"Test\":\"TestAdd\",\"Elapsed\":0}\n",
            "{\"Action\":\"output\",\"Package\":\"example.com/calc\",\"Output\":\"ok  \\texample.com/calc\\t(cached)\\n\"}\n",
            "{\"Action\":\"pass\",\"Package\":\"example.com/calc\",\"Elapsed\":0}\n",
        ),
    );
    project.cmd().assert().code(1);
    let unit = check_result(&project, "local", "unit");
    assert_eq!(unit["status"], "FAIL", "{unit}");
    assert_eq!(
        unit["ineffective_reason"],
        "no-op: the report says `ok   example.com/calc (cached)`: its tests were not run by this check"
    );
}

#[test]
fn a_report_that_disagrees_with_the_log_is_never_green() {
    // The log claims 12 passing tests; the report lists 5 (one of them failed).
    let project = Project::new(&manifest_with(concat!(
        "  - id: unit\n",
        "    test: cp fixture.xml junit.xml && echo '12 passed in 0.10s'\n",
        "    reports: junit.xml\n",
    )));
    project.write(
        "fixture.xml",
        "<testsuite name=\"s\"><testcase name=\"a\"/><testcase name=\"b\"/></testsuite>",
    );
    project.cmd().assert().code(1);
    let unit = check_result(&project, "local", "unit");
    assert_eq!(unit["status"], "FAIL");
    assert_eq!(unit["gate_effective"], false);
    assert_eq!(
        unit["ineffective_reason"],
        "counts disagree: the report says 2 tests (2 passed, 0 failed), the log (pytest) says 12 tests (12 passed, 0 failed)"
    );
    assert_eq!(unit["tests"]["log_counts"]["passed"], 12);
    assert_eq!(unit["test_counts"]["passed"], 2);
}

#[test]
fn an_exit_0_with_failed_tests_in_the_report_fails() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: unit\n",
        "    test: cp fixture.xml junit.xml\n",
        "    reports: junit.xml\n",
    )));
    project.write(
        "fixture.xml",
        "<testsuite name=\"s\"><testcase name=\"a\"/><testcase name=\"b\"><failure message=\"no\"/></testcase></testsuite>",
    );
    project.cmd().assert().code(1);
    let unit = check_result(&project, "local", "unit");
    assert_eq!(unit["status"], "FAIL");
    assert_eq!(unit["exit_code"], 0);
    assert_eq!(
        unit["summary"],
        "exit 0, but the report lists 1 failed test"
    );
}

#[test]
fn a_missing_or_left_over_report_makes_the_gate_ineffective() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: missing\n",
        "    test: echo '3 passed in 0.1s'\n",
        "    reports: out/*.xml\n",
        "  - id: stale\n",
        "    test: echo '2 passed in 0.1s'\n",
        "    reports: old.xml\n",
    )));
    let old = project.write(
        "old.xml",
        "<testsuite name=\"s\"><testcase name=\"a\"/><testcase name=\"b\"/></testsuite>",
    );
    // Written by an earlier run, a minute before this one.
    let earlier = SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(earlier)
        .unwrap();
    project.cmd().assert().code(1);
    let missing = check_result(&project, "local", "missing");
    assert_eq!(missing["status"], "FAIL");
    assert_eq!(
        missing["summary"],
        "ineffective: no report: `out/*.xml` matched no file (exit 0)"
    );
    let stale = check_result(&project, "local", "stale");
    assert_eq!(stale["status"], "FAIL");
    assert!(
        stale["ineffective_reason"]
            .as_str()
            .unwrap()
            .contains("report `old.xml` predates the check (left over from an earlier run)"),
        "{}",
        stale["ineffective_reason"]
    );
}

/// `run --env a --env b`: a's command writes the report; b's runs no tests and writes
/// nothing. b is not PASS with a's tests, however quickly it follows a (within the
/// same second: the report is as it was before b started; on a loaded machine b may
/// start late enough for the report to predate it, which says the same).
#[test]
fn a_report_an_earlier_environment_wrote_is_not_the_next_ones() {
    let project = Project::new(concat!(
        "version: 1\n",
        "environments: [{ name: a, env: { WRITE: \"1\" } }, { name: b }]\n",
        "checks:\n",
        "  - id: unit\n",
        "    test: \"if [ -n \\\"$WRITE\\\" ]; then printf '<testsuite name=\\\"s\\\"><testcase name=\\\"x\\\"/><testcase name=\\\"y\\\"/></testsuite>' > junit.xml; echo '2 passed in 0.1s'; fi\"\n",
        "    reports: junit.xml\n",
    ));
    project
        .cmd()
        .args(["-q", "run", "--env", "a", "--env", "b"])
        .assert()
        .code(1);
    assert_eq!(check_result(&project, "a", "unit")["status"], "PASS");
    let b = check_result(&project, "b", "unit");
    assert_eq!(b["status"], "FAIL", "{b}");
    let reason = b["ineffective_reason"].as_str().unwrap();
    assert!(
        reason.contains("report `junit.xml` was not written by the check")
            || reason.contains("report `junit.xml` predates the check"),
        "{b}"
    );
}

#[test]
fn an_unreadable_report_is_an_error_naming_file_and_line() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: unit\n",
        "    test: printf '<testsuite name=\"s\">\\n<testcase name=\"a\">\\n</testsuite>' > junit.xml\n",
        "    reports: junit.xml\n",
    )));
    project.cmd().assert().code(1);
    let unit = check_result(&project, "local", "unit");
    assert_eq!(unit["status"], "ERROR");
    let summary = unit["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("report unreadable: `junit.xml`"),
        "{summary}"
    );
    let reason = unit["ineffective_reason"].as_str().unwrap();
    assert!(reason.contains("line 3"), "{reason}");
}

#[test]
fn min_tests_is_a_floor_on_the_tests_that_ran() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: few\n",
        "    test: echo '3 passed in 0.1s'\n",
        "    min-tests: 120\n",
        "  - id: enough\n",
        "    test: echo '130 passed in 0.1s'\n",
        "    min-tests: 120\n",
        "  - id: counted_by_run\n",
        "    run: echo '3 passed in 0.1s'\n",
        "    gate: test\n",
        "    min-tests: 4\n",
    )));
    project.cmd().assert().code(1);
    let few = check_result(&project, "local", "few");
    assert_eq!(few["status"], "FAIL");
    assert_eq!(
        few["summary"],
        "ineffective: ran 3 tests, fewer than min-tests 120 (exit 0)"
    );
    assert_eq!(check_result(&project, "local", "enough")["status"], "PASS");
    // `min-tests` makes a `run` check's gate one that must be effective.
    let by_run = check_result(&project, "local", "counted_by_run");
    assert_eq!(by_run["must_be_effective"], true);
    assert_eq!(by_run["status"], "FAIL");
}

#[test]
fn report_keys_are_checked_where_they_are_written() {
    let project = Project::empty();
    project.write(
        "verify-matrix.yml",
        &manifest_with(concat!(
            "  - id: unit\n",
            "    test: cargo test\n",
            "    reports: [ok.xml, ../up.xml]\n",
            "    min-tests: 0\n",
            "  - id: there\n",
            "    file: README.md\n",
            "    reports: x.xml\n",
        )),
    );
    let out = project.cmd().arg("plan").assert().code(4);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    for expected in [
        "checks[0].reports[1]",
        "report pattern `../up.xml`: `..` leaves the check's folder",
        "checks[0].min-tests",
        "`min-tests: 0` asks for nothing",
        "`reports` applies only to `run` and `test` checks",
    ] {
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
    }
}

/// A pytest project verified in two environments (one where a test fails), merged and
/// rendered: the failing test's name, message and place reach every output, and the
/// place is linked to the verified commit.
#[test]
fn two_environments_merge_and_render_the_failing_tests() {
    let project = Project::new(concat!(
        "version: 1\n",
        "environments: [{name: py-a, env: {WANT: '3'}}, {name: py-b, env: {WANT: '4'}}]\n",
        "checks:\n",
        "  - id: unit\n",
        "    test: python3 -m pytest -p no:cacheprovider --junitxml=out/junit.xml tests\n",
        "    reports: out/junit.xml\n",
        "    min-tests: 2\n",
    ));
    project.write(
        "tests/test_sum.py",
        concat!(
            "import os\n",
            "\n",
            "\n",
            "def test_adds():\n",
            "    assert 1 + 1 == 2\n",
            "\n",
            "\n",
            "def test_env_sum():\n",
            "    assert 1 + 2 == int(os.environ['WANT']), 'sum differs in this environment'\n",
        ),
    );
    let sha = "0123456789abcdef0123456789abcdef01234567";
    for env in ["py-a", "py-b"] {
        project
            .std_cmd()
            .env("GITHUB_REPOSITORY", "o/r")
            .env("GITHUB_SHA", sha)
            .args(["run", "--env", env, "--out", &format!("results/{env}")])
            .output()
            .unwrap();
    }
    project.merge_into("results", "report.json");
    let report = project.json("report.json");
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let markdown = project.stdout_of(&["render", "--format", "markdown", "report.json"]);
    let link =
        format!("[tests/test_sum.py:9](https://github.com/o/r/blob/{sha}/tests/test_sum.py#L9)");
    assert!(markdown.contains("Failing tests:"), "{markdown}");
    assert!(
        markdown.contains(&format!(
            "- tests.test_sum › test_env_sum at {link}: AssertionError: sum differs in this environment"
        )),
        "{markdown}"
    );
    // Only py-b failed.
    assert_eq!(markdown.matches("Failing tests:").count(), 1, "{markdown}");
    let junit = project.stdout_of(&["render", "--format", "junit", "report.json"]);
    project.write("junit.xml", &junit);
    // As a JUnit consumer (junitparser, used by CI tooling) reads it: the environments'
    // suites, then each pair's tests.
    let read = std::process::Command::new("python3")
        .arg("-c")
        .arg(concat!(
            "import sys\n",
            "from junitparser import JUnitXml\n",
            "for suite in JUnitXml.fromfile(sys.argv[1]):\n",
            "    print(suite.name, suite.tests, suite.failures, suite.skipped)\n",
            "    for case in suite:\n",
            "        print(' ', case.classname, case.name, [(type(r).__name__, r.message) for r in case.result])\n",
        ))
        .arg(project.path().join("junit.xml"))
        .output()
        .unwrap();
    assert!(read.status.success(), "{read:?}");
    let read = String::from_utf8(read.stdout).unwrap();
    for expected in [
        "py-a.unit 2 0 0\n  py-a.unit.tests.test_sum test_adds []\n",
        "py-b.unit 2 1 0\n  py-b.unit.tests.test_sum test_adds []\n",
        "  py-b.unit.tests.test_sum test_env_sum [('Failure', \"AssertionError: sum differs in this environment\\nassert (1 + 2) == 4\\n +  where 4 = int('4')\")]",
    ] {
        assert!(read.contains(expected), "{expected}\n---\n{read}");
    }
    let html = project.stdout_of(&["render", "--format", "html", "report.json"]);
    assert!(html.contains("<h2>Tests</h2>"), "{html}");
    assert!(
        html.contains(&format!(
            "<a href=\"https://github.com/o/r/blob/{sha}/tests/test_sum.py#L9\">tests/test_sum.py:9</a>"
        )),
        "{html}"
    );
}

#[test]
fn the_tests_command_reads_reports_as_a_check_does() {
    let dir = fixtures().join("nextest");
    let out = common::std_bin()
        .args(["tests", "--cwd"])
        .arg(&dir)
        .arg("junit.xml")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a failed test: exit 1");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        concat!(
            "junit (junit.xml): 3 passed (1 flaky), 1 failed, 0 skipped\n",
            // The panic's place is the test's place: its values are what is shown.
            "  ✗ sample › tests::subtract_is_wrong at src/lib.rs:21: assertion `left == right` failed: adding a negative number · left: 1 · right: 3\n",
            "  ~ sample › tests::passes_second_time (flaky: failed, then passed)\n",
        )
    );
    let out = common::std_bin()
        .args(["tests", "--format", "json", "--cwd"])
        .arg(fixtures().join("vitest"))
        .arg("*.xml")
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["test_counts"]["failed"], 1);
    assert_eq!(json["tests"]["cases"].as_array().unwrap().len(), 5);
    let out = common::std_bin()
        .args(["tests", "--cwd"])
        .arg(&dir)
        .arg("nothing-*.xml")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`nothing-*.xml` matched no file"),
        "{out:?}"
    );
    let out = common::std_bin()
        .args(["tests", "../up.xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_report_is_evidence_where_the_log_has_no_summary_but_not_against_a_no_op() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: quiet\n",
        "    test: cp fixture.xml junit.xml && echo 'all fine'\n",
        "    reports: junit.xml\n",
        "  - id: cached\n",
        "    test: cp fixture.xml junit.xml && echo 'ok  example.com/m/p  (cached)'\n",
        "    reports: junit.xml\n",
    )));
    project.write(
        "fixture.xml",
        "<testsuite name=\"s\"><testcase name=\"a\"/><testcase name=\"b\"/></testsuite>",
    );
    project.cmd().assert().code(1);
    let quiet = check_result(&project, "local", "quiet");
    assert_eq!(
        (quiet["status"].as_str(), quiet["gate_effective"].as_bool()),
        (Some("PASS"), Some(true)),
        "{quiet}"
    );
    let cached = check_result(&project, "local", "cached");
    assert_eq!(cached["status"], "FAIL");
    assert!(
        cached["ineffective_reason"]
            .as_str()
            .unwrap()
            .starts_with("no-op: "),
        "{cached}"
    );
}

/// `tests` quotes what the reports say with the secrets of the environment it runs in
/// masked, in the table and in JSON, and prints no terminal controls; a message cut at
/// its bound keeps no part of a secret that straddled the cut.
#[test]
fn the_tests_command_masks_secrets_and_prints_no_controls() {
    const SECRET: &str = "hunter2-correct-horse-battery";
    let project = Project::empty();
    let long = format!("{}{SECRET} tail", "x".repeat(485));
    project.write(
        "junit.xml",
        &format!(
            "<testsuite name=\"s\"><testcase classname=\"c\" name=\"leak {csi}2J{rlo}x\"><failure message=\"token was {SECRET}\"/></testcase><testcase classname=\"c\" name=\"long\"><failure message=\"{long}\"/></testcase></testsuite>",
            csi = '\u{9b}',
            rlo = '\u{202e}',
        ),
    );
    for format in ["table", "json"] {
        let out = project
            .std_cmd()
            .args(["tests", "--format", format, "junit.xml"])
            .env("DEPLOY_TOKEN", SECRET)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("token was ***"), "{format}: {text}");
        assert!(!text.contains("hunter2"), "{format}: {text}");
        assert!(!text.contains("battery"), "{format}: {text}");
        for bad in ['\u{9b}', '\u{202e}', '\u{1b}'] {
            assert!(!text.contains(bad), "{format} holds {bad:?}: {text:?}");
        }
    }
}

/// Node's test runner, run for real with its JUnit reporter: every case says
/// `classname="test"`, and the `describe()` path is in the suites around it. Each test
/// is its whole path, so the suite's five tests titled alike are five tests: `min-tests`
/// counts them all, and a test file with no tests is named relative to the repository,
/// not by the folder it was checked out in.
#[test]
fn nodes_describe_path_is_part_of_each_tests_identity() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: unit\n",
        "    test: node --test --test-reporter=junit --test-reporter-destination=junit.xml test/\n",
        "    reports: junit.xml\n",
        "    min-tests: 7\n",
    )));
    for file in ["calc.test.js", "empty.test.js"] {
        let source = fixtures().join("node/test").join(file);
        project.write(
            &format!("test/{file}"),
            &std::fs::read_to_string(source).unwrap(),
        );
    }
    // The failing test is the only failure; take it out to see `min-tests` met.
    let calc = project.path().join("test/calc.test.js");
    let text = std::fs::read_to_string(&calc).unwrap();
    std::fs::write(&calc, text.replace("1 + 1, 3", "1 + 1, 2")).unwrap();
    project.cmd().assert().success();
    let unit = check_result(&project, "local", "unit");
    assert_eq!(unit["status"], "PASS", "{unit}");
    let names: Vec<String> = unit["tests"]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} › {}",
                c["suite"].as_str().unwrap(),
                c["name"].as_str().unwrap()
            )
        })
        .collect();
    assert!(names.contains(&"math › adds".to_owned()), "{names:?}");
    assert!(
        names.contains(&"math › nested › adds".to_owned()),
        "{names:?}"
    );
    assert!(names.contains(&"strings › adds".to_owned()), "{names:?}");
    assert!(
        names.contains(&"test › test/empty.test.js".to_owned()),
        "{names:?}"
    );
    let root = project.path().canonicalize().unwrap();
    assert!(
        !unit.to_string().contains(root.to_str().unwrap()),
        "an absolute path is in a test's name: {names:?}"
    );
}

/// node's test runner writing TAP beside its spec log, through `run`: each test with
/// its describe path, the failure's message and place, the todo that passed counted as
/// passed, and the log's counts agreeing with the report's.
#[test]
fn node_test_with_a_tap_report_records_each_test_and_where_it_failed() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: unit\n",
        "    test: node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=tap --test-reporter-destination=report.tap test/\n",
        "    reports: report.tap\n",
    )));
    let source = fixtures().join("node-test/math.test.js");
    project.write(
        "test/math.test.js",
        &std::fs::read_to_string(source).unwrap(),
    );
    project.cmd().assert().code(1);
    let unit = check_result(&project, "local", "unit");
    assert_eq!(unit["status"], "FAIL", "{unit}");
    assert_eq!(
        unit["test_counts"],
        json!({"passed": 6, "failed": 1, "skipped": 1, "runner": "tap"})
    );
    assert_eq!(unit["gate_effective"], true, "{unit}");
    assert_eq!(unit["tests"]["log_counts"]["runner"], "node:test");
    let cases = unit["tests"]["cases"].as_array().unwrap();
    let failed: Vec<String> = cases
        .iter()
        .filter(|c| c["outcome"] == "failed")
        .map(|c| {
            format!(
                "{} {}:{} {}",
                c["name"].as_str().unwrap(),
                c["file"].as_str().unwrap(),
                c["line"],
                c["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        failed,
        vec!["subtracts wrongly test/math.test.js:9 five minus three\n2 !== 3"]
    );
    assert!(
        cases
            .iter()
            .any(|c| c["suite"] == "calculator › division" && c["name"] == "divides"),
        "{cases:?}"
    );
}

#[test]
fn the_tests_command_reads_tap_and_prove_output() {
    let out = common::std_bin()
        .args(["tests", "--cwd"])
        .arg(fixtures().join("prove"))
        .arg("prove.txt")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        concat!(
            "tap (prove.txt): 4 passed, 2 failed, 2 skipped\n",
            "  ✗ t/math.t › subtracts wrongly at t/math.t:10: Failed test 'subtracts wrongly' · got: '2' · expected: '3'\n",
            "  ✗ t/math.t › calculator › multiplies wrongly at t/math.t:26: Failed test 'multiplies wrongly' · got: '6' · expected: '7'\n",
        )
    );
}

/// `reports: { path, format }` reads a TAP stream its first line hides (a runner's own
/// chatter), the failing test named; without the format the same file is an error, and
/// `tests --report-format` reads it as the check does.
#[test]
fn a_named_report_format_is_read_whatever_the_file_begins_with() {
    let writes = "    test: printf 'running the suite\\nok 1 - adds\\nnot ok 2 - subtracts\\n1..2\\n' > out.tap\n";
    let project = Project::new(&manifest_with(&format!(
        "  - id: named\n{writes}    reports: [{{ path: out.tap, format: tap }}]\n  - id: told\n{writes}    reports: out.tap\n",
    )));
    project.cmd().assert().code(1);
    let named = check_result(&project, "local", "named");
    assert_eq!(named["status"], "FAIL", "{named}");
    assert_eq!(named["tests"]["format"], "tap");
    assert_eq!(named["test_counts"]["failed"], 1);
    assert_eq!(named["tests"]["cases"][1]["name"], "subtracts");
    let told = check_result(&project, "local", "told");
    assert_eq!(told["status"], "ERROR", "{told}");
    let summary = told["summary"].as_str().unwrap();
    assert!(summary.contains("not a test report"), "{summary}");

    let out = project
        .cmd()
        .args(["tests", "--report-format", "tap", "out.tap"])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("1 passed, 1 failed"), "{stdout}");
    let out = project
        .cmd()
        .args(["tests", "--report-format", "tapp", "out.tap"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("unknown report format `tapp`: it is one of junit"),
        "{stderr}"
    );
}
