//! The .NET readers (TRX, NUnit, xUnit.net): the published reports in
//! `fixtures/reports/{trx,nunit,xunit}`, what each format says outside its tests, and
//! what a hostile or broken file does to them.

use std::time::SystemTime;

use proptest::prelude::*;

use super::*;

fn context(dir: &Path) -> Context {
    Context {
        cwd: dir.to_path_buf(),
        root: dir.to_path_buf(),
        started: Started::at(SystemTime::UNIX_EPOCH),
        redactor: Default::default(),
    }
}

fn read_bytes(content: &[u8]) -> Result<Reading, Problem> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("report.xml"), content).unwrap();
    read(&[ReportPattern::any("report.xml")], &context(dir.path()))
}

fn read_one(content: &str) -> Result<Reading, Problem> {
    read_bytes(content.as_bytes())
}

fn unreadable(content: &str) -> String {
    match read_one(content) {
        Err(Problem::Unreadable(reason)) => reason,
        other => panic!("expected unreadable, got {other:?}"),
    }
}

fn fixture(folder: &str, file: &str) -> Reading {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/reports")
        .join(folder);
    read(&[ReportPattern::any(file)], &context(&dir)).unwrap_or_else(|e| panic!("{file}: {e:?}"))
}

/// (passed, failed, skipped).
fn counts(reading: &Reading) -> (u64, u64, u64) {
    let c = &reading.counts;
    (c.passed, c.failed, c.skipped)
}

fn case<'r>(reading: &'r Reading, name: &str) -> &'r TestResult {
    reading
        .report
        .cases
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no case `{name}` in {:#?}", reading.report.cases))
}

/// Every published report, as (folder, file).
const FIXTURES: &[(&str, &str)] = &[
    ("trx", "dotnet-trx.trx"),
    ("trx", "dotnet-xunitv3.trx"),
    ("trx", "mstest-host-crash.trx"),
    ("nunit", "dotnet-nunit.xml"),
    ("nunit", "nunit2.xml"),
    ("nunit", "nunit2-unicode.xml"),
    ("xunit", "xunit.xml"),
    ("xunit", "xunit-decimal-comma.xml"),
    ("xunit", "xunit-display-names.xml"),
];

const TRX_HEAD: &str =
    r#"<TestRun id="1" xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">"#;

/// A TRX report of `results`, with `definitions` and a `summary` after them.
fn trx(results: &str, definitions: &str, summary: &str) -> String {
    format!(
        "{TRX_HEAD}<Results>{results}</Results><TestDefinitions>{definitions}</TestDefinitions>{summary}</TestRun>"
    )
}

// The published reports: counts as each report's own counters give them (checked by
// hand; `tests/reports.rs` counts them again with Python), the failing tests with their
// messages and places.

#[test]
fn a_vstest_trx_of_xunit_tests() {
    let r = fixture("trx", "dotnet-trx.trx");
    assert_eq!(r.report.format, "trx");
    // <Counters total="11" executed="10" passed="5" failed="5">, one NotExecuted.
    assert_eq!(counts(&r), (5, 5, 1));
    let failing = case(&r, "Failing_Test");
    assert_eq!(failing.suite, "DotnetTests.XUnitTests.CalculatorTests");
    assert_eq!(failing.outcome, TestOutcome::Failed);
    // `&#xD;` ends the message's lines.
    assert_eq!(
        failing.message.as_deref(),
        Some("Assert.Equal() Failure\nExpected: 3\nActual:   2")
    );
    assert_eq!(
        (failing.file.as_deref(), failing.line),
        (Some("DotnetTests.XUnitTests/CalculatorTests.cs"), Some(27))
    );
    assert_eq!(failing.duration_ms, Some(4));
    // The innermost frame of the repository's code: the library the test called.
    let target = case(&r, "Exception_In_TargetTest");
    assert_eq!(
        (target.file.as_deref(), target.line),
        (Some("DotnetTests.Unit/Calculator.cs"), Some(9))
    );
    // A display name is the name; the class from the definitions is still the suite.
    let custom = case(&r, "Should be even number(i: 3)");
    assert_eq!(custom.suite, "DotnetTests.XUnitTests.CalculatorTests");
    assert_eq!(custom.line, Some(67));
    assert_eq!(
        case(&r, "Skipped_Test").outcome,
        TestOutcome::Skipped,
        "NotExecuted"
    );
}

#[test]
fn a_trx_of_xunit_v3_on_the_testing_platform() {
    let r = fixture("trx", "dotnet-xunitv3.trx");
    // <Counters total="4" passed="1" failed="3">; the run's own error ("Exit code
    // indicates failure") is explained by its failed tests, so it adds none.
    assert_eq!(counts(&r), (1, 3, 0));
    let failing = case(&r, "Failing_Test");
    assert_eq!(failing.suite, "DotnetTests.XUnitV3Tests.FixtureTests");
    assert_eq!(
        (failing.file.as_deref(), failing.line),
        (Some("DotnetTests.XUnitV3Tests/FixtureTests.cs"), Some(25)),
        "a `/_/` deterministic path is found by its end"
    );
    // Clean-up failures name no class: their name is all there is.
    let cleanup = case(
        &r,
        "[Test Class Cleanup Failure (DotnetTests.XUnitV3Tests.FixtureTests.Passing_Test)]",
    );
    assert_eq!(
        (cleanup.suite.as_str(), cleanup.outcome),
        ("", TestOutcome::Failed)
    );
}

#[test]
fn an_mstest_trx_whose_test_host_crashed() {
    let r = fixture("trx", "mstest-host-crash.trx");
    // <Counters total="25" passed="2" failed="2" aborted="1" notRunnable="1"
    // notExecuted="19">: the aborted and the unrunnable test are errors.
    assert_eq!(counts(&r), (2, 4, 19));
    let aborted = case(&r, "EST_SEG_TEMPTest");
    assert_eq!(aborted.outcome, TestOutcome::Error);
    assert_eq!(
        aborted.message.as_deref(),
        Some("the result's outcome is `Aborted`")
    );
    // mstest.exe wrote the assembly after the class.
    assert_eq!(aborted.suite, "Prueba_Sistema.SIARAlgorithmTest");
    assert_eq!(case(&r, "CompareTest").outcome, TestOutcome::Error);
    assert_eq!(case(&r, "GetDiseñoTest").outcome, TestOutcome::Skipped);
}

#[test]
fn an_nunit3_result_file() {
    let r = fixture("nunit", "dotnet-nunit.xml");
    assert_eq!(r.report.format, "nunit");
    // <test-run total="9" passed="3" failed="5" skipped="1">.
    assert_eq!(counts(&r), (3, 5, 1));
    let failing = case(&r, "Failing_Test");
    assert_eq!(failing.suite, "DotnetTests.XUnitTests.CalculatorTests");
    assert_eq!(
        failing.message.as_deref(),
        Some("Expected: 3\n  But was:  2")
    );
    assert_eq!(
        (failing.file.as_deref(), failing.line),
        (
            Some("DotnetTests.NUnitV3Tests/CalculatorTests.cs"),
            Some(27)
        )
    );
    // A theory's cases belong to the fixture, not to the theory's suite.
    let row = case(&r, "Is_Even_Number(3)");
    assert_eq!(row.suite, "DotnetTests.XUnitTests.CalculatorTests");
    assert_eq!(row.line, Some(61));
    // label="Error": an exception, not an assertion.
    assert_eq!(case(&r, "Exception_In_Test").outcome, TestOutcome::Error);
    // The timeout is said only in the label.
    assert_eq!(
        case(&r, "Timeout_Test").message.as_deref(),
        Some("Test exceeded Timeout value 1ms.")
    );
    assert_eq!(case(&r, "Skipped_Test").outcome, TestOutcome::Skipped);
}

#[test]
fn nunit2_result_files() {
    let r = fixture("nunit", "nunit2.xml");
    // total="10" failures="1" not-run="1": eleven cases, the ignored one not run.
    assert_eq!(counts(&r), (9, 1, 1));
    let failing = case(&r, "TestAlwaysFails");
    assert_eq!(failing.suite, "Bank.AccountTest");
    assert_eq!(failing.message.as_deref(), Some("This test always fails."));
    // NUnit 2.2: `executed`/`success` only. Its publisher cut three of its four cases
    // and left `total="4"`: the count is not passed over.
    let r = fixture("nunit", "nunit2-unicode.xml");
    assert_eq!(counts(&r), (0, 2, 0));
    assert_eq!(
        case(&r, "TestFailure").message.as_deref(),
        Some("Expected failure\n  Expected: ü\n  But was:  â")
    );
    assert_eq!(
        case(&r, "(the report's summary)").message.as_deref(),
        Some("the run counts 4 tests, it lists 1")
    );
}

#[test]
fn xunit_v2_xml() {
    let r = fixture("xunit", "xunit.xml");
    assert_eq!(r.report.format, "xunit");
    // <assembly total="3" passed="1" failed="1" skipped="1">.
    assert_eq!(counts(&r), (1, 1, 1));
    let failing = case(&r, "FailedTest");
    assert_eq!(failing.suite, "MyProject.Tests.SampleFact");
    assert_eq!(failing.message.as_deref(), Some("Assert.True() Failure"));
    assert!(
        failing
            .output
            .as_deref()
            .unwrap()
            .contains("SampleFact.cs:line 16")
    );
    assert_eq!(failing.duration_ms, Some(14));
    // The same run in a decimal-comma culture: the same times.
    let comma = fixture("xunit", "xunit-decimal-comma.xml");
    assert_eq!(comma.report.cases, r.report.cases);
    let names = fixture("xunit", "xunit-display-names.xml");
    assert_eq!(counts(&names), (5, 0, 0));
    assert_eq!(
        names.report.cases[0].name,
        "Uninstall application if it is installed."
    );
    assert_eq!(names.report.cases[0].suite, "UnitTest.UnitTest");
    assert_eq!(names.report.cases[0].duration_ms, Some(48_391));
}

// Detection.

#[test]
fn the_root_element_tells_the_format() {
    let format = |text: &str| read_one(text).map(|r| r.report.format.to_string());
    let trx_empty = format!("{TRX_HEAD}</TestRun>");
    for (text, want) in [
        (trx_empty.as_str(), "trx"),
        (
            "<?xml version=\"1.0\"?>\n<!-- run 3 --><test-run total=\"0\"/>",
            "nunit",
        ),
        ("<test-results total=\"0\"></test-results>", "nunit"),
        ("<assemblies/>", "xunit"),
        ("<assembly name=\"a.dll\"/>", "xunit"),
        (
            r#"<t:TestRun xmlns:t="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"/>"#,
            "trx",
        ),
        ("<testsuites/>", "junit"),
    ] {
        assert_eq!(format(text).unwrap(), want, "{text}");
    }
    // A TestRun of another kind of file is not a test report.
    let reason = unreadable("<TestRun><Results/></TestRun>");
    assert!(reason.contains("not a TRX report"), "{reason}");
    // Anything else is JUnit's to refuse, as before.
    assert!(unreadable("<html/>").contains("not a JUnit report: the root element is <html>"));
    assert!(unreadable("PASS").contains("JUnit, TRX, NUnit or xUnit.net XML"));
}

// TRX: rows, definitions, what the run says outside its tests.

#[test]
fn trx_data_rows_are_tests_and_their_parent_is_not_counted_twice() {
    let rows = |parent: &str, rows: &str| {
        trx(
            &format!(
                r#"<UnitTestResult testId="p" testName="Rows" outcome="{parent}" resultType="DataDrivenTest"><InnerResults>{rows}</InnerResults></UnitTestResult>"#
            ),
            r#"<UnitTest id="p"><TestMethod className="Ns.Data" name="Rows"/></UnitTest>"#,
            "",
        )
    };
    let row = |n: u32, outcome: &str| {
        let error = if outcome == "Passed" {
            String::new()
        } else {
            format!("<ErrorInfo><Message>row {n}</Message></ErrorInfo>")
        };
        format!(
            r#"<UnitTestResult testId="p" testName="Rows (Data Row {n})" outcome="{outcome}" resultType="DataDrivenDataRow"><Output>{error}</Output></UnitTestResult>"#
        )
    };
    let r = read_one(&rows("Failed", &(row(0, "Passed") + &row(1, "Failed")))).unwrap();
    let names: Vec<_> = r
        .report
        .cases
        .iter()
        .map(|c| (c.suite.as_str(), c.name.as_str(), c.outcome))
        .collect();
    assert_eq!(
        names,
        vec![
            ("Ns.Data", "Rows (Data Row 0)", TestOutcome::Passed),
            ("Ns.Data", "Rows (Data Row 1)", TestOutcome::Failed),
        ]
    );
    // A parent that failed while every row passed (its data source did not load) is a
    // failure of its own.
    let r = read_one(&rows("Error", &row(0, "Passed"))).unwrap();
    assert_eq!(counts(&r), (1, 1, 0));
    assert_eq!(case(&r, "Rows").outcome, TestOutcome::Error);
    // Rows nested in rows (an ordered test of data-driven tests): only the leaves.
    let nested = rows(
        "Passed",
        &format!(
            r#"<UnitTestResult testName="Inner" outcome="Passed"><InnerResults>{}{}</InnerResults></UnitTestResult>"#,
            row(0, "Passed"),
            row(1, "Passed")
        ),
    );
    assert_eq!(counts(&read_one(&nested).unwrap()), (2, 0, 0));
    // The counters count the parent too, as vstest does: no lie.
    let counted = rows("Failed", &(row(0, "Passed") + &row(1, "Failed"))).replace(
        "</TestRun>",
        r#"<ResultSummary outcome="Failed"><Counters total="3" passed="1" failed="2"/></ResultSummary></TestRun>"#,
    );
    assert_eq!(counts(&read_one(&counted).unwrap()), (1, 1, 0));
}

#[test]
fn trx_classes_are_found_before_or_after_the_results() {
    let result = r#"<UnitTestResult testId="a" testName="Ns.Cls.Test1" outcome="Passed"/><UnitTestResult testId="b" testName="Other" outcome="Passed"/>"#;
    let definitions = r#"<UnitTest id="a"><TestMethod className="Ns.Cls, Ns, Version=1.0.0.0" name="Test1"/></UnitTest>"#;
    let after = read_one(&trx(result, definitions, "")).unwrap();
    let before = read_one(&format!(
        "{TRX_HEAD}<TestDefinitions>{definitions}</TestDefinitions><Results>{result}</Results></TestRun>"
    ))
    .unwrap();
    assert_eq!(after.report.cases, before.report.cases);
    let first = &after.report.cases[0];
    assert_eq!(
        (first.suite.as_str(), first.name.as_str()),
        ("Ns.Cls", "Test1")
    );
    // No definition: the name as written.
    assert_eq!(after.report.cases[1].suite, "");
}

#[test]
fn trx_outcomes_that_are_not_passes_never_pass() {
    let word = |outcome: &str| {
        let r = read_one(&trx(
            &format!(r#"<UnitTestResult testName="t" outcome="{outcome}"/>"#),
            "",
            "",
        ))
        .unwrap();
        r.report.cases[0].outcome
    };
    assert_eq!(word("Passed"), TestOutcome::Passed);
    assert_eq!(word("Failed"), TestOutcome::Failed);
    assert_eq!(word("NotExecuted"), TestOutcome::Skipped);
    assert_eq!(word("Inconclusive"), TestOutcome::Skipped);
    for outcome in [
        "Error",
        "Timeout",
        "Aborted",
        "NotRunnable",
        "Disconnected",
        "Warning",
        "Completed",
        "InProgress",
        "Pending",
        "Passed!",
    ] {
        assert_eq!(word(outcome), TestOutcome::Error, "{outcome}");
    }
    let none = read_one(&trx(r#"<UnitTestResult testName="t"/>"#, "", "")).unwrap();
    assert_eq!(
        none.report.cases[0].message.as_deref(),
        Some("the result gives no outcome")
    );
}

#[test]
fn a_trx_run_that_failed_without_a_failed_test_fails() {
    let passed = r#"<UnitTestResult testName="t" outcome="Passed"/>"#;
    // The test host crashed after one test: vstest's run-level error.
    let crashed = trx(
        passed,
        "",
        r#"<ResultSummary outcome="Failed"><Counters total="1" passed="1"/><RunInfos><RunInfo outcome="Error"><Text>The active test run was aborted. Reason: Test host process crashed</Text></RunInfo><RunInfo outcome="Warning"><Text>No coverage</Text></RunInfo></RunInfos></ResultSummary>"#,
    );
    let r = read_one(&crashed).unwrap();
    assert_eq!(counts(&r), (1, 1, 0));
    assert_eq!(
        case(&r, "(the run itself)").message.as_deref(),
        Some("The active test run was aborted. Reason: Test host process crashed")
    );
    let failed = trx(passed, "", r#"<ResultSummary outcome="Failed"/>"#);
    assert_eq!(
        case(&read_one(&failed).unwrap(), "(the run itself)")
            .message
            .as_deref(),
        Some("the run's outcome is `Failed`, its results show no failure")
    );
    let aborted = trx(
        r#"<UnitTestResult testName="t" outcome="PassedButRunAborted"/>"#,
        "",
        "",
    );
    assert_eq!(counts(&read_one(&aborted).unwrap()), (1, 1, 0));
    // A warning at the run level (coverage not collected) is not a failure.
    let warned = trx(
        passed,
        "",
        r#"<ResultSummary outcome="Warning"><RunInfos><RunInfo outcome="Warning"><Text>w</Text></RunInfo></RunInfos></ResultSummary>"#,
    );
    assert_eq!(counts(&read_one(&warned).unwrap()), (1, 0, 0));
}

// What the reports' own totals claim.

#[test]
fn totals_that_claim_more_than_is_listed_are_a_failure() {
    let summary = |r: &Reading| {
        case(r, "(the report's summary)")
            .message
            .clone()
            .unwrap()
            .to_string()
    };
    let lying_trx = trx(
        r#"<UnitTestResult testName="t" outcome="Passed"/>"#,
        "",
        r#"<ResultSummary outcome="Completed"><Counters total="3" passed="1" failed="1" timeout="1"/></ResultSummary>"#,
    );
    let r = read_one(&lying_trx).unwrap();
    assert_eq!(counts(&r), (1, 1, 0));
    assert_eq!(
        summary(&r),
        "the summary counts 2 failed, its results show 0; 3 tests, it lists 1"
    );
    let lying_nunit = r#"<test-run total="2" passed="1" failed="1" result="Failed"><test-suite type="TestFixture" name="C" fullname="N.C"><test-case name="ok" result="Passed"/></test-suite></test-run>"#;
    let r = read_one(lying_nunit).unwrap();
    assert_eq!(counts(&r), (1, 1, 0));
    assert_eq!(
        summary(&r),
        "the run counts 1 failed, its cases show 0; 2 tests, it lists 1"
    );
    let lying_nunit2 = r#"<test-results total="1" failures="0" errors="1"><test-suite name="a.dll"><results><test-case name="N.C.ok" executed="True" result="Success"/></results></test-suite></test-results>"#;
    assert_eq!(counts(&read_one(lying_nunit2).unwrap()), (1, 1, 0));
    let lying_xunit = r#"<assemblies><assembly name="C:\ci\T.dll" total="5" failed="1" errors="1"><collection name="c"><test name="N.C.ok" type="N.C" result="Pass"/></collection></assembly></assemblies>"#;
    let r = read_one(lying_xunit).unwrap();
    assert_eq!(counts(&r), (1, 1, 0));
    let lie = case(&r, "(the report's summary)");
    assert_eq!(lie.suite, "T.dll");
    assert_eq!(
        lie.message.as_deref(),
        Some(
            "the assembly counts 1 failed, its tests show 0; 1 errors, it lists 0; 5 tests, it lists 1"
        )
    );
    // Honest totals add nothing.
    let honest = r#"<assemblies><assembly total="1" failed="0" errors="0"><collection><test name="x" type="N.C" result="Pass"/></collection></assembly></assemblies>"#;
    assert_eq!(counts(&read_one(honest).unwrap()), (1, 0, 0));
}

// NUnit: suites, labels, what fails outside the cases.

#[test]
fn nunit_suites_name_their_cases_by_the_fixtures_full_path() {
    let xml = r#"<test-run total="3" passed="3" failed="0">
<test-suite type="Assembly" name="T.dll" fullname="/ci/T.dll">
 <test-suite type="TestSuite" name="Ns" fullname="Ns">
  <test-suite type="TestFixture" name="Outer+Inner" fullname="Ns.Outer+Inner">
   <test-suite type="ParameterizedMethod" name="M" fullname="Ns.Outer+Inner.M">
    <test-case name="M(1)" fullname="Ns.Outer+Inner.M(1)" result="Passed"/>
   </test-suite>
  </test-suite>
  <test-suite type="ParameterizedFixture" name="Fx" fullname="Ns.Fx">
   <test-suite type="TestFixture" name="Fx(2)" fullname="Ns.Fx(2)">
    <test-case name="T" result="Passed"/>
   </test-suite>
  </test-suite>
  <test-suite type="TestFixture" name="Bare">
   <test-suite type="GenericFixture" name="Gen&lt;int&gt;">
    <test-case name="Bare.Gen&lt;int&gt;.T" result="Passed"/>
   </test-suite>
  </test-suite>
 </test-suite>
</test-suite></test-run>"#;
    let r = read_one(xml).unwrap();
    let ids = super::tests::suite_and_name(&r);
    assert_eq!(
        ids,
        vec![
            "Ns.Outer+Inner | M(1)",
            "Ns.Fx(2) | T",
            // Suites written without their full names: the path of names.
            "Ns › Bare › Gen<int> | Bare.Gen<int>.T",
        ]
    );
}

#[test]
fn nunit_results_and_labels() {
    let outcome = |result: &str, label: &str| {
        let xml = format!(
            r#"<test-run><test-suite type="TestFixture" name="C" fullname="N.C"><test-case name="t" result="{result}" label="{label}"/></test-suite></test-run>"#
        );
        read_one(&xml).unwrap().report.cases[0].outcome
    };
    assert_eq!(outcome("Passed", ""), TestOutcome::Passed);
    assert_eq!(outcome("Failed", ""), TestOutcome::Failed);
    for label in ["Error", "Invalid", "Cancelled"] {
        assert_eq!(outcome("Failed", label), TestOutcome::Error, "{label}");
    }
    for label in ["Ignored", "Explicit", ""] {
        assert_eq!(outcome("Skipped", label), TestOutcome::Skipped, "{label}");
    }
    assert_eq!(outcome("Inconclusive", ""), TestOutcome::Skipped);
    assert_eq!(outcome("Warning", ""), TestOutcome::Error);
    assert_eq!(outcome("Unknown", ""), TestOutcome::Error);
    // NUnit 2's words.
    let v2 = |attrs: &str| {
        let xml = format!(
            r#"<test-results><test-suite name="a.dll"><results><test-case name="N.C.t" {attrs}/></results></test-suite></test-results>"#
        );
        read_one(&xml).unwrap().report.cases[0].outcome
    };
    assert_eq!(v2(r#"result="Success""#), TestOutcome::Passed);
    assert_eq!(v2(r#"result="Failure""#), TestOutcome::Failed);
    assert_eq!(v2(r#"result="Error""#), TestOutcome::Error);
    assert_eq!(v2(r#"result="NotRunnable""#), TestOutcome::Error);
    assert_eq!(v2(r#"result="Ignored""#), TestOutcome::Skipped);
    assert_eq!(v2(r#"executed="False""#), TestOutcome::Skipped);
    assert_eq!(v2(r#"executed="True" success="True""#), TestOutcome::Passed);
    assert_eq!(
        v2(r#"executed="True" success="False""#),
        TestOutcome::Failed
    );
    assert_eq!(v2(r#"executed="True""#), TestOutcome::Error);
}

#[test]
fn nunit_failures_outside_the_cases_are_never_passed_over() {
    // A one-time tear-down that failed after every case passed.
    let teardown = r#"<test-run result="Failed" total="1" passed="1" failed="0"><test-suite type="TestFixture" name="C" fullname="N.C" result="Failed" label="Error" site="TearDown"><failure><message>OneTimeTearDown: boom</message></failure><test-case name="t" result="Passed"/></test-suite></test-run>"#;
    let r = read_one(teardown).unwrap();
    assert_eq!(counts(&r), (1, 1, 0));
    let own = case(&r, "(the suite itself)");
    assert_eq!(own.suite, "N.C");
    assert_eq!(own.message.as_deref(), Some("OneTimeTearDown: boom"));
    // A one-time set-up that failed: NUnit fails every case; nothing is added.
    let setup = r#"<test-run result="Failed"><test-suite type="TestFixture" name="C" fullname="N.C" result="Failed" site="SetUp"><failure><message>OneTimeSetUp: boom</message></failure><test-case name="t" result="Failed" label="Error" site="Parent"/></test-suite></test-run>"#;
    assert_eq!(counts(&read_one(setup).unwrap()), (0, 1, 0));
    // An assembly that did not load: no case at all.
    let load = r#"<test-run result="Failed" total="0"><test-suite type="Assembly" name="T.dll" fullname="/ci/T.dll" result="Failed" label="Invalid"><reason><message>File not found: /ci/T.dll</message></reason></test-suite></test-run>"#;
    let r = read_one(load).unwrap();
    let own = case(&r, "(the suite itself)");
    assert_eq!(
        (own.suite.as_str(), own.message.as_deref()),
        ("T.dll", Some("File not found: /ci/T.dll"))
    );
    // The run says it failed and nothing listed did.
    let run = r#"<test-run result="Failed"><test-suite type="TestFixture" name="C" fullname="N.C" result="Passed"><test-case name="t" result="Passed"/></test-suite></test-run>"#;
    let r = read_one(run).unwrap();
    assert_eq!(counts(&r), (1, 1, 0));
    assert!(
        case(&r, "(the run itself)")
            .message
            .as_deref()
            .unwrap()
            .contains("the run's result is `Failed`")
    );
    // NUnit 2.2: a suite that did not succeed with no case failing.
    let v2 = r#"<test-results><test-suite name="a.dll" success="False"><results/></test-suite></test-results>"#;
    assert_eq!(counts(&read_one(v2).unwrap()), (0, 1, 0));
}

// xUnit.net: errors outside the tests, results.

#[test]
fn xunit_errors_and_results() {
    let xml = r#"<assemblies><assembly name="/ci/T.dll" total="3" failed="0" errors="1">
<errors><error type="test-class-cleanup" name="N.C"><failure exception-type="System.InvalidOperationException"><message>dispose failed</message><stack-trace>   at N.Fixture.Dispose() in /src/Fixture.cs:line 10</stack-trace></failure></error></errors>
<collection name="Test collection for N.C"><test name="N.C.a" type="N.C" method="a" result="Pass" time="0.001"/><test name="N.C.b" type="N.C" method="b" result="NotRun"/><test name="N.C.c" type="N.C" method="c" result="Won"/></collection>
</assembly></assemblies>"#;
    let r = read_one(xml).unwrap();
    let outcomes: Vec<_> = r
        .report
        .cases
        .iter()
        .map(|c| (c.suite.as_str(), c.name.as_str(), c.outcome))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("N.C", "(test-class-cleanup)", TestOutcome::Error),
            ("N.C", "a", TestOutcome::Passed),
            ("N.C", "b", TestOutcome::Skipped),
            ("N.C", "c", TestOutcome::Error),
        ]
    );
    assert_eq!(r.report.cases[0].message.as_deref(), Some("dispose failed"));
    assert!(
        r.report.cases[3]
            .message
            .as_deref()
            .unwrap()
            .contains("`Won` is not one xUnit.net defines")
    );
    // xUnit.net 1: a lone <assembly> of <class>es.
    let v1 = r#"<assembly name="T.dll" total="1" failed="1"><class name="N.C"><test name="N.C.t" type="N.C" result="Fail"><failure><message>no</message></failure></test></class></assembly>"#;
    let r = read_one(v1).unwrap();
    assert_eq!(counts(&r), (0, 1, 0));
    assert_eq!(r.report.cases[0].message.as_deref(), Some("no"));
}

// Hostile and broken files.

#[test]
fn a_doctype_is_refused_in_every_format() {
    for root in [
        TRX_HEAD.to_owned() + "</TestRun>",
        "<test-run/>".to_owned(),
        "<test-results/>".to_owned(),
        "<assemblies/>".to_owned(),
    ] {
        let laughs = format!(
            "<?xml version=\"1.0\"?>\n<!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>\n{root}"
        );
        let reason = unreadable(&laughs);
        assert!(reason.contains("DOCTYPE is refused"), "{root}: {reason}");
        assert!(reason.contains("line 2"), "{root}: {reason}");
        let external = format!("<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n{root}");
        assert!(unreadable(&external).contains("DOCTYPE is refused"));
    }
    // Inside the root, where no DOCTYPE belongs, the .NET readers refuse it too.
    for (open, close) in [
        (TRX_HEAD, "</TestRun>"),
        ("<test-run>", "</test-run>"),
        ("<assemblies>", "</assemblies>"),
    ] {
        let inside = format!("{open}<!DOCTYPE r [<!ENTITY a \"b\">]>{close}");
        let reason = unreadable(&inside);
        assert!(
            reason.contains("DOCTYPE is refused") || reason.contains("malformed XML"),
            "{open}: {reason}"
        );
    }
    // An entity nobody declared is an error, in text and in attributes alike.
    let reason = unreadable(&trx(
        r#"<UnitTestResult testName="&secret;" outcome="Passed"/>"#,
        "",
        "",
    ));
    assert!(reason.contains("attribute `testName`"), "{reason}");
    let reason = unreadable(
        "<assemblies><assembly><collection><test name=\"t\" type=\"C\" result=\"Fail\"><failure><message>&secret;</message></failure></test></collection></assembly></assemblies>",
    );
    assert!(reason.contains("unknown entity `&secret;`"), "{reason}");
}

/// Every published report cut anywhere before its root's end is an error, never a
/// reading of the tests it got to.
#[test]
fn a_report_cut_short_is_an_error() {
    for (folder, file) in FIXTURES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/reports")
            .join(folder)
            .join(file);
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let end = text.trim_end().len();
        let step = (end / 23).max(1);
        for cut in (1..end).step_by(step) {
            if !text.is_char_boundary(cut) {
                continue;
            }
            match read_one(&text[..cut]) {
                Err(Problem::Unreadable(_)) => {}
                other => panic!("{file} cut at {cut}: {other:?}"),
            }
        }
    }
}

#[test]
fn nesting_is_bounded_in_every_format() {
    let deep_rows = format!(
        "{TRX_HEAD}<Results>{}{}</Results></TestRun>",
        r#"<UnitTestResult testName="t" outcome="Passed"><InnerResults>"#.repeat(40),
        "</InnerResults></UnitTestResult>".repeat(40)
    );
    assert!(unreadable(&deep_rows).contains("nested deeper than 64"));
    let deep_suites = format!(
        "<test-run>{}{}</test-run>",
        "<test-suite type=\"TestSuite\" name=\"n\">".repeat(100),
        "</test-suite>".repeat(100)
    );
    assert!(unreadable(&deep_suites).contains("nested deeper than 64"));
    let deep_other = format!(
        "<assemblies>{}{}</assemblies>",
        "<x>".repeat(100),
        "</x>".repeat(100)
    );
    assert!(unreadable(&deep_other).contains("nested deeper than 64"));
}

#[test]
fn huge_names_messages_and_traces_are_bounded() {
    let name = "n".repeat(100_000);
    let trace = format!(
        "{}   at N.C.T() in /src/C.cs:line 3",
        "   at Deep.Frame()\n".repeat(50_000)
    );
    let xml = format!(
        r#"<assemblies><assembly><collection><test name="{name}" type="{name}" result="Fail"><failure><message>{}</message><stack-trace>{trace}</stack-trace></failure></test></collection></assembly></assemblies>"#,
        "m".repeat(200_000)
    );
    let r = read_one(&xml).unwrap();
    let c = &r.report.cases[0];
    assert_eq!(c.suite.chars().count(), MAX_NAME_CHARS + 1);
    assert!(c.name.chars().count() <= MAX_NAME_CHARS + 1);
    assert!(c.message.as_ref().unwrap().chars().count() <= MAX_MESSAGE_CHARS + 1);
    assert!(c.output.as_ref().unwrap().chars().count() < MAX_OUTPUT_CHARS + 100);
}

/// More results than are listed: the rest are counted, and the classes learnt after
/// the results still reach the listed ones.
#[test]
fn a_trx_with_more_results_than_are_listed() {
    let n = MAX_CASES + 3;
    let mut results = String::with_capacity(n * 64);
    for i in 0..n {
        results.push_str(&format!(
            r#"<UnitTestResult testId="t{i}" testName="N.C.T{i}" outcome="Passed"/>"#
        ));
    }
    let definitions = r#"<UnitTest id="t0"><TestMethod className="N.C"/></UnitTest>"#;
    let r = read_one(&trx(&results, definitions, "")).unwrap();
    assert_eq!(r.counts.passed, n as u64);
    // Passes are listed up to the places kept for failures.
    assert_eq!(r.report.cases.len(), MAX_CASES - FAILURES_ONLY);
    assert_eq!(r.report.left_out, (FAILURES_ONLY + 3) as u64);
    assert_eq!(
        (
            r.report.cases[0].suite.as_str(),
            r.report.cases[0].name.as_str()
        ),
        ("N.C", "T0")
    );
}

#[test]
fn control_characters_and_terminal_escapes_in_names_are_not_kept() {
    let csi = '\u{9b}';
    let xml = format!(
        "<test-run><test-suite type=\"TestFixture\" name=\"C\" fullname=\"N.C\u{1b}[2J\"><test-case name=\"t\u{1b}]0;title\u{7}{csi}31m&#x9;x\" result=\"Failed\"><failure><message>m\u{1b}[31m</message></failure></test-case></test-suite></test-run>"
    );
    let r = read_one(&xml).unwrap();
    let c = &r.report.cases[0];
    for text in [c.suite.as_str(), c.name.as_str()] {
        assert!(!text.chars().any(char::is_control), "{text:?}");
    }
    assert!(c.name.starts_with("t ]0;title"), "{:?}", c.name);
}

fn fixture_bytes() -> Vec<Vec<u8>> {
    FIXTURES
        .iter()
        .map(|(folder, file)| {
            std::fs::read(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("fixtures/reports")
                    .join(folder)
                    .join(file),
            )
            .unwrap()
        })
        .collect()
}

/// Whatever the bytes: a reading whose listed tests and counts agree, or an error;
/// never a panic.
fn reads_or_refuses(bytes: &[u8]) -> Result<(), TestCaseError> {
    match read_bytes(bytes) {
        Ok(r) => {
            let c = &r.counts;
            prop_assert_eq!(
                r.report.cases.len() as u64 + r.report.left_out,
                c.passed + c.failed + c.skipped
            );
        }
        Err(Problem::Unreadable(_)) => {}
        Err(other) => prop_assert!(false, "{other:?}"),
    }
    Ok(())
}

/// Pieces of the three formats, put together in any order.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(TRX_HEAD.to_owned()),
        Just("<Results>".to_owned()),
        Just("</Results>".to_owned()),
        Just(r#"<UnitTestResult testId="a" testName="N.C.t" outcome="Failed">"#.to_owned()),
        Just("</UnitTestResult>".to_owned()),
        Just("<InnerResults>".to_owned()),
        Just("</InnerResults>".to_owned()),
        Just("<Output><ErrorInfo><Message>m</Message><StackTrace> in /x.cs:line 1</StackTrace></ErrorInfo></Output>".to_owned()),
        Just(r#"<TestDefinitions><UnitTest id="a"><TestMethod className="N.C"/></UnitTest></TestDefinitions>"#.to_owned()),
        Just(r#"<ResultSummary outcome="Failed"><Counters total="9" failed="9"/><RunInfos><RunInfo outcome="Error"><Text>x</Text></RunInfo></RunInfos></ResultSummary>"#.to_owned()),
        Just("</TestRun>".to_owned()),
        Just(r#"<test-run total="3" failed="2" result="Failed">"#.to_owned()),
        Just("<test-results total=\"2\">".to_owned()),
        Just(r#"<test-suite type="TestFixture" name="C" fullname="N.C" result="Failed">"#.to_owned()),
        Just("</test-suite>".to_owned()),
        Just(r#"<test-case name="t" result="Failed" label="Error">"#.to_owned()),
        Just("</test-case>".to_owned()),
        Just("<failure><message>m</message><stack-trace>s</stack-trace></failure>".to_owned()),
        Just("<reason><message>r</message></reason>".to_owned()),
        Just("</test-run>".to_owned()),
        Just(r#"<assemblies><assembly name="a" total="4" failed="3" errors="2">"#.to_owned()),
        Just("<collection name=\"c\">".to_owned()),
        Just(r#"<test name="N.C.t" type="N.C" result="Fail" time="0,5">"#.to_owned()),
        Just("</test>".to_owned()),
        Just(r#"<errors><error type="fatal" name="">"#.to_owned()),
        Just("</error></errors>".to_owned()),
        Just("</collection></assembly></assemblies>".to_owned()),
        Just("&amp;&#x1b;&#0;&bogus;<![CDATA[x]]>".to_owned()),
        "[ -~]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_arrangement_of_the_formats_pieces_reads_or_refuses(
        pieces in prop::collection::vec(piece(), 1..24)
    ) {
        reads_or_refuses(pieces.concat().as_bytes())?;
    }

    #[test]
    fn any_damage_to_a_published_report_reads_or_refuses(
        which in 0..FIXTURES.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
    ) {
        let mut bytes = fixture_bytes().swap_remove(which);
        for (at, byte, how) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            match how {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => {
                    bytes.remove(i);
                }
            }
        }
        reads_or_refuses(&bytes)?;
    }
}

/// A result that says it passed and holds what went wrong (a `<failure>`, an
/// `<ErrorInfo>`) did not pass; a test or error where xUnit.net never writes one is
/// refused, never passed over.
#[test]
fn a_pass_that_holds_a_failure_is_a_failure_and_misplaced_tests_are_refused() {
    let xunit = read_one(
        r#"<assemblies><assembly name="a.dll" total="1" failed="0"><collection name="c"><test name="N.C.u" type="N.C" result="Pass"><failure><message>Assert.True() Failure</message></failure></test></collection></assembly></assemblies>"#,
    )
    .unwrap();
    assert_eq!(counts(&xunit), (0, 1, 0));
    let nunit = read_one(
        r#"<test-run><test-suite type="TestFixture" name="F" fullname="N.F"><test-case name="t" fullname="N.F.t" result="Passed"><failure><message>Expected 1 but was 2</message></failure></test-case></test-suite></test-run>"#,
    )
    .unwrap();
    assert_eq!(counts(&nunit), (0, 1, 0));
    let passed_with_error = trx(
        r#"<UnitTestResult testId="t" testName="t" outcome="Passed"><Output><ErrorInfo><Message>Assert failed</Message></ErrorInfo></Output></UnitTestResult>"#,
        r#"<UnitTest id="t"><TestMethod className="A.B" name="t"/></UnitTest>"#,
        "",
    );
    let reading = read_one(&passed_with_error).unwrap();
    assert_eq!(counts(&reading), (0, 1, 0));
    assert_eq!(
        case(&reading, "t").message.as_deref(),
        Some("Assert failed")
    );
    for misplaced in [
        r#"<assemblies><errors><error type="fatal"><failure><message>boom</message></failure></error></errors><assembly name="a.dll"/></assemblies>"#,
        r#"<assemblies><assembly name="a.dll"><collection name="c"><error type="fatal"/></collection></assembly></assemblies>"#,
        r#"<assemblies><test name="t" result="Fail"/><assembly name="a.dll"/></assemblies>"#,
    ] {
        let reason = unreadable(misplaced);
        assert!(reason.contains("where xUnit.net writes none"), "{reason}");
    }
}
