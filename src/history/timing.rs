//! The tests' durations the history recorded: what `split: timing` splits by.

use rustc_hash::FxHashMap;

use super::{History, HistoryError, sqlite};
use crate::results::TestTiming;

/// The most recorded test results read for one pair's timings.
const MAX_TIMED_ROWS: i64 = 500_000;

impl History {
    /// The latest recorded duration of each test `check` ran in `environment`, the
    /// most recent runs first; tests without a duration are left out.
    pub fn test_durations(
        &self,
        check: &str,
        environment: &str,
    ) -> Result<Vec<TestTiming>, HistoryError> {
        let path = self.path.clone();
        let mut statement = self
            .connection
            .prepare(
                "SELECT t.suite, t.name, t.duration_ms FROM tests t JOIN runs r ON r.id = t.run
                 WHERE t.check_id = ?1 AND t.environment = ?2 AND t.duration_ms IS NOT NULL
                 ORDER BY r.recorded_at DESC, r.id DESC LIMIT ?3",
            )
            .map_err(|e| sqlite(&path, e))?;
        let rows = statement
            .query_map(
                rusqlite::params![check, environment, MAX_TIMED_ROWS],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, i64>(2)?,
                    ))
                },
            )
            .map_err(|e| sqlite(&path, e))?;
        let mut seen: FxHashMap<(String, String), ()> = FxHashMap::default();
        let mut out = Vec::new();
        for row in rows {
            let (suite, name, ms) = row.map_err(|e| sqlite(&path, e))?;
            if seen.insert((suite.clone(), name.clone()), ()).is_none() {
                out.push(TestTiming {
                    suite: suite.into(),
                    name: name.into(),
                    duration_ms: u64::try_from(ms).unwrap_or(0),
                });
            }
        }
        Ok(out)
    }
}
