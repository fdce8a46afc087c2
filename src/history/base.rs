//! The base a report is compared with, read from the history: the latest run recorded
//! for a branch (`--baseline-from history:BRANCH`).

use std::borrow::Cow;

use rusqlite::{OptionalExtension, params};

use super::{History, HistoryError, run_key, sqlite};
use crate::results::Report;
use crate::results::Status;
use crate::results::baseline::{Base, BasePair, BaseResult, BaseTest};

/// Which run is the base.
#[derive(Debug, Clone)]
pub struct BaseQuery<'a> {
    /// The base branch.
    pub branch: &'a str,
    /// The report compared: its repository and manifest path pick runs of the same
    /// manifest (a repository may have several), and its own run is never its base.
    pub head: &'a Report,
}

impl History {
    /// The latest run of `query.branch` for the head's manifest (and repository, when
    /// both record one) other than the head's own run, as a [`Base`]; `None` when the
    /// history has none. A run whose report records a pull request, or a run started by
    /// anything but a push or a schedule (a `workflow_run` may carry a fork's results),
    /// is never a base.
    pub fn base(&self, query: &BaseQuery<'_>) -> Result<Option<Base<'static>>, HistoryError> {
        let c = self.connection();
        let head = query.head;
        let found = c
            .query_row(
                "SELECT id, commit_sha, run_id, manifest_digest FROM runs
                 WHERE branch = ?1 AND manifest_path = ?2 AND key <> ?3 AND pr IS NULL
                   AND (event IS NULL OR event IN ('push', 'schedule'))
                   AND (?4 IS NULL OR repository IS NULL OR repository = ?4)
                 ORDER BY recorded_at DESC, id DESC LIMIT 1",
                params![
                    query.branch,
                    head.manifest.path,
                    run_key(head),
                    head.source.repository
                ],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| sqlite(self.path(), e))?;
        let Some((run, commit, run_id, manifest_digest)) = found else {
            return Ok(None);
        };
        let mut base = Base::new(
            commit,
            run_id,
            Some(query.branch.to_owned()),
            manifest_digest,
        );
        let mut pairs = c
            .prepare(
                "SELECT check_id, environment, result, tests_executed, status, exit_code
                 FROM pairs WHERE run = ?1",
            )
            .map_err(|e| sqlite(self.path(), e))?;
        let mut rows = pairs.query([run]).map_err(|e| sqlite(self.path(), e))?;
        while let Some(row) = rows.next().map_err(|e| sqlite(self.path(), e))? {
            let read = || -> rusqlite::Result<_> {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, Option<i64>>(3)?,
                    row.get::<_, Option<String>>(4)?,
                    row.get::<_, Option<i32>>(5)?,
                ))
            };
            let (check, environment, result, executed, status, exit_code) =
                read().map_err(|e| sqlite(self.path(), e))?;
            let result = match result.as_str() {
                "PASS" => BaseResult::Pass,
                "FAIL" => BaseResult::Fail,
                _ => BaseResult::Missing,
            };
            base.insert(
                Cow::Owned(check),
                Cow::Owned(environment),
                BasePair {
                    result,
                    tests_executed: executed.and_then(|n| u64::try_from(n).ok()),
                    status: status.as_deref().and_then(Status::parse),
                    exit_code,
                    tests: Vec::new(),
                },
            );
        }
        // Every test of the run in one pass, each under its pair, in the order recorded.
        let mut tests = c
            .prepare(
                "SELECT check_id, environment, suite, name, outcome, test_id FROM tests
                 WHERE run = ?1 ORDER BY check_id, environment, rowid",
            )
            .map_err(|e| sqlite(self.path(), e))?;
        let mut rows = tests.query([run]).map_err(|e| sqlite(self.path(), e))?;
        while let Some(row) = rows.next().map_err(|e| sqlite(self.path(), e))? {
            let mut add = || -> rusqlite::Result<()> {
                let (check, environment) = (row.get_ref(0)?.as_str()?, row.get_ref(1)?.as_str()?);
                let outcome = row.get_ref(4)?.as_str()?;
                let test = BaseTest {
                    suite: Cow::Owned(row.get(2)?),
                    name: Cow::Owned(row.get(3)?),
                    id: row.get::<_, Option<String>>(5)?.map(Cow::Owned),
                    failed: matches!(outcome, "failed" | "error"),
                };
                base.add_test(check, environment, test);
                Ok(())
            };
            add().map_err(|e| sqlite(self.path(), e))?;
        }
        Ok(Some(base))
    }
}
