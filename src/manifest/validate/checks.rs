//! Validating one check: its identity, its kind and command, its scope and limits.

use super::*;

impl Validator<'_> {
    /// Validates one check (or, with `is_item`, one group item).
    pub(super) fn check(
        &mut self,
        path: &str,
        raw: &RawCheck,
        defaults: &RawDefaults,
        is_item: bool,
    ) -> Option<Check> {
        let before = self.diagnostics.len();
        let id = self.identity(path, raw, is_item);
        let kinds = raw.kinds_present();
        let kind = self.one_kind(path, raw, defaults, &kinds, id.as_deref());
        self.misplaced_keys(path, raw, is_item, !kinds.is_empty());
        self.limits(path, raw);
        let scope = self.scope(path, raw);
        self.wordless_command(path, raw, defaults);
        let split = self.split(path, raw, is_item);
        let quarantine = self.quarantine(path, raw);
        let has_command = raw.run.is_some() || raw.test.is_some();
        if split.is_none() && !is_item && has_command && raw.shards_may_overlap.is_some() {
            self.key_error(
                &join_key(path, "shards-may-overlap"),
                "`shards-may-overlap` applies to a split check (`split:`, or `{shard}` in its command)".to_owned(),
            );
        }
        if self.diagnostics.len() > before {
            return None;
        }
        let gate = raw.gate.unwrap_or(if raw.test.is_some() {
            Gate::Test
        } else {
            Gate::Custom
        });
        Some(Check {
            id: CheckId(id?),
            name: raw.name.clone(),
            kind: kind?,
            scope,
            expect: match raw.expect {
                Some(Expect::Failure) => ExpectExit::Failure,
                _ => ExpectExit::Code(raw.exit_code.unwrap_or(0)),
            },
            gate,
            // A floor on the tests makes sense only if falling below it fails.
            must_be_effective: raw
                .must_be_effective
                .unwrap_or(raw.test.is_some() || raw.min_tests.is_some()),
            required: raw.required.or(defaults.required).unwrap_or(true),
            timeout: raw
                .timeout
                .or(defaults.timeout)
                .map_or(DEFAULT_TIMEOUT, |d| d.0),
            grace: raw.grace.or(defaults.grace).map_or(DEFAULT_GRACE, |d| d.0),
            retries: raw.retries.or(defaults.retries).unwrap_or(0),
            reports: raw.reports.clone().map(|r| r.0).unwrap_or_default(),
            min_tests: raw.min_tests,
            tests_may_drop: raw.tests_may_drop.or(defaults.tests_may_drop).map(|p| p.0),
            fail_on_flaky: raw
                .fail_on_flaky
                .or(defaults.fail_on_flaky)
                .unwrap_or(false),
            // An item runs in its group's folder (a default folder applies to the
            // group once, not again to each item); its own `cwd` is relative to it.
            cwd: raw
                .cwd
                .clone()
                .or_else(|| (!is_item).then(|| defaults.cwd.clone()).flatten())
                .unwrap_or_else(|| ".".to_owned()),
            env: env_map(&raw.env),
            shell: raw.shell,
            line: self.spans.get(path).map(|s| s.value.line),
            shards: raw.shards,
            split,
            list: raw.list.clone(),
            shards_may_overlap: raw.shards_may_overlap.unwrap_or(false),
            quarantine,
        })
    }

    /// `quarantine:` entries: each names a test (or a glob that is not every test),
    /// says why, and ends on a date; the check must have reports to know its tests by.
    fn quarantine(&mut self, path: &str, raw: &RawCheck) -> Vec<Quarantine> {
        let Some(entries) = &raw.quarantine else {
            return Vec::new();
        };
        let key = join_key(path, "quarantine");
        if raw.expect.is_some() {
            self.key_error(
                &key,
                "`quarantine` holds back failures of a check that must pass; a check with `expect: failure` has none to hold back",
            );
        }
        if raw.reports.is_none() && (raw.run.is_some() || raw.test.is_some()) {
            self.key_error(
                &key,
                "`quarantine` needs `reports`: a test is known by its runner's report",
            );
        }
        if entries.len() > MAX_QUARANTINE {
            self.error(
                &key,
                format!(
                    "{} quarantine entries are more than the most allowed, {MAX_QUARANTINE}",
                    entries.len()
                ),
            );
        }
        let mut out = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let at = join_index(&key, i);
            let test = entry.test.trim();
            if test.is_empty() {
                self.error(&join_key(&at, "test"), "`test` is empty; name the test as the comment shows it (`suite › name`) or a glob over such names");
                continue;
            }
            let glob = if Quarantine::is_glob(test) {
                if test
                    .chars()
                    .all(|c| matches!(c, '*' | '?' | '›' | '/' | '.' | ':') || c.is_whitespace())
                {
                    self.error(
                        &join_key(&at, "test"),
                        format!("`{test}` matches every test: a quarantine names the tests it holds back, not the whole suite"),
                    );
                    continue;
                }
                match globset::GlobBuilder::new(&Quarantine::glob_pattern(test))
                    .literal_separator(false)
                    .backslash_escape(true)
                    .build()
                {
                    Ok(glob) => Some(glob.compile_matcher()),
                    Err(e) => {
                        self.error(
                            &join_key(&at, "test"),
                            format!("`{test}` is not a valid glob: {}", e.kind()),
                        );
                        continue;
                    }
                }
            } else {
                None
            };
            let reason = entry.reason.as_deref().map(str::trim).unwrap_or_default();
            if reason.is_empty() {
                self.error(
                    &at,
                    format!("the quarantine of `{test}` has no `reason`; say why it is held back (an issue link, the cause)"),
                );
            }
            let until = match entry.until.as_deref().map(str::trim) {
                None => {
                    self.error(
                        &at,
                        format!("the quarantine of `{test}` has no `until`; give the last day it holds (`YYYY-MM-DD`): a quarantine without an end is how tests are forgotten"),
                    );
                    None
                }
                Some(date) => match chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d") {
                    Ok(day) if date.len() == 10 => Some(day),
                    _ => {
                        self.error(
                            &join_key(&at, "until"),
                            format!(
                                "`{date}` is not a date; write it as YYYY-MM-DD (`2027-01-31`)"
                            ),
                        );
                        None
                    }
                },
            };
            if let (false, Some(until)) = (reason.is_empty(), until) {
                out.push(Quarantine {
                    test: test.to_owned(),
                    glob,
                    reason: reason.to_owned(),
                    until,
                    owner: entry
                        .owner
                        .as_deref()
                        .map(str::trim)
                        .filter(|o| !o.is_empty())
                        .map(str::to_owned),
                });
            }
        }
        out
    }

    /// The check's one kind: none and two are errors.
    fn one_kind(
        &mut self,
        path: &str,
        raw: &RawCheck,
        defaults: &RawDefaults,
        kinds: &[&str],
        id: Option<&str>,
    ) -> Option<CheckKind> {
        match kinds {
            [] => {
                self.error(
                    path,
                    format!(
                        "`{}` has no kind; give it exactly one of: run, test, file, not-file, git-clean, all-of, any-of, assert, quality",
                        id.unwrap_or("check")
                    ),
                );
                None
            }
            [_] => self.kind(path, raw, defaults),
            [first, second, ..] => {
                self.key_error(
                    &join_key(path, second),
                    format!(
                        "a check has exactly one kind, but this one has `{first}` and `{second}`; split it into two checks"
                    ),
                );
                None
            }
        }
    }

    /// Keys set where they do not apply: on a group item, beside each other, on a kind
    /// they mean nothing for.
    fn misplaced_keys(&mut self, path: &str, raw: &RawCheck, is_item: bool, has_kind: bool) {
        if is_item {
            for (key, set) in [
                ("environment", raw.environment.is_some()),
                ("required", raw.required.is_some()),
                ("quarantine", raw.quarantine.is_some()),
            ] {
                if set {
                    self.key_error(
                        &join_key(path, key),
                        format!(
                            "`{key}` cannot be set on a group item; set it on the enclosing check"
                        ),
                    );
                }
            }
        }
        if raw.expect.is_some() && raw.exit_code.is_some() {
            self.key_error(
                &join_key(path, "expect"),
                "`expect` and `exit-code` cannot be combined: `expect: failure` accepts any non-zero exit code",
            );
        }
        if raw.search.is_some() && raw.file.is_none() {
            self.key_error(
                &join_key(path, "search"),
                "`search` applies only to `file` checks",
            );
        }
        let is_command = raw.run.is_some() || raw.test.is_some();
        if !is_command {
            for (key, set) in [
                ("exit-code", raw.exit_code.is_some()),
                ("expect", raw.expect.is_some()),
                ("must-be-effective", raw.must_be_effective.is_some()),
                ("reports", raw.reports.is_some()),
                ("min-tests", raw.min_tests.is_some()),
                ("tests-may-drop", raw.tests_may_drop.is_some()),
                ("fail-on-flaky", raw.fail_on_flaky.is_some()),
                ("quarantine", raw.quarantine.is_some()),
                ("shell", raw.shell.is_some()),
            ] {
                if set && has_kind {
                    self.key_error(
                        &join_key(path, key),
                        format!("`{key}` applies only to `run` and `test` checks"),
                    );
                }
            }
        }
        if raw.test.is_some() && raw.gate.is_some_and(|g| g != Gate::Test) {
            self.error(
                &join_key(path, "gate"),
                "a `test` check is a test gate; remove `gate` or use `run`",
            );
        }
    }

    /// Timeout, grace, retries, variables and the exit code within their bounds.
    fn limits(&mut self, path: &str, raw: &RawCheck) {
        self.timeout(&join_key(path, "timeout"), raw.timeout, "timeout");
        self.grace(&join_key(path, "grace"), raw.grace);
        self.retries(&join_key(path, "retries"), raw.retries);
        self.reports(&join_key(path, "reports"), raw.reports.as_ref());
        self.percent(&join_key(path, "tests-may-drop"), raw.tests_may_drop);
        if raw.min_tests == Some(0) {
            self.error(
                &join_key(path, "min-tests"),
                "`min-tests: 0` asks for nothing; give the fewest tests a run must execute, or remove it",
            );
        }
        self.env_vars(&join_key(path, "env"), &raw.env);
        if let Some(code) = raw.exit_code
            && !EXIT_CODES.contains(&code)
        {
            self.error(
                &join_key(path, "exit-code"),
                format!(
                    "exit code {code} is impossible: a process exits with {}..={}",
                    EXIT_CODES.start(),
                    EXIT_CODES.end()
                ),
            );
        }
    }

    /// Report paths: relative globs that stay inside the check's folder.
    fn reports(&mut self, path: &str, reports: Option<&RawPaths>) {
        let Some(reports) = reports else { return };
        if reports.0.is_empty() {
            self.error(
                path,
                "`reports` is empty; name the report files the command writes, or remove it",
            );
        }
        if reports.0.len() > MAX_REPORT_PATTERNS {
            self.error(
                path,
                format!(
                    "{} report patterns are more than the most allowed, {MAX_REPORT_PATTERNS}",
                    reports.0.len()
                ),
            );
        }
        for (i, pattern) in reports.0.iter().map(|p| &p.path).enumerate() {
            // A list's item where it is one (a lone string is the key's value).
            let item = join_index(path, i);
            let at = if self.spans.get(&item).is_some() {
                item
            } else {
                path.to_owned()
            };
            if let Err(reason) = report_pattern_problem(pattern) {
                self.error(&at, format!("report pattern `{pattern}`: {reason}"));
            }
        }
    }

    /// A `shell: none` command must be plain words: no shell syntax, no broken quotes.
    fn wordless_command(&mut self, path: &str, raw: &RawCheck, defaults: &RawDefaults) {
        let shell = raw.shell.or(defaults.shell);
        let command = raw
            .run
            .as_deref()
            .or(raw.test.as_deref().filter(|t| *t != "auto"));
        let (Some(Shell::None), Some(cmd)) = (shell, command) else {
            return;
        };
        let key = join_key(path, if raw.run.is_some() { "run" } else { "test" });
        if let Some(syntax) = words::shell_syntax(cmd) {
            self.error(
                &key,
                format!(
                    "`shell: none` runs the command without a shell, but it contains shell syntax `{syntax}`; use `shell: bash` or remove it"
                ),
            );
        } else if words::split(cmd).is_ok_and(|w| w.is_empty()) || words::split(cmd).is_err() {
            self.error(
                &key,
                "`shell: none` command cannot be split into words (unbalanced quotes or empty)",
            );
        }
    }

    fn identity(&mut self, path: &str, raw: &RawCheck, is_item: bool) -> Option<String> {
        let (want, other) = if is_item {
            ("item", "id")
        } else {
            ("id", "item")
        };
        let (value, wrong) = if is_item {
            (&raw.item, &raw.id)
        } else {
            (&raw.id, &raw.item)
        };
        if wrong.is_some() {
            self.key_error(
                &join_key(path, other),
                if is_item {
                    "group items are named with `item`, not `id`"
                } else {
                    "`item` names a group item; a check is named with `id`"
                },
            );
        }
        match value {
            None if wrong.is_some() => None,
            None => {
                self.error(path, format!("missing key `{want}`"));
                None
            }
            Some(id) => {
                let what = if is_item { "item name" } else { "check id" };
                self.name(&join_key(path, want), id, what)
                    .then(|| id.clone())
            }
        }
    }

    fn kind(&mut self, path: &str, raw: &RawCheck, defaults: &RawDefaults) -> Option<CheckKind> {
        let not_blank = |v: &mut Self, key: &str, text: &str| {
            if text.trim().is_empty() {
                v.error(&join_key(path, key), format!("`{key}` is empty"));
            }
        };
        if let Some(cmd) = &raw.run {
            not_blank(self, "run", cmd);
            return Some(CheckKind::Run(cmd.clone()));
        }
        if let Some(test) = &raw.test {
            not_blank(self, "test", test);
            let spec = if test.trim() == "auto" {
                TestSpec::Auto
            } else {
                TestSpec::Command(test.clone())
            };
            return Some(CheckKind::Test(spec));
        }
        if let Some(pattern) = &raw.file {
            not_blank(self, "file", pattern);
            self.glob(&join_key(path, "file"), pattern);
            return Some(CheckKind::File {
                pattern: pattern.clone(),
                search: raw.search.clone().unwrap_or_default(),
            });
        }
        if let Some(pattern) = &raw.not_file {
            not_blank(self, "not-file", pattern);
            self.glob(&join_key(path, "not-file"), pattern);
            return Some(CheckKind::NotFile {
                pattern: pattern.clone(),
            });
        }
        if let Some(dir) = &raw.git_clean {
            return Some(CheckKind::GitClean {
                path: if dir.trim().is_empty() {
                    ".".to_owned()
                } else {
                    dir.clone()
                },
            });
        }
        if let Some(text) = &raw.assert {
            not_blank(self, "assert", text);
            return Some(CheckKind::Assert(text.clone()));
        }
        if let Some(q) = &raw.quality {
            if q.criteria.trim().is_empty() {
                self.error(&join_key(path, "quality.criteria"), "`criteria` is empty");
            }
            return Some(CheckKind::Quality {
                criteria: q.criteria.clone(),
                pass_threshold: q.pass_threshold,
                scope: q.scope.clone(),
            });
        }
        Some(self.group(path, raw, defaults))
    }

    /// An `all-of` or `any-of` group: each item validated as a check of its own.
    fn group(&mut self, path: &str, raw: &RawCheck, defaults: &RawDefaults) -> CheckKind {
        let (key, items) = match (&raw.all_of, &raw.any_of) {
            (Some(items), _) => ("all-of", items),
            (_, Some(items)) => ("any-of", items),
            _ => unreachable!("kinds_present found exactly one kind"),
        };
        let group_path = join_key(path, key);
        if items.is_empty() {
            self.error(&group_path, format!("`{key}` has no items"));
        }
        let mut names = HashSet::new();
        let mut checked = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let item_path = join_index(&group_path, i);
            if let Some(valid) = self.check(&item_path, item, defaults, true) {
                if !names.insert(valid.id.clone()) {
                    self.error(
                        &join_key(&item_path, "item"),
                        format!("duplicate item name `{}` in this group", valid.id),
                    );
                }
                checked.push(valid);
            }
        }
        if key == "all-of" {
            CheckKind::AllOf(checked)
        } else {
            CheckKind::AnyOf(checked)
        }
    }

    fn glob(&mut self, path: &str, pattern: &str) {
        if let Err(e) = globset::Glob::new(pattern) {
            self.error(path, format!("invalid glob `{pattern}`: {}", e.kind()));
        }
    }
}
