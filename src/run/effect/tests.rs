use super::*;

fn counts(text: &str) -> (u64, u64, u64, String) {
    let a = assess_text(Gate::Test, text);
    let c = a
        .test_counts
        .clone()
        .unwrap_or_else(|| panic!("no counts in {text:?}: {a:?}"));
    (c.passed, c.failed, c.skipped, c.runner)
}

#[test]
fn libtest_lines_are_summed_and_indented_reprints_ignored() {
    let log = "running 3 tests\ntest result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.1s\n    test result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
    assert_eq!(counts(log), (3, 1, 1, "libtest".into()));
}

#[test]
fn ansi_escapes_are_removed_first() {
    let log = "\u{1b}[1m\u{1b}[32mtest result: ok\u{1b}[0m\u{1b}(B. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
    // The line starts with an escape: only after stripping does it start with `test result`.
    assert_eq!(counts(log), (4, 0, 0, "libtest".into()));
}

#[test]
fn zero_tests_is_ineffective_with_the_reason() {
    let a = assess_text(
        Gate::Test,
        "running 0 tests\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
    );
    assert_eq!(a.gate_effective, Some(false));
    assert_eq!(a.tests_executed, Some(0));
    assert_eq!(
        a.ineffective_reason.as_deref(),
        Some("0 tests executed (libtest)")
    );
}

#[test]
fn nothing_recognised() {
    let a = assess_text(Gate::Test, "all good\n");
    assert_eq!(a.gate_effective, Some(false));
    assert_eq!(
        a.ineffective_reason.as_deref(),
        Some("no test summary recognised")
    );
    assert_eq!(a.tests_executed, None);
}

#[test]
fn other_gates_only_look_for_no_op_markers() {
    assert_eq!(
        assess_text(Gate::Build, "compiled\n").gate_effective,
        Some(true)
    );
    let a = assess_text(Gate::Build, "> Task :compileJava UP-TO-DATE\n");
    assert_eq!(a.gate_effective, Some(false));
    assert!(a.ineffective_reason.unwrap().contains("UP-TO-DATE"));
    // A test gate does not mind compilation being up to date, only the test task.
    let a = assess_text(
        Gate::Test,
        "> Task :compileJava UP-TO-DATE\n> Task :test\n5 tests completed, 1 failed\n",
    );
    assert_eq!(a.gate_effective, Some(true));
}

#[test]
fn lines_are_cut_and_the_last_needs_no_newline() {
    let text = format!("short\n{}\nend", "x".repeat(MAX_LINE * 3));
    // Lines cut across buffers, and whole in one (read where they are).
    for capacity in [1000, MAX_LINE * 4] {
        let mut seen = Vec::new();
        for_each_line(
            std::io::BufReader::with_capacity(capacity, text.as_bytes()),
            |_| 0,
            None,
            |l, _| seen.push(l.len()),
        );
        assert_eq!(seen, [5, MAX_LINE, 3], "{capacity}");
    }
}

/// Lines no parser reads are passed over whole, in one search of the buffer; a line
/// that holds a trigger word, or begins as `go test -json`'s events do, is read, even
/// cut across two reads.
#[test]
fn lines_nobody_reads_are_passed_over_whole() {
    let text = "noise\nmore noise\ntest result: ok. 1 passed\nquiet\n{\"Action\":\"pass\"}\ntail";
    for capacity in [1, 3, 8, 1000] {
        let mut seen = Vec::new();
        for_each_line(
            std::io::BufReader::with_capacity(capacity, text.as_bytes()),
            unread_lines,
            Some(&TRIGGER),
            |l, _| seen.push(String::from_utf8_lossy(l).into_owned()),
        );
        assert!(
            seen.contains(&"test result: ok. 1 passed".to_owned())
                && seen.contains(&"{\"Action\":\"pass\"}".to_owned()),
            "{capacity}: {seen:?}"
        );
        if capacity == 1000 {
            assert_eq!(
                seen,
                ["test result: ok. 1 passed", "{\"Action\":\"pass\"}", "tail"]
            );
        }
    }
    // A `go test -json` event is read wherever its action is; a line that only begins
    // as one is not.
    assert_eq!(
        unread_lines(b"a\n{\"Time\":\"t\",\"Action\":\"pass\"}\n"),
        2
    );
    assert_eq!(unread_lines(b"{\"Action\":\"run\"}\n"), 0);
    assert_eq!(unread_lines(b"{\"Action\"}\n"), 11);
    assert_eq!(unread_lines(b"a\nb\n=== RUN x\n"), 4);
    assert_eq!(unread_lines(b"a\nb\nc"), 4);
    // `go test`'s package lines are read where `ok` begins them, not where it is a
    // word of another line.
    assert_eq!(unread_lines(b"a\nok  \texample.com/calc\t0.1s\n"), 2);
    assert_eq!(unread_lines(b"ok  \texample.com/calc\t0.1s\n"), 0);
    let others = b"test parse ... ok (0.01s)\nall ok\there\n";
    assert_eq!(unread_lines(others), others.len());
}

/// A word across the end of a window the first word is looked for in (each one begins
/// where the last ended) is found, and so is a line start across it.
#[test]
fn a_word_across_a_window_is_found() {
    for boundary in [4096, 8192, 16384, 32768] {
        // (Nothing after the words is a word: the line is found by them or not at all.)
        for word in ["test result: zz", "\nok  \tzz"] {
            for at in boundary - 30..boundary + 2 {
                // Lines of noise, the last one ending where the word is to begin.
                let mut log = String::new();
                while log.len() + 80 < at {
                    log.push_str(&"n".repeat(79));
                    log.push('\n');
                }
                log.push_str(&"n".repeat(at - log.len() - 1));
                log.push('\n');
                let line = log.len();
                let word = word.trim_start_matches('\n');
                log.push_str(word);
                log.push_str("\nnoise after\n");
                log.push_str(&"n".repeat(boundary * 2));
                log.push('\n');
                assert_eq!(unread_lines(log.as_bytes()), line, "{word:?} at {at}");
            }
        }
    }
}

/// A word a line begins with is its parser's there only; the words searched for
/// anywhere are never shorter than four bytes (a shorter one makes the search of
/// every buffer several times slower).
#[test]
fn words_lines_begin_with_count_only_there() {
    let go = |line: &[u8]| {
        let owners = TRIGGER.owners_of(line);
        let i = parsers()
            .iter()
            .position(|p| p.starts().contains(&"ok "))
            .unwrap();
        owners & (1 << i) != 0
    };
    assert!(go(b"ok  \texample.com/calc\t0.1s"));
    assert!(go(b"ok\texample.com/calc\t(cached)"));
    assert!(!go(b"test parse ... ok (0.01s)"));
    let a = assess_text(
        Gate::Test,
        "test parse ... ok (0.01s)\nok  \texample.com/calc\t0.1s\n",
    );
    assert_eq!(a.packages.as_deref(), Some("1 package passed"));
    // A package from the cache is a no-op however its line is dressed.
    let log = b"\x1b[32mok\x1b[0m  \texample.com/calc\t(cached)\n";
    let a = assess_reader(Gate::Test, &log[..]);
    assert!(a.noop, "{a:?}");
    for parser in parsers() {
        for start in parser.starts().iter().chain(parser.raw_starts()) {
            assert!(start.len() >= 2, "{start:?}");
        }
    }
    // Every word of the search for the next line read is four bytes or more (a line's
    // start counts its line end), as the search is built.
    let words = gate_words(&parsers(), &TRIGGER.line_starts);
    assert!(words.len() > 40, "{words:?}");
    for word in &words {
        assert!(word.len() >= 4, "{word:?}");
    }
    // Both searches are vectorised, and each takes 64 words at most: the search for the
    // next line read, and the search for where the next word begins (for their first
    // four bytes).
    assert!(words.len() <= 64 && TRIGGER.lines.is_some(), "{words:?}");
    let words: Vec<&str> = TRIGGER.by_first.iter().flatten().map(|(w, _)| *w).collect();
    assert!(word_prefixes(&words).len() <= 64, "{words:?}");
    assert!(TRIGGER.next_word.is_some());
}

#[test]
fn a_summary_after_an_endless_line_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let log = format!(
        "{}\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
        "\0".repeat(MAX_LINE * 4)
    );
    std::fs::write(&path, log).unwrap();
    let a = assess_file(Gate::Test, &path);
    assert_eq!(a.tests_executed, Some(2));
}

/// Every captured runner log (`fixtures/runner-logs/<runner>/*.log`).
fn runner_logs() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/runner-logs");
    let mut logs = Vec::new();
    for runner in std::fs::read_dir(&root).unwrap() {
        let runner = runner.unwrap().path();
        if runner.is_dir() {
            for entry in std::fs::read_dir(&runner).unwrap() {
                let log = entry.unwrap().path();
                if log.extension().is_some_and(|e| e == "log") {
                    logs.push(log);
                }
            }
        }
    }
    logs
}

/// Asserts that `bytes` read through the trigger (in buffers of a few bytes, passing
/// over the lines nobody reads) give the assessment every line offered to every
/// parser gives.
fn assert_triggered_reads_as_every_line(bytes: &[u8], what: &str) {
    let read = |untriggered: bool, capacity: usize| {
        let mut scan = Scan::new(Gate::Test);
        scan.untriggered = untriggered;
        let reader = std::io::BufReader::with_capacity(capacity, bytes);
        let unread = if untriggered {
            |_: &[u8]| 0
        } else {
            unread_lines
        };
        for_each_line(reader, unread, Some(&TRIGGER), |line, words| {
            scan.raw_line(line, words)
        });
        scan.finish()
    };
    let every = read(true, 64 * 1024);
    for capacity in [5, 64, 64 * 1024] {
        assert_eq!(read(false, capacity), every, "{what} ({capacity})");
    }
}

/// The trigger, made from the parsers' words, never skips a line a parser reads:
/// every runner log gives the same assessment with every line offered.
#[test]
fn the_trigger_skips_no_line_a_parser_reads() {
    let mut checked = 0;
    for log in runner_logs() {
        let bytes = std::fs::read(&log).unwrap();
        assert_triggered_reads_as_every_line(&bytes, &log.display().to_string());
        checked += 1;
    }
    assert!(checked >= 39, "only {checked} logs");
}

/// Lines dressed as no runner prints them, but as colouring tools and Maven do: an
/// escape inside a trigger word, before a line's `ok`, or Maven's level in front. The
/// parsers read a line without its escapes and its level, and so does the trigger.
#[test]
fn a_dressed_line_is_offered_as_it_is_read() {
    let logs: &[&[u8]] = &[
        // A node count with an escape inside its words, beside a go package.
        b"ok  \texample.com/a\t0.123s\n# \x1b[0mtests 0\n",
        b"ok  \texample.com/a\t0.123s\n\xe2\x84\xb9 \x1b[1mtests 0\n",
        b"FAIL\texample.com/a\t0.2s\n# pass\x1b[0m 0\n",
        b"# tests 5\n# pass 2\n# \x1b[31mfail\x1b[0m 3\n",
        // A package from the cache, `(cached)` cut by an escape.
        b"\x1b[32mok  \texample.com/a\t(\x1b[2mcached\x1b[0m)\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
        b"[INFO] ok  \texample.com/a\t(\x1b[2mcached\x1b[0m)\nok  \texample.com/c\t0.5s\n",
        // `ok` behind an escape or Maven's level.
        b"\x1b[32mok  \texample.com/a\t0.1s\x1b[0m\n",
        b"\x1b(Bok  \texample.com/a\t0.1s\r\n",
        b"[INFO] ok  \texample.com/a\t0.1s\n",
        b"[WARNING] ok\texample.com/a\t(cached)\n",
        b"\x1b[32mok\x1b[0m  \texample.com/a\t0.3s\r\x1b[32mok\x1b[0m  \texample.com/b\t(cached)\n",
    ];
    for log in logs {
        // Alone, and after enough lines to be past the first buffers.
        let mut long = b"noise\n".repeat(20_000);
        long.extend_from_slice(log);
        for bytes in [log.to_vec(), long] {
            assert_triggered_reads_as_every_line(&bytes, &String::from_utf8_lossy(log));
        }
    }
    // Counts' lines of other runners, and pytest's with only warnings: a parser
    // reads only lines with its own words.
    for log in [
        &b"1 warning in 0.01s\n"[..],
        b"ok  \texample.com/a\t0.1s\n=== 1 warning in 0.01s ===\n",
        b"3 passing in 1s\n",
        b"4 tests, 0 failures in 0.1s\n",
        b"=== 5 de\x1bselected in 0.1s ===\n",
        b"5 d in 1s",
    ] {
        assert_triggered_reads_as_every_line(log, &String::from_utf8_lossy(log));
    }
    let a = assess_reader(
        Gate::Test,
        &b"ok  \texample.com/a\t0.1s\n=== 1 warning in 0.01s ===\n"[..],
    );
    assert_eq!(
        a.ineffective_reason.as_deref(),
        Some("0 tests executed (pytest)"),
        "{a:?}"
    );
    // What the dressed lines say is read.
    let a = assess_reader(Gate::Test, logs[0]);
    assert_eq!(a.tests_executed, Some(0), "{a:?}");
    let a = assess_reader(Gate::Test, logs[4]);
    assert!(a.noop, "{a:?}");
    let a = assess_reader(Gate::Test, logs[8]);
    assert_eq!(a.packages.as_deref(), Some("1 package passed"), "{a:?}");
}

/// The scan beside the write reads the blocks the log gets, cut anywhere (inside a
/// line, a UTF-8 character or an escape): every runner log gives the assessment its
/// file gives.
#[test]
fn the_blocks_a_log_gets_read_as_the_log_is() {
    let mut checked = 0;
    for log in runner_logs() {
        let from_file = assess_file(Gate::Test, &log);
        let bytes = std::fs::read(&log).unwrap();
        for size in [1, 7, 300, 256 * 1024] {
            let (sender, receiver) = std::sync::mpsc::sync_channel(2);
            let blocks: Vec<Vec<u8>> = bytes.chunks(size).map(<[u8]>::to_vec).collect();
            let writer = std::thread::spawn(move || {
                for block in blocks {
                    sender.send(block).unwrap();
                }
            });
            let beside = assess_reader(Gate::Test, BlockReader::new(receiver));
            writer.join().unwrap();
            assert_eq!(beside, from_file, "{} ({size})", log.display());
        }
        checked += 1;
    }
    assert!(checked >= 39, "only {checked} logs");
}

#[test]
fn count_items_reads_lists() {
    assert_eq!(
        count_items("1 failed | 1 passed | 1 skipped | 1 todo (4)"),
        vec![
            (1, "failed".into()),
            (1, "passed".into()),
            (1, "skipped".into()),
            (1, "todo".into())
        ]
    );
}

/// Pieces of log text made of the trigger words: each word, its halves, escapes (whole
/// and cut), bytes that are not UTF-8 (a character's first byte, one going on with
/// one), and what lines are made of besides.
fn word_pieces() -> Vec<Vec<u8>> {
    let mut pieces: Vec<Vec<u8>> = [
        &b"\n"[..],
        b" ",
        b"x",
        b"-",
        b"\r\n",
        "é".as_bytes(),
        "ℹ".as_bytes(),
        b"\xff",
        b"\x80",
        b"\x1b[32m",
        b"\x1b[0m",
        b"\x1b[1;3",
        b"\x1b[",
        b"\x1b(",
        b"\x1b)",
        b"\x1b",
    ]
    .map(<[u8]>::to_vec)
    .to_vec();
    for word in TRIGGER
        .by_first
        .iter()
        .flatten()
        .map(|(word, _)| word.as_bytes())
    {
        let half = word.len() / 2;
        pieces.extend([word.to_vec(), word[..half].to_vec(), word[half..].to_vec()]);
    }
    pieces
}

/// What [`for_each_line`] said of a line's words, owned.
#[derive(Debug)]
enum Known {
    Unknown,
    Held(u32),
    Stripped(String, u32),
}

proptest::proptest! {
    /// The words a line read where it is in the buffer is said to hold (found by the
    /// search for the next word, kept from line to line) are those a walk of its bytes
    /// finds; a line with escapes comes without them, as the scan strips it, with the
    /// words a walk of that finds. In buffers of any size, and with the lines nobody
    /// reads passed over.
    #[test]
    fn the_words_found_ahead_are_the_words_walked(
        picks in proptest::collection::vec(0..10_000usize, 0..300),
        capacity in proptest::sample::select(vec![5usize, 40, 300, 64 * 1024]),
        passing in proptest::bool::ANY,
        (newlines, escapes) in (0..4usize, 0..4usize),
    ) {
        // Line ends and escapes as often as the case asks: long lines or short ones,
        // coloured runs of them or none.
        let mut pieces = word_pieces();
        let words = pieces.len();
        pieces.extend(std::iter::repeat_n(b"\n".to_vec(), words * newlines / 4));
        pieces.extend(std::iter::repeat_n(b"\x1b[1m".to_vec(), words * escapes / 4));
        let text: Vec<u8> = picks.iter().flat_map(|&i| pieces[i % pieces.len()].clone()).collect();
        let reader = std::io::BufReader::with_capacity(capacity, &text[..]);
        let unread = |buf: &[u8]| if passing { unread_lines(buf) } else { 0 };
        let mut lines = Vec::new();
        for_each_line(reader, unread, Some(&TRIGGER), |line, words| {
            let known = match words {
                Words::Unknown => Known::Unknown,
                Words::Held(bits) => Known::Held(bits),
                Words::Stripped(text, bits) => Known::Stripped(text.to_owned(), bits),
            };
            lines.push((line.to_vec(), known));
        });
        for (line, known) in &lines {
            let shown = String::from_utf8_lossy(line);
            // A line looked at on its own (as one without its escapes is) too.
            let mut alone = shown.clone().into_owned();
            proptest::prop_assert_eq!(TRIGGER.words_padded(&mut alone), TRIGGER.words_of(line));
            proptest::prop_assert_eq!(&alone, &shown);
            match known {
                Known::Unknown => {}
                Known::Held(bits) => {
                    proptest::prop_assert!(!line.contains(&ESCAPE), "{:?}", shown);
                    proptest::prop_assert_eq!(*bits, TRIGGER.words_of(line), "{:?}", shown);
                }
                Known::Stripped(stripped, bits) => {
                    proptest::prop_assert!(line.contains(&ESCAPE), "{:?}", shown);
                    proptest::prop_assert_eq!(stripped, &strip_ansi(&shown), "{:?}", shown);
                    proptest::prop_assert_eq!(
                        *bits,
                        TRIGGER.words_of(stripped.as_bytes()),
                        "{:?}",
                        shown
                    );
                }
            }
        }
        // Where every line is in one buffer, each ended one is read where it is.
        if capacity == 64 * 1024 && !passing {
            let ended = lines.len() - usize::from(!text.is_empty() && !text.ends_with(b"\n"));
            proptest::prop_assert!(
                lines[..ended].iter().all(|(_, known)| !matches!(known, Known::Unknown))
            );
        }
    }
}

/// What a search for the next word found is used for the lines after where it began
/// only, and for a line past where it ended only when it found a word before that.
#[test]
fn a_search_ahead_is_used_only_where_it_looked() {
    let search = TRIGGER.next_word.as_ref().unwrap();
    let buf = b"error 1\nx\nmore error\n";
    let mut ahead = Ahead::default();
    // From the second line: nothing there, nor from there on in the first 10 bytes.
    assert_eq!(
        TRIGGER.next_word_from(search, &buf[..10], 8, 9, 0, &mut ahead),
        None
    );
    // Behind it, the first line's word is found.
    assert_eq!(
        TRIGGER.next_word_from(search, buf, 0, 7, 0, &mut ahead),
        Some(0)
    );
    // Past where a search ended without a word, the buffer is searched again.
    let mut ahead = Ahead::default();
    assert_eq!(
        TRIGGER.next_word_from(search, &buf[..10], 8, 9, 0, &mut ahead),
        None
    );
    assert_eq!(
        TRIGGER.next_word_from(search, buf, 10, 20, 0, &mut ahead),
        Some(15)
    );
}

/// A search of whole words that stopped short of a line end could see a word whole
/// inside a longer one it cuts (`skipped` inside `# skipped `), and pass the longer one
/// over in the line after; the search stops at a line end. (The search now looks for
/// every word's first four bytes, and no four bytes beginning after a cut's four end
/// before it: this case holds either way, and is kept for the line end.)
#[test]
fn a_search_ahead_stops_at_a_line_end() {
    // The search from the first line would stop `LOOK_AHEAD` bytes past its end: where
    // `skipped` has ended and `# skipped ` has not.
    let line = b"x# skipped 3";
    let mut text = b"error\n".to_vec();
    let filler = LOOK_AHEAD + 5 - 9 - 1 - text.len();
    text.extend(std::iter::repeat_n(b'a', filler - 1));
    text.push(b'\n');
    text.extend_from_slice(line);
    text.push(b'\n');
    assert_eq!(&text[5 + LOOK_AHEAD - 9..][..10], b"# skipped ");
    let mut last = None;
    for_each_line(
        &text[..],
        |_| 0,
        Some(&TRIGGER),
        |l, words| {
            if let Words::Held(bits) = words {
                last = Some((l.to_vec(), bits));
            }
        },
    );
    let (l, bits) = last.unwrap();
    assert_eq!(l, line);
    assert_eq!(bits, TRIGGER.words_of(line));
    assert_eq!(bits.count_ones(), 2, "{bits:b}");
}

/// A run of coloured lines holds at most `STRIPPED_LINES` lines, or about
/// `STRIPPED_RUN` bytes of text (its last line may go past them), however many follow
/// in the buffer: the scan's memory stays flat over a log of nothing but escapes. Its
/// lines after are read as their own run, each in its place.
#[test]
fn a_coloured_run_is_capped() {
    let short = b"\x1b[1mok\x1b[0m\n".repeat(STRIPPED_LINES + 10);
    let wide = format!("\x1b[1m{}\x1b[0m\n", "x".repeat(1000)).repeat(300);
    for (buf, lines, line_len) in [(short, STRIPPED_LINES, 2), (wide.into_bytes(), 262, 1000)] {
        let mut run = StrippedRun::default();
        run.fill(&buf, 0, &TRIGGER);
        assert_eq!(run.lines.len(), lines);
        assert!(run.text.len() <= STRIPPED_RUN + line_len + 1);
        let last = run.lines[lines - 1];
        assert_eq!(last.to - last.from, line_len);
        // The line after the run is not in it; a run from there holds it first.
        let next = last.at + last.len as u64 + 1;
        assert_eq!(run.seek(next), None);
        run.fill(&buf[next as usize..], next, &TRIGGER);
        assert_eq!(run.seek(next), Some(line_len + 8));
    }
}
