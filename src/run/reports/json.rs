//! A report that is one JSON document: told apart by its top-level keys, read in one
//! pass. CTRF (`results`), Jest's and Vitest's `--json` (`testResults`), Mocha's
//! `--reporter json` (`stats` with `passes`, `failures`, `pending`), RSpec's
//! `--format json` (`examples`) and Playwright's `--reporter=json` (`suites`). A
//! document with none of these is no known report.

use std::fmt;
use std::io::BufRead;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{Collector, Format, ReadError, ctrf, jest, mocha, playwright, rspec};
use crate::results::TestOutcome;

/// The tests one format's lists gave: how many, how many failed, (Jest, Vitest) how
/// many test files failed, and (Playwright) how many passed, were flaky or skipped.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Listed {
    pub tests: u64,
    pub failed: u64,
    pub files_failed: u64,
    /// Playwright's other outcomes, held to its `stats` one by one.
    pub passed: u64,
    pub flaky: u64,
    pub skipped: u64,
}

/// The document's small values, kept to the end: the formats' totals and summaries.
#[derive(Default)]
pub(super) struct Totals {
    // Jest and Vitest.
    pub num_total_tests: Option<u64>,
    pub num_failed_tests: Option<u64>,
    /// Jest only: test files that failed to run.
    pub num_runtime_error_test_suites: Option<u64>,
    /// Whether the run succeeded, by the runner's own word.
    pub success: Option<bool>,
    // Mocha.
    stats: Option<mocha::Stats>,
    /// How many of `passes`, `failures` and `pending` were there.
    mocha_lists: usize,
    /// The tests of Mocha's `tests` list that carry an error.
    mocha_errors: u64,
    // RSpec.
    summary: Option<rspec::Summary>,
    /// What went wrong outside the examples (a file that failed to load).
    messages: Vec<String>,
    // CTRF.
    ctrf_summary: Option<ctrf::Summary>,
    ctrf_tests: bool,
    // Playwright.
    playwright_stats: Option<playwright::Stats>,
    playwright_errors: Vec<playwright::Error>,
    /// Whether Playwright's `suites` were there (its `stats` alone mark the format).
    playwright_suites: bool,
}

/// Each format's keys: those a document of that format has and no other format's has
/// (Mocha's `stats` are told from Playwright's by what they count).
const KEYS: [(&str, &str, Format); 5] = [
    ("`results`", "CTRF", Format::Ctrf),
    ("`testResults`", "Jest, Vitest", Format::JestJson),
    (
        "`stats`, `passes`, `failures`, `pending` or `tests`",
        "Mocha",
        Format::MochaJson,
    ),
    ("`examples`", "RSpec", Format::RspecJson),
    ("`suites`", "Playwright", Format::PlaywrightJson),
];

/// Reads a JSON report into `sink`, in the format `forced` names, else in the one its
/// keys show; the format it was. A document with the keys of two formats is refused
/// unless the format is named: which one the runner meant cannot be told.
///
/// The document is read in one pass and its tests handed to `sink` one by one as they
/// come: a report of a million tests is never held whole.
pub(super) fn read(
    source: impl BufRead,
    forced: Option<Format>,
    sink: &mut Collector<'_>,
) -> Result<Format, ReadError> {
    let mut document = Document {
        sink,
        forced: forced.map(family),
        present: [false; 5],
        listed: Listed::default(),
        totals: Totals::default(),
    };
    let mut reader = serde_json::Deserializer::from_reader(source);
    (&mut document)
        .deserialize(&mut reader)
        .and_then(|()| reader.end())
        .map_err(|e| {
            ReadError::at_line(
                format!("not a JSON test report: {}", strip_position(&e.to_string())),
                e.line() as u64,
            )
        })?;
    document.finish(forced)
}

/// Jest and Vitest write one shape: one family.
fn family(format: Format) -> Format {
    match format {
        Format::VitestJson => Format::JestJson,
        other => other,
    }
}

/// A document being read, and what it gave so far.
struct Document<'s, 'l> {
    sink: &'s mut Collector<'l>,
    /// The format named: the other formats' lists are passed over.
    forced: Option<Format>,
    /// Which of [`KEYS`] it has.
    present: [bool; 5],
    listed: Listed,
    totals: Totals,
}

impl Document<'_, '_> {
    /// Whether the lists of `format` are read.
    fn reads(&self, format: Format) -> bool {
        self.forced.is_none_or(|f| f == format)
    }

    /// The document ended: the format its keys show, and that format's totals.
    fn finish(self, forced: Option<Format>) -> Result<Format, ReadError> {
        let found: Vec<_> = KEYS
            .iter()
            .zip(self.present)
            .filter_map(|(key, present)| present.then_some(key))
            .collect();
        let format = match (forced, found.as_slice()) {
            (Some(format), _) => format,
            (None, [(_, _, format)]) => *format,
            (None, []) => {
                return Err(ReadError::new(
                    "a JSON document that is no known test report: it has no `results` (CTRF), `testResults` (Jest, Vitest), `stats` (Mocha), `examples` (RSpec) or `suites` (Playwright)",
                ));
            }
            (None, several) => {
                let named: Vec<String> = several
                    .iter()
                    .map(|(key, who, _)| format!("{key} ({who})"))
                    .collect();
                return Err(ReadError::new(format!(
                    "a JSON document with the keys of more than one report format: {}; name its format (`reports: {{ path, format }}`)",
                    named.join(" and ")
                )));
            }
        };
        let missing = |key: &str| {
            ReadError::new(format!(
                "not a {format} report: the document has no `{key}`"
            ))
        };
        let has = |format: Format| {
            KEYS.iter()
                .zip(self.present)
                .any(|((_, _, f), present)| *f == format && present)
        };
        let (sink, listed, totals) = (self.sink, &self.listed, &self.totals);
        match format {
            Format::Ctrf => {
                if !has(Format::Ctrf) {
                    return Err(missing("results"));
                }
                if !totals.ctrf_tests {
                    return Err(missing("results.tests"));
                }
                ctrf::finish(totals.ctrf_summary.as_ref(), listed, sink);
                Ok(Format::Ctrf)
            }
            Format::JestJson | Format::VitestJson => {
                if !has(Format::JestJson) {
                    return Err(missing("testResults"));
                }
                let told = jest::finish(totals, listed, sink);
                Ok(forced.unwrap_or(told))
            }
            Format::MochaJson => {
                let Some(stats) = &totals.stats else {
                    return Err(missing("stats"));
                };
                mocha::finish(stats, totals.mocha_lists, totals.mocha_errors, listed, sink)?;
                Ok(Format::MochaJson)
            }
            Format::PlaywrightJson => {
                if !totals.playwright_suites {
                    return Err(missing("suites"));
                }
                playwright::finish(
                    totals.playwright_stats.as_ref(),
                    &totals.playwright_errors,
                    listed,
                    sink,
                )?;
                Ok(Format::PlaywrightJson)
            }
            Format::RspecJson => {
                if !has(Format::RspecJson) {
                    return Err(missing("examples"));
                }
                rspec::finish(totals.summary.as_ref(), &totals.messages, listed, sink);
                Ok(Format::RspecJson)
            }
            other => Err(ReadError::new(format!(
                "not a {other} report: the file is one JSON document"
            ))),
        }
    }

    /// The list under the key just read, which marks `format` as present: each item
    /// handed to `add` as it is read when `format`'s lists are read, else passed over
    /// unread.
    fn list<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
        &mut self,
        map: &mut A,
        format: Format,
        mut add: impl FnMut(T, &mut Collector<'_>, &mut Listed) -> Result<(), String>,
    ) -> Result<(), A::Error> {
        self.mark(format);
        if !self.reads(format) {
            map.next_value::<IgnoredAny>()?;
            return Ok(());
        }
        let (sink, listed) = (&mut *self.sink, &mut self.listed);
        map.next_value_seed(Each(|item: T| add(item, sink, listed), PhantomData))
    }

    /// Marks `format`'s key as present.
    fn mark(&mut self, format: Format) {
        if let Some(at) = KEYS.iter().position(|(_, _, f)| *f == format) {
            self.present[at] = true;
        }
    }
}

impl<'de> DeserializeSeed<'de> for &mut Document<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut Document<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // A key given twice (two lists of tests, two totals) is refused: which of the
        // two counts cannot be told.
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("`{key}` is given twice")));
            }
            match key.as_str() {
                "results" => {
                    self.mark(Format::Ctrf);
                    if self.reads(Format::Ctrf) {
                        map.next_value_seed(CtrfResults(&mut *self))?;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                "testResults" => {
                    self.list(
                        &mut map,
                        Format::JestJson,
                        |file: jest::FileResult, sink, listed| {
                            jest::add_file(&file, sink, listed);
                            Ok(())
                        },
                    )?;
                }
                "stats" => {
                    // Mocha's (`tests`, `passes`, …) or Playwright's (`expected`,
                    // `unexpected`, …): told by the keys they count with; with keys of
                    // both, both formats are present and the document is ambiguous.
                    let stats = map.next_value::<Object>()?.0;
                    let has = |keys: &[&str]| keys.iter().any(|k| stats.contains_key(*k));
                    let forced = |format| self.forced == Some(format);
                    let playwrights =
                        has(&["expected", "unexpected", "flaky"]) || forced(Format::PlaywrightJson);
                    let mochas = has(&["passes", "failures", "pending", "tests", "suites"])
                        || !playwrights
                        || forced(Format::MochaJson);
                    let stats = serde_json::Value::Object(stats);
                    if playwrights {
                        self.mark(Format::PlaywrightJson);
                        if self.reads(Format::PlaywrightJson) {
                            self.totals.playwright_stats =
                                Some(playwright::Stats::deserialize(&stats).map_err(|e| {
                                    de::Error::custom(format!("Playwright's `stats`: {e}"))
                                })?);
                        }
                    }
                    if mochas {
                        self.mark(Format::MochaJson);
                        if self.reads(Format::MochaJson) {
                            self.totals.stats =
                                Some(mocha::Stats::deserialize(&stats).map_err(|e| {
                                    de::Error::custom(format!("Mocha's `stats`: {e}"))
                                })?);
                        }
                    }
                }
                "suites" => {
                    self.totals.playwright_suites = true;
                    self.list(
                        &mut map,
                        Format::PlaywrightJson,
                        |suite: playwright::Suite, sink, listed| {
                            playwright::add_suite(&suite, sink, listed)
                        },
                    )?;
                }
                "errors" => {
                    if !self.reads(Format::PlaywrightJson) {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    self.totals.playwright_errors = map
                        .next_value::<Option<Vec<playwright::Error>>>()?
                        .unwrap_or_default();
                }
                list @ ("passes" | "failures" | "pending") => {
                    // Mocha's lists: a document with them is Mocha's (beside another
                    // format's keys, an ambiguous one), read only as Mocha's.
                    self.mark(Format::MochaJson);
                    if !self.reads(Format::MochaJson) {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    let outcome = match list {
                        "passes" => TestOutcome::Passed,
                        "failures" => TestOutcome::Failed,
                        _ => TestOutcome::Skipped,
                    };
                    self.totals.mocha_lists += 1;
                    let (sink, listed) = (&mut *self.sink, &mut self.listed);
                    map.next_value_seed(Each(
                        |test: mocha::Test| {
                            mocha::add(&test, outcome, sink, listed);
                            Ok(())
                        },
                        PhantomData,
                    ))?;
                }
                "tests" => {
                    self.mark(Format::MochaJson);
                    if !self.reads(Format::MochaJson) {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    // Mocha lists every test again here, each with its error: one with an
                    // error is a failure, whatever lists it.
                    let errors = &mut self.totals.mocha_errors;
                    map.next_value_seed(Each(
                        |test: mocha::Test| {
                            *errors += u64::from(test.has_error());
                            Ok(())
                        },
                        PhantomData,
                    ))?;
                }
                "examples" => {
                    self.list(
                        &mut map,
                        Format::RspecJson,
                        |example: rspec::Example, sink, listed| {
                            rspec::add(&example, sink, listed);
                            Ok(())
                        },
                    )?;
                }
                "summary" => self.totals.summary = map.next_value()?,
                "messages" => {
                    self.totals.messages =
                        map.next_value::<Option<Vec<String>>>()?.unwrap_or_default();
                }
                "numTotalTests" => self.totals.num_total_tests = map.next_value()?,
                "numFailedTests" => self.totals.num_failed_tests = map.next_value()?,
                "numRuntimeErrorTestSuites" => {
                    self.totals.num_runtime_error_test_suites = map.next_value()?;
                }
                "success" => self.totals.success = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// CTRF's `results`: its `tests`, read one by one, and its `summary`.
struct CtrfResults<'d, 's, 'l>(&'d mut Document<'s, 'l>);

impl<'de> DeserializeSeed<'de> for CtrfResults<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for CtrfResults<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("CTRF's `results` object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let document = self.0;
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("`results.{key}` is given twice")));
            }
            match key.as_str() {
                "tests" => {
                    if std::mem::replace(&mut document.totals.ctrf_tests, true) {
                        return Err(de::Error::custom("`results.tests` is given twice"));
                    }
                    let (sink, listed) = (&mut *document.sink, &mut document.listed);
                    map.next_value_seed(Each(
                        |test: ctrf::Test| ctrf::add(&test, sink, listed),
                        PhantomData,
                    ))?;
                }
                "summary" => document.totals.ctrf_summary = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A JSON list whose items are each handed to the closure as they are read, never
/// all held at once.
struct Each<T, F>(F, PhantomData<T>);

impl<'de, T: Deserialize<'de>, F: FnMut(T) -> Result<(), String>> DeserializeSeed<'de>
    for Each<T, F>
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de>, F: FnMut(T) -> Result<(), String>> Visitor<'de> for Each<T, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<T>()? {
            (self.0)(item).map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

/// A JSON object whose keys are each given once (serde_json's own map keeps the last of
/// two): a total given twice is refused, as which of the two counts cannot be told.
struct Object(serde_json::Map<String, serde_json::Value>);

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Object, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = Object;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
                let mut object = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value()?;
                    if object.insert(key.clone(), value).is_some() {
                        return Err(de::Error::custom(format!("`{key}` is given twice")));
                    }
                }
                Ok(Object(object))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

/// serde_json's message without its " at line L column C" (the line is said apart).
pub(super) fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |at| &message[..at])
}

/// Duration in milliseconds from a JSON number of `unit_ms` milliseconds each.
pub(super) fn millis(value: Option<f64>, unit_ms: f64) -> Option<u64> {
    value
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| (v * unit_ms).round().min(u64::MAX as f64) as u64)
}
