//! `go test`, in its three forms: `-json` events (exact per-test counts), `-v` (`=== RUN`
//! and `--- PASS/FAIL/SKIP` lines), and plain (packages only: `ok`, `FAIL`, `(cached)`,
//! which makes the gate a no-op).

use super::{Findings, Parser, Raw, Tally, one_line};

re!(GO_PACKAGE, r"^(ok|FAIL)\s+\S+\s+(\(cached\)|[\d.]+s)(.*)$");

/// One event of `go test -json` (test2json), the fields counted here.
#[derive(serde::Deserialize)]
struct GoEvent {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Test")]
    test: Option<String>,
    #[serde(rename = "Output")]
    output: Option<String>,
}

#[derive(Default)]
pub(super) struct Go {
    verbose: Tally,
    verbose_seen: bool,
    /// A `=== RUN` line: `go test -v`, whose `--- PASS/FAIL/SKIP` lines count every
    /// test. Without it only failures print `--- FAIL`, which count nothing.
    run_seen: bool,
    packages: Tally,
    packages_seen: bool,
    /// Per-test events of `go test -json`: exact counts.
    json: Tally,
    json_seen: bool,
}

impl Parser for Go {
    fn triggers(&self) -> &'static [&'static str] {
        &["--- ", "FAIL"]
    }

    /// `ok` is in many lines of other runners' logs (`test parse ... ok (0.01s)`): a
    /// package's line is the one that begins with it, as `go test` prints it.
    fn starts(&self) -> &'static [&'static str] {
        &["ok ", "ok\t"]
    }

    fn raw_starts(&self) -> &'static [&'static str] {
        &["=== RUN"]
    }

    /// An event's line begins with `{"`, too short to be searched for; every event
    /// this reads holds its action.
    fn raw_words(&self) -> &'static [&'static str] {
        &["\"Action\":\""]
    }

    fn raw(&mut self, raw: &[u8]) -> Raw {
        if raw.starts_with(b"{\"")
            && raw.windows(10).any(|w| w == b"\"Action\":\"")
            && let Ok(event) = serde_json::from_slice::<GoEvent>(raw)
        {
            self.json_seen = true;
            return match (event.action.as_str(), &event.test) {
                ("pass", Some(_)) => {
                    self.json.passed += 1;
                    Raw::Taken
                }
                ("fail", Some(_)) => {
                    self.json.failed += 1;
                    Raw::Taken
                }
                ("skip", Some(_)) => {
                    self.json.skipped += 1;
                    Raw::Taken
                }
                // A package's own line (`ok … (cached)`, `[no tests to run]`) is read as
                // in a plain log; its counts give way to the events' in `finish`.
                ("output", None) => event.output.map_or(Raw::Taken, Raw::Text),
                _ => Raw::Taken,
            };
        }
        if raw.starts_with(b"=== RUN") {
            self.run_seen = true;
            return Raw::Taken;
        }
        Raw::Pass
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if let Some(outcome) = case_outcome(line) {
            self.verbose_seen = true;
            match outcome {
                "PASS" => self.verbose.passed += 1,
                "FAIL" => self.verbose.failed += 1,
                _ => self.verbose.skipped += 1,
            }
            return true;
        }
        if !(line.starts_with("ok ") || line.starts_with("ok\t") || line.starts_with("FAIL")) {
            return false;
        }
        let Some(c) = GO_PACKAGE.captures(line) else {
            return false;
        };
        self.packages_seen = true;
        if &c[2] == "(cached)" && found.noop.is_none() {
            found.noop = Some(format!(
                "`{}`: result from the go test cache",
                one_line(line)
            ));
        }
        if !c[3].contains("[no tests to run]") {
            if &c[1] == "ok" {
                self.packages.passed += 1;
            } else {
                self.packages.failed += 1;
            }
        }
        true
    }

    fn finish(&mut self, found: &mut Findings) {
        if self.json_seen {
            let t = self.json;
            found.add("go test -json", t.passed, t.failed, t.skipped);
        } else if self.verbose_seen && self.run_seen {
            let t = self.verbose;
            found.add("go test", t.passed, t.failed, t.skipped);
        } else if self.packages_seen {
            // Without -v or -json only packages are known (a failing one also prints its
            // failed tests, a passing one nothing): packages, not tests, are counted.
            let t = self.packages;
            if t.passed + t.failed > 0 {
                found.packages = Some(format!(
                    "{} package{} passed{}",
                    t.passed,
                    if t.passed == 1 { "" } else { "s" },
                    if t.failed > 0 {
                        format!(", {} failed", t.failed)
                    } else {
                        String::new()
                    }
                ));
            }
        }
    }
}

/// `PASS`, `FAIL` or `SKIP` of a `go test -v` case's line (`    --- PASS: TestX (0.00s)`,
/// indented for subtests): `^\s*--- (PASS|FAIL|SKIP): `, read without a regular
/// expression (in a verbose log every line is one of these).
fn case_outcome(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("--- ")?;
    let outcome = rest.get(..4)?;
    (matches!(outcome, "PASS" | "FAIL" | "SKIP") && rest[4..].starts_with(": ")).then_some(outcome)
}

#[cfg(test)]
mod tests {
    use super::case_outcome;

    /// The reading is the expression's, `^\s*--- (PASS|FAIL|SKIP): `.
    #[test]
    fn a_case_line_is_read_as_the_expression_reads_it() {
        let expression = regex::Regex::new(r"^\s*--- (PASS|FAIL|SKIP): ").unwrap();
        for line in [
            "--- PASS: TestAdd (0.00s)",
            "    --- FAIL: TestAdd/neg (0.01s)",
            "\t\u{a0}\u{2003}--- SKIP: TestX (0.00s)",
            "--- PASS:TestAdd",
            "--- PASSED: TestAdd",
            "--- pass: TestAdd",
            "x --- PASS: TestAdd",
            "--- PAS",
            "--- PAS\u{e9}: x",
            "---  PASS: TestAdd",
            "--- PASS: ",
            "",
        ] {
            let expected = expression.captures(line).map(|c| c.get(1).unwrap().as_str());
            assert_eq!(case_outcome(line), expected, "{line:?}");
        }
    }
}

