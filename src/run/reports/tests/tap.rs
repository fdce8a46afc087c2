//! TAP: the real runners' captures in fixtures/reports/ (node-test, prove, bats), and
//! what a broken, lying or hostile stream makes of the reader.

use super::*;

/// Each test as `outcome suite › name`, and for a failure `: message` (its first line).
fn tests(reading: &Reading) -> Vec<String> {
    reading
        .report
        .cases
        .iter()
        .map(|c| {
            let mut line = format!("{} {} › {}", c.outcome.as_str(), c.suite, c.name);
            if let Some(message) = &c.message {
                line.push_str(&format!(": {}", message.lines().next().unwrap_or("")));
            }
            line
        })
        .collect()
}

fn counts(reading: &Reading) -> (u64, u64, u64) {
    let c = &reading.counts;
    (c.passed, c.failed, c.skipped)
}

fn fixture(runner: &str, report: &str) -> Reading {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/reports")
        .join(runner);
    read(&[ReportPattern::any(report)], &context(&dir))
        .unwrap_or_else(|e| panic!("{report}: {e:?}"))
}

/// The message of the one test named `name`.
fn message_of<'r>(reading: &'r Reading, name: &str) -> &'r str {
    let case = reading.report.cases.iter().find(|c| c.name == name);
    case.and_then(|c| c.message.as_deref())
        .unwrap_or_else(|| panic!("no message for {name}: {:?}", tests(reading)))
}

/// Reads `text` straight into a collector (no file, no detection): for the property
/// test and the 100 MB line.
fn direct(source: impl std::io::Read) -> Result<(Tally, usize), String> {
    let dir = tempfile::tempdir().unwrap();
    let locator = Locator::new(dir.path(), dir.path());
    let redactor = Redactor::default();
    let mut sink = Collector::new(&locator, &redactor);
    super::super::tap::read(std::io::BufReader::new(source), &mut sink)
        .map(|()| (sink.tally, sink.cases.len()))
        .map_err(|e| format!("{} (line {:?})", e.message, e.line))
}

#[test]
fn node_test_runner_tap_as_its_summary_counts_it() {
    // `# tests 8`, `# pass 5`, `# fail 1`, `# skipped 1`, `# todo 1`: the todo passed.
    for report in ["report.tap", "default.tap"] {
        let reading = fixture("node-test", report);
        assert_eq!(reading.report.format, "tap");
        assert_eq!(counts(&reading), (6, 1, 1), "{report}");
        assert_eq!(reading.report.cases.len(), 8);
        let failed = &reading.report.cases[1];
        assert_eq!(failed.name, "subtracts wrongly");
        assert_eq!(failed.message.as_deref(), Some("five minus three\n2 !== 3"));
        // The failing assertion's line, in the file node's `location` names.
        assert_eq!(
            (failed.file.as_deref(), failed.line),
            (Some("math.test.js"), Some(9))
        );
        let names = tests(&reading);
        assert!(names.contains(&"passed calculator › division › divides".to_owned()));
        assert!(names.contains(&"passed calculator › multiplies".to_owned()));
        assert!(names.contains(&"passed  › names \"quoted\" <tag> & ünïcødé ✓".to_owned()));
        // The describe blocks are not tests of their own.
        assert!(!names.iter().any(|n| n.ends_with("› calculator")));
    }
}

#[test]
fn a_parent_counts_only_for_a_failure_of_its_own() {
    // node: `# tests 7`, `# pass 3`, `# fail 3`, `# todo 1` (a failing todo).
    let reading = fixture("node-test", "report-hooks.tap");
    assert_eq!(counts(&reading), (3, 3, 1));
    assert_eq!(
        tests(&reading),
        vec![
            "passed parent › child ok",
            "failed parent › child bad: child broke",
            "passed parent own failure › kid",
            "failed  › parent own failure: parent itself broke",
            "skipped  › todo that fails",
            "passed suite with failing hook › fine",
            "failed  › suite with failing hook: hook broke",
        ]
    );
}

#[test]
fn prove_and_test_more_as_prove_counts_them() {
    // prove: `Files=2, Tests=7`, `Failed 2/7 subtests (less 1 skipped subtest: 4
    // okay)`; test 6 is a subtest whose second test failed, 4 a failing TODO, 5 a
    // passing one, t/empty.t skipped whole.
    let reading = fixture("prove", "prove.txt");
    assert_eq!(counts(&reading), (4, 2, 2));
    assert_eq!(
        tests(&reading),
        vec![
            "passed t/math.t › adds",
            "failed t/math.t › subtracts wrongly: Failed test 'subtracts wrongly'",
            "skipped t/math.t › test 3",
            "skipped t/math.t › rounds",
            "passed t/math.t › already works",
            "passed t/math.t › calculator › divides",
            "failed t/math.t › calculator › multiplies wrongly: Failed test 'multiplies wrongly'",
            "passed t/math.t › names \"quoted\" <tag> & ünïcødé ✓ # hash",
        ]
    );
    let failed = &reading.report.cases[6];
    assert_eq!(
        (failed.file.as_deref(), failed.line),
        (Some("t/math.t"), Some(26))
    );
    assert_eq!(
        failed.message.as_deref(),
        Some("Failed test 'multiplies wrongly'\ngot: '6'\nexpected: '7'")
    );
    // The test file's own TAP, the same tests without the file's name.
    let raw = fixture("prove", "math.tap");
    assert_eq!(counts(&raw), (4, 2, 2));
    assert_eq!(raw.report.cases[1].suite, "");
}

#[test]
fn bats_as_its_plan_counts_it() {
    // `1..4`: one failure, one skipped.
    for report in ["bats.tap", "timing.tap", "tap13.tap"] {
        let reading = fixture("bats", report);
        assert_eq!(counts(&reading), (2, 1, 1), "{report}");
        let failed = &reading.report.cases[1];
        assert_eq!(failed.name, "subtracts wrongly", "{report}");
        assert_eq!(
            (failed.file.as_deref(), failed.line),
            (Some("test/math.bats"), Some(10))
        );
        assert_eq!(
            failed.message.as_deref(),
            Some("`[ \"$result\" -eq 3 ]' failed")
        );
        assert_eq!(
            reading.report.cases[3].name,
            "names \"quoted\" <tag> & ünïcødé ✓ # hash"
        );
    }
    // `--timing` gives each test's time after its name.
    assert_eq!(
        fixture("bats", "timing.tap").report.cases[0].duration_ms,
        Some(26)
    );
}

#[test]
fn directives_are_read_as_tap_harness_reads_them() {
    let reading = read_one(concat!(
        "1..8\n",
        "ok 1 - plain\n",
        "not ok 2 - broken\n",
        "ok 3 - later # SKIP no network\n",
        "not ok 4 # skip\n",
        "not ok 5 - known bug # TODO fix it\n",
        "ok 6 - fixed already # todo\n",
        "ok 7 - a \\# in its name # Skipped is not SKIP\n",
        "ok 8 - a \\\\ and # comment\n",
    ))
    .unwrap();
    assert_eq!(
        tests(&reading),
        vec![
            "passed  › plain",
            "failed  › broken",
            "skipped  › later",
            "skipped  › test 4",
            // A TODO that fails is expected to: not a failure.
            "skipped  › known bug",
            // A TODO that passes passed.
            "passed  › fixed already",
            "passed  › a # in its name # Skipped is not SKIP",
            "passed  › a \\ and # comment",
        ]
    );
}

#[test]
fn headerless_subtests_are_named_by_their_parents_line() {
    // Test::More before `# Subtest:` lines, and TAP 14 without them.
    let reading = read_one(concat!(
        "1..2\n",
        "    1..2\n",
        "        1..1\n",
        "        not ok 1 - deepest\n",
        "    not ok 1 - inner\n",
        "    ok 2 - sibling\n",
        "not ok 1 - outer\n",
        "ok 2 - after\n",
    ))
    .unwrap();
    assert_eq!(
        tests(&reading),
        vec![
            "failed outer › inner › deepest",
            "passed outer › sibling",
            "passed  › after"
        ]
    );
}

#[test]
fn a_plan_that_lies_and_a_stream_cut_short_fail() {
    let reading = read_one("1..5\nok 1 - a\nok 2 - b\n").unwrap();
    assert_eq!(counts(&reading), (2, 1, 0));
    assert_eq!(
        tests(&reading)[2],
        "error  › (the plan): the plan is `1..5`, but 2 tests ran (cut short?)"
    );
    let reading = read_one("1..1\nok 1 - a\nok 2 - b\n").unwrap();
    assert_eq!(counts(&reading), (2, 1, 0));
    // No plan at all: the stream may have stopped anywhere.
    let reading = read_one("TAP version 13\nok 1 - a\n").unwrap();
    assert_eq!(counts(&reading), (1, 1, 0));
    assert!(
        tests(&reading)[1].contains("no plan"),
        "{:?}",
        tests(&reading)
    );
    // A subtest the stream leaves before its result.
    let reading = read_one("TAP version 14\n# Subtest: s\n    1..2\n    ok 1 - a\n").unwrap();
    let names = tests(&reading);
    assert!(names.contains(&"passed s › a".to_owned()), "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("error s › (the subtest): the subtest never ended")),
        "{names:?}"
    );
    // node's own capture, cut between two tests.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reports/node-test/report.tap");
    let whole = std::fs::read_to_string(path).unwrap();
    let cut = &whole[..whole.find("# Subtest: calculator").unwrap()];
    let reading = read_one(cut).unwrap();
    assert_eq!(counts(&reading), (2, 2, 1), "{:?}", tests(&reading));
    // And inside a YAML block: unreadable, at the block's line.
    let cut = &whole[..whole.find("code: 'ERR_ASSERTION'").unwrap()];
    let reason = unreadable(cut);
    assert!(
        reason.contains("never closed with `...`, line 9"),
        "{reason}"
    );
}

#[test]
fn zero_tests_need_a_plan_that_says_so() {
    let reading = read_one("1..0 # SKIP no database\n").unwrap();
    assert_eq!(counts(&reading), (0, 0, 0));
    assert!(reading.report.cases.is_empty());
    assert!(
        unreadable("TAP version 13\n# nothing here\n").contains("no plan `1..N` and no test line")
    );
    assert!(
        unreadable("TAP version 15\n1..1\nok 1\n")
            .contains("TAP version 15 is not one this reader knows")
    );
}

#[test]
fn bail_out_is_a_failure_naming_its_reason() {
    let reading =
        read_one("1..3\nok 1 - a\nBail out! database went away\nok 2 - b\nok 3 - c\n").unwrap();
    assert_eq!(counts(&reading), (1, 1, 0));
    assert_eq!(
        tests(&reading),
        vec![
            "passed  › a",
            "error  › (bail out): Bail out! database went away"
        ]
    );
    // Inside a subtest, and with nothing else in the stream.
    let reading = read_one("# Subtest: s\n    ok 1 - a\n    Bail out!\n").unwrap();
    assert_eq!(counts(&reading), (1, 1, 0));
    let reading = read_one("Bail out! no tests today\n").unwrap();
    assert_eq!(counts(&reading), (0, 1, 0));
}

#[test]
fn closing_counts_the_tests_do_not_bear_out_fail() {
    // node's counts: a failure the stream does not show.
    let node = |tests: u64, fail: u64| {
        read_one(&format!(
            "TAP version 13\nok 1 - a\nok 2 - b\n1..2\n# tests {tests}\n# suites 0\n# pass 2\n# fail {fail}\n# cancelled 0\n# skipped 0\n# todo 0\n"
        ))
        .unwrap()
    };
    assert_eq!(counts(&node(2, 0)), (2, 0, 0));
    let hidden = node(3, 1);
    assert_eq!(counts(&hidden), (2, 1, 0));
    assert_eq!(
        tests(&hidden)[2],
        "error  › (the summary): the closing counts say 3 tests, the stream shows 2; 1 failed, the stream shows 0"
    );
    // Output a test printed (`# tests 9` in the middle) is not the closing count.
    let printed =
        read_one("TAP version 13\nok 1 - a\n# tests 9\n# pass 9\n# fail 9\n1..1\n").unwrap();
    assert_eq!(counts(&printed), (1, 0, 0));
    // prove's summary against its files' TAP.
    let prove = read_one("t/a.t .. \n1..1\nok 1 - a\nok\nAll tests successful.\nFiles=2, Tests=3,  0 wallclock secs\nResult: PASS\n").unwrap();
    assert_eq!(counts(&prove), (1, 1, 0));
    assert_eq!(
        tests(&prove)[1],
        "error  › (the summary): prove's summary counts 2 files, its output shows 1; 3 tests, its output shows 1"
    );
    let prove = read_one("t/a.t .. \n1..1\nok 1 - a\nDubious, test returned 255 (wstat 65280, 0xff00)\nAll 1 subtests passed \nFiles=1, Tests=1,  0 wallclock secs\nResult: FAIL\n").unwrap();
    assert_eq!(counts(&prove), (1, 1, 0));
    assert!(
        tests(&prove)[1]
            .starts_with("error t/a.t › (the test file): prove: Dubious, test returned 255"),
        "{:?}",
        tests(&prove)
    );
    // Without -v, prove lists no test.
    assert!(unreadable("t/a.t .. ok\nAll tests successful.\nFiles=1, Tests=1,  0 wallclock secs\nResult: PASS\n").contains("run prove with -v"));
}

#[test]
fn tests_out_of_sequence_fail() {
    let reading = read_one("1..3\nok 1 - a\nok 3 - c\nok 2 - b\n").unwrap();
    assert_eq!(counts(&reading), (3, 1, 0));
    assert_eq!(
        tests(&reading)[1],
        "error  › (the numbering): test 3 at line 3 comes where test 2 should: tests out of sequence"
    );
}

#[test]
fn nesting_is_bounded_and_names_the_line() {
    let deep: String = (0..1000)
        .map(|depth| format!("{}# Subtest: level {depth}\n", "    ".repeat(depth)))
        .collect();
    let reason = unreadable(&format!("TAP version 14\n{deep}"));
    assert!(
        reason.contains("nested deeper than 64 levels, line 67"),
        "{reason}"
    );
    let reason = unreadable(&format!("1..1\n{}ok 1 - deep\n", "    ".repeat(1000)));
    assert!(
        reason.contains("nested deeper than 64 levels, line 2"),
        "{reason}"
    );
    // 64 levels are read: each level's plan, the deepest test, each parent's line.
    let mut text = String::new();
    for depth in 0..=64 {
        text.push_str(&format!("{}1..1\n", "    ".repeat(depth)));
    }
    for depth in (0..=64).rev() {
        text.push_str(&format!("{}ok 1 - l{depth}\n", "    ".repeat(depth)));
    }
    let reading = read_one(&text).unwrap();
    assert_eq!(counts(&reading), (1, 0, 0), "{:?}", tests(&reading));
    let deepest = &reading.report.cases[0];
    assert!(
        deepest.suite.starts_with("l0 › l1 › l2 › "),
        "{}",
        deepest.suite
    );
    assert_eq!(deepest.name, "l64");
}

#[test]
fn a_100_mb_line_is_never_held() {
    use std::io::Read as _;
    let huge = 100 * 1024 * 1024;
    // A comment (a test's output): cut, and the stream read on.
    let comment = std::io::Cursor::new("1..1\n# ")
        .chain(std::io::repeat(b'x').take(huge))
        .chain(std::io::Cursor::new("\nok 1 - after\n"));
    let (tally, listed) = direct(comment).unwrap();
    assert_eq!((tally.passed, tally.failed, listed), (1, 0, 1));
    // A test line: cutting it could drop its directive, so it is refused.
    let test = std::io::Cursor::new("1..1\nok 1 - ")
        .chain(std::io::repeat(b'x').take(huge))
        .chain(std::io::Cursor::new(" # SKIP\n"));
    let error = direct(test).unwrap_err();
    assert!(
        error.contains("a test line longer than 1 MiB (line Some(2))"),
        "{error}"
    );
}

#[test]
fn controls_and_terminal_escapes_in_names_are_neutralised() {
    let reading = read_one(
        "1..2\nok 1 - clear \u{1b}[2J\u{7} screen\u{9b}31m\n# Subtest: s\u{1b}]0;title\u{7}\n    1..1\n    not ok 1 - x\u{8}\u{8}y\nnot ok 2 - s\n",
    )
    .unwrap();
    for case in &reading.report.cases {
        for text in [case.suite.as_str(), case.name.as_str()] {
            assert!(!text.chars().any(char::is_control), "{text:?}");
        }
    }
    assert_eq!(reading.report.cases[0].name, "clear  [2J  screen 31m");
    assert_eq!(reading.report.cases[1].suite, "s ]0;title");
}

#[test]
fn a_yaml_block_never_closed_is_unreadable() {
    let reason = unreadable("1..2\nnot ok 1 - a\n  ---\n  message: boom\nok 2 - b\n");
    assert!(
        reason.contains("the YAML block opened at line 3 ends without its `...`, line 5"),
        "{reason}"
    );
    let reason = unreadable("1..1\nnot ok 1 - a\n  ---\n  message: boom\n");
    assert!(
        reason.contains("never closed with `...`, line 3"),
        "{reason}"
    );
    // YAML that does not parse is still the test's output.
    let reading = read_one("1..1\nnot ok 1 - a\n  ---\n  message: [unclosed\n  ...\n").unwrap();
    let output = reading.report.cases[0].output.as_deref().unwrap();
    assert!(output.contains("message: [unclosed"), "{output}");
}

#[test]
fn tap_14_yaml_gives_the_place_and_the_message() {
    let reading = read_one(concat!(
        "TAP version 14\n",
        "1..2\n",
        "not ok 1 - should be equal\n",
        "  ---\n",
        "  message: values differ\n",
        "  at:\n",
        "    file: test/x.js\n",
        "    line: 43\n",
        "  duration_ms: 12.6\n",
        "  ...\n",
        "not ok 2 - elsewhere\n",
        "  ---\n",
        "  error: nope\n",
        "  at: 'Object.<anonymous> (test/y.js:7:3)'\n",
        "  ...\n",
    ))
    .unwrap();
    assert_eq!(message_of(&reading, "should be equal"), "values differ");
    assert_eq!(reading.report.cases[0].duration_ms, Some(13));
    assert_eq!(message_of(&reading, "elsewhere"), "nope");
}

#[test]
fn detection_finds_tap_and_leaves_the_other_formats_alone() {
    for text in [
        "TAP version 13\n1..0\n",
        "1..0 # SKIP\n",
        "ok 1 - a\n1..1\n",
        "not ok 1\n1..1\n",
        "# diag first\n\n1..1\nok 1\n",
        "t/a.t .. \n1..1\nok 1\nok\n",
    ] {
        assert_eq!(read_one(text).unwrap().report.format, "tap", "{text:?}");
    }
    assert_eq!(read_one(SMALL).unwrap().report.format, "junit");
    assert!(unreadable("okay then\n").contains("not a test report"));
    assert!(unreadable("PASS all good").contains("not a test report"));
}

/// A directive's word is looked for in the first four bytes after `#`, which may end
/// inside a character: read as a description, never a panic.
#[test]
fn a_character_across_the_directives_fourth_byte_is_text() {
    let (tally, cases) = direct(std::io::Cursor::new(
        "1..2\nok 1 - a # ɝ€ x\nnot ok 2 - b #Sk€\n",
    ))
    .unwrap();
    assert_eq!(
        (tally.passed, tally.failed, tally.skipped, cases),
        (1, 1, 0, 2)
    );
}

mod property {
    use proptest::prelude::*;

    /// One line a stream might hold, TAP's or not, at some depth.
    fn line() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            Just("TAP version 13".to_owned()),
            Just("TAP version 99".to_owned()),
            "1\\.\\.[0-9]{1,3}( # (SKIP|skip|x)[ a-z]*)?",
            "(not )?ok( [0-9]{1,3})?( - [a-z#\\\\ ]{0,8})?( # (SKIP|TODO|todo|x)[ a-z]*)?",
            "# Subtest(: [a-z]{0,4})?",
            Just("  ---".to_owned()),
            Just("  ...".to_owned()),
            "  (message|error|duration_ms|type|failureType|at|location|stack): [a-z0-9:'/\\[{]{0,10}",
            "Bail out!( [a-z]{0,5})?",
            "# (tests|pass|fail|cancelled) [0-9]{1,2}",
            "(t/a\\.t \\.\\. ?(ok|skipped: x)?|ok|Dubious, test returned 1|Files=1, Tests=[0-9], x|Result: (PASS|FAIL)|All tests successful\\.)",
            "\\PC{0,12}",
            "(not )?ok [0-9] - a #\\PC{0,6}",
        ];
        (0usize..6, line).prop_map(|(indent, line)| format!("{}{line}", "  ".repeat(indent)))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

        /// Any stream, TAP-like or not, is a reading or an error: never a panic.
        #[test]
        fn any_stream_is_read_or_refused(lines in proptest::collection::vec(line(), 0..40)) {
            let text = lines.join("\n");
            let _ = super::direct(std::io::Cursor::new(text.clone()));
            let _ = super::read_one(&text);
        }

        /// Any bytes at all, likewise.
        #[test]
        fn any_bytes_are_read_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = super::direct(std::io::Cursor::new(bytes));
        }
    }
}

/// prove's output that ends before its `Result:` line (prove killed, the file read
/// while it ran) or goes on after it (a second run appended) is not a pass.
#[test]
fn proves_output_without_its_end_or_with_more_after_it_fails() {
    let cut = read_one("t/a.t .. \n1..1\nok 1 - a\nok\n").unwrap();
    assert_eq!(counts(&cut), (1, 1, 0));
    assert_eq!(
        tests(&cut)[1],
        "error  › (the summary): prove's output ends before its `Result:` line: prove did not finish"
    );
    let skipped_only = read_one("t/empty.t .. skipped: nothing to do\n").unwrap();
    assert_eq!(counts(&skipped_only).1, 1);
    let appended = read_one("t/a.t .. \n1..1\nok 1 - a\nok\nAll tests successful.\nFiles=1, Tests=1,  0 wallclock secs\nResult: PASS\nt/a.t .. \n1..1\nnot ok 1 - a\n").unwrap();
    assert_eq!(counts(&appended).1, 1);
    assert!(
        tests(&appended)[1].contains("goes on after its `Result:` line"),
        "{:?}",
        tests(&appended)
    );
    let whole = read_one("t/a.t .. \n1..1\nok 1 - a\nok\nAll tests successful.\nFiles=1, Tests=1,  0 wallclock secs\nResult: PASS\n").unwrap();
    assert_eq!(counts(&whole), (1, 0, 0));
}
