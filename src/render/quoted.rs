//! The report as renderers see it: every string that came from a check, an artifact or
//! an agent already passed through the [`Quoter`] (secrets masked, claim-shaped text
//! neutralised), and log tails quoted as they are read. Renderers take a [`Quoted`], so
//! none of them can reach the raw text.

use std::ops::Deref;

use super::RenderOptions;
use crate::manifest::is_valid_name;
use crate::results::logs::LogRoot;
use crate::results::schema::ItemResult;
use crate::results::{CheckResult, Report};
use crate::untrusted::Quoter;

/// A report whose free text is quoted.
#[derive(Debug, Clone)]
pub struct Quoted {
    report: Report,
    quoter: Quoter,
    /// The first log folder a tail was read in: its folders looked at once for a
    /// report's many failed checks.
    log_root: std::sync::OnceLock<LogRoot>,
}

impl Deref for Quoted {
    type Target = Report;

    fn deref(&self) -> &Report {
        &self.report
    }
}

impl Quoted {
    /// Quotes every free-text field of a copy of `report`. Check and environment names
    /// are not free text: a manifest or [`Report::invalid_name`] has already checked
    /// them.
    pub fn new(report: &Report, quoter: &Quoter) -> Quoted {
        Quoted::from_report(report.clone(), quoter)
    }

    /// [`Quoted::new`], taking the report (no copy).
    pub fn from_report(mut report: Report, quoter: &Quoter) -> Quoted {
        let q = |text: &mut String| quoter.quote_in_place(text);
        let qo = |text: &mut Option<String>| quoter.quote_option_in_place(text);
        q(&mut report.manifest.path);
        q(&mut report.manifest.digest);
        let source = &mut report.source;
        for field in [
            &mut source.repository,
            &mut source.commit,
            &mut source.run_id,
            &mut source.job,
        ] {
            qo(field);
        }
        // The rows are most of a large report: quoted on every core (a small one here,
        // with no thread started).
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let per_thread = report.rows.len().div_ceil(threads).max(1024);
        if report.rows.len() <= per_thread {
            quote_rows(&mut report.rows, quoter);
        } else {
            std::thread::scope(|scope| {
                for rows in report.rows.chunks_mut(per_thread) {
                    scope.spawn(|| quote_rows(rows, quoter));
                }
            });
        }
        for missing in &mut report.missing {
            q(&mut missing.reason);
        }
        for reason in &mut report.reasons {
            q(reason);
        }
        for item in &mut report.manual {
            q(&mut item.text);
        }
        // A change quotes the manifest's commands, which a pull request writes.
        for change in &mut report.manifest_changes {
            q(&mut change.change);
        }
        for contradiction in &mut report.contradictions {
            q(&mut contradiction.reason);
        }
        // The baseline is another report, read from an artifact like this one.
        if let Some(baseline) = &mut report.baseline {
            qo(&mut baseline.commit);
            qo(&mut baseline.run_id);
            qo(&mut baseline.branch);
            q(&mut baseline.manifest_digest);
            for vanished in &mut baseline.vanished {
                for test in &mut vanished.tests {
                    q(test);
                }
            }
            // Why a failure is new names the failing tests.
            for pair in &mut baseline.new_failures {
                qo(&mut pair.why);
            }
        }
        // Where each environment ran: facts an artifact wrote.
        for place in &mut report.places {
            qo(&mut place.declared);
            qo(&mut place.mismatch);
            qo(&mut place.job);
            for value in place.variables.values_mut() {
                q(value);
            }
            let r = &mut place.runner;
            for field in [&mut r.os, &mut r.arch, &mut r.hostname] {
                q(field);
            }
            for field in [
                &mut r.os_name,
                &mut r.os_version,
                &mut r.kernel,
                &mut r.libc,
                &mut r.container_runtime,
                &mut r.machine,
            ] {
                qo(field);
            }
            if let Some(a) = &mut r.actions {
                for field in [
                    &mut a.os,
                    &mut a.arch,
                    &mut a.name,
                    &mut a.environment,
                    &mut a.image_os,
                    &mut a.image_version,
                    &mut a.job,
                ] {
                    qo(field);
                }
            }
            if let Some(g) = &mut r.gitlab {
                for field in [
                    &mut g.job_name,
                    &mut g.runner_description,
                    &mut g.image,
                    &mut g.commit,
                ] {
                    qo(field);
                }
                for tag in &mut g.runner_tags {
                    q(tag);
                }
            }
        }
        // Names are a pull request's manifest text, shown in grids: quoted and cut.
        for name in report.check_names.values_mut() {
            q(name);
            if name.chars().count() > 80 {
                *name = format!("{}…", name.chars().take(79).collect::<String>());
            }
        }
        Quoted {
            report,
            quoter: quoter.clone(),
            log_root: std::sync::OnceLock::new(),
        }
    }

    /// The quoter the report was quoted with (the secrets it masks).
    pub fn quoter(&self) -> &Quoter {
        &self.quoter
    }

    /// Quotes text that is not part of the report (what an agent passes in).
    pub fn quote(&self, text: &str) -> String {
        self.quoter.quote(text)
    }

    /// The quoted report itself (e.g. to write it as JSON).
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The last `options.tail_lines` lines of a result's log (at most `max_bytes` read),
    /// quoted, when there is a log folder and the path stays inside it; `None` for an
    /// empty log.
    pub fn log_tail(
        &self,
        options: &RenderOptions,
        detail: &CheckResult,
        max_bytes: u64,
    ) -> Option<String> {
        let root = options.log_root.as_deref()?;
        let log_path = detail.log_path.as_deref()?;
        let (lines, bytes) = (options.tail_lines, max_bytes);
        match self.log_root.get_or_init(|| LogRoot::new(root)) {
            kept if kept.root() == root => kept.tail(log_path, lines, bytes),
            // Another folder than the first one asked for: resolved on its own.
            _ => LogRoot::new(root).tail(log_path, lines, bytes),
        }
        .filter(|l| !l.trim().is_empty())
        .map(|l| self.quote(&l))
    }
}

/// Quotes the free text of `rows`.
fn quote_rows(rows: &mut [crate::results::Row], quoter: &Quoter) {
    for row in rows {
        let d = &mut row.detail;
        // Names are their own quotation; anything else in these fields is text.
        for field in [
            &mut d.command_id,
            &mut d.environment,
            &mut d.kind,
            &mut d.gate_type,
        ] {
            if !is_valid_name(field) {
                quoter.quote_in_place(field);
            }
        }
        for field in [&mut d.command, &mut d.cwd, &mut d.summary] {
            quoter.quote_in_place(field);
        }
        quoter.quote_option_in_place(&mut d.ineffective_reason);
        quoter.quote_option_in_place(&mut d.refused);
        quoter.quote_option_in_place(&mut d.cause);
        // A result from elsewhere may claim any length: shown at most the bound.
        if let Some(cause) = &mut d.cause {
            *cause = crate::results::whole_cause(cause);
        }
        for leak in &mut d.leaked {
            quoter.quote_in_place(&mut leak.command);
        }
        if let Some(counts) = &mut d.test_counts {
            quoter.quote_in_place(&mut counts.runner);
        }
        // The runner's report: test names, failure messages and output all come
        // from the pull request's tests.
        if let Some(tests) = &mut d.tests {
            quoter.quote_in_place(&mut tests.format);
            for file in &mut tests.files {
                quoter.quote_in_place(file);
            }
            if let Some(counts) = &mut tests.log_counts {
                quoter.quote_in_place(&mut counts.runner);
            }
            for case in &mut tests.cases {
                // What the test is stays known when its display changes.
                let suite = owned(quoter.quoted(&case.suite));
                let name = owned(quoter.quoted(&case.name));
                if suite.is_some() || name.is_some() {
                    if case.id.is_none() {
                        case.id = Some(case.identity());
                    }
                    if let Some(suite) = suite {
                        case.suite = suite.into();
                    }
                    if let Some(name) = name {
                        case.name = name.into();
                    }
                }
                quoter.quote_option_in_place(&mut case.message);
                quoter.quote_option_in_place(&mut case.output);
                quoter.quote_option_in_place(&mut case.file);
            }
        }
        // A group's items, nested groups within (as deep as the JSON reader let
        // them be).
        ItemResult::visit_mut(&mut d.items, "", &mut |item, _| {
            for field in [&mut item.item, &mut item.kind] {
                if !is_valid_name(field) {
                    quoter.quote_in_place(field);
                }
            }
            quoter.quote_in_place(&mut item.summary);
            quoter.quote_option_in_place(&mut item.log_path);
        });
    }
}

/// The text when quoting changed it.
fn owned(quoted: std::borrow::Cow<'_, str>) -> Option<String> {
    match quoted {
        std::borrow::Cow::Owned(text) => Some(text),
        std::borrow::Cow::Borrowed(_) => None,
    }
}
