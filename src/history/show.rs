//! `history show`: per check × environment over the last runs, the pass rate, the flaky
//! rate, the duration's median and 95th percentile, the test count's trend, and the last
//! failure.

use std::collections::BTreeMap;

use rusqlite::params;
use serde::Serialize;

use super::{History, HistoryError, last_runs, sqlite};

/// Which runs and pairs to summarise.
#[derive(Debug, Clone, Default)]
pub struct StatsQuery {
    pub check: Option<String>,
    pub environment: Option<String>,
    pub branch: Option<String>,
    /// The most recent runs looked at.
    pub last: u32,
    /// Pull requests' runs counted too (left out by default: a branch's history is its
    /// own runs').
    pub pull_requests: bool,
}

/// One check in one environment over the runs looked at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub check: String,
    pub environment: String,
    /// Runs that expected the pair.
    pub runs: u32,
    pub passed: u32,
    /// Passed / runs (a missing pair is not a pass).
    pub pass_rate: f64,
    /// Runs in which it passed on a retry or had flaky tests.
    pub flaky: u32,
    pub flaky_rate: f64,
    pub duration_p50_ms: Option<u64>,
    pub duration_p95_ms: Option<u64>,
    /// Tests executed in each run with a count, oldest first.
    pub tests: Vec<u64>,
    /// The most recent run in which it failed or was missing.
    pub last_failure: Option<Failure>,
    /// A split pair: its shards in the most recent run that split it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<ShardSpread>,
}

/// How evenly a split pair's shards took their time, in one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShardSpread {
    pub shards: u32,
    pub slowest_ms: u64,
    pub fastest_ms: u64,
    pub mean_ms: u64,
}

/// A run in which a pair failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub recorded_at: String,
    pub commit: Option<String>,
    pub run_id: Option<String>,
    /// `FAIL` or `MISSING`.
    pub result: String,
    pub summary: Option<String>,
}

/// The pairs of the last `query.last` runs, summarised per check × environment in the
/// order the checks and environments were first seen.
pub fn stats(history: &History, query: &StatsQuery) -> Result<Vec<Stats>, HistoryError> {
    let path = history.path();
    let runs = last_runs(query.pull_requests);
    let mut statement = history
        .connection()
        .prepare(&format!(
            "SELECT p.check_id, p.environment, p.result, p.duration_ms, p.tests_passed,
                    p.tests_failed, p.tests_flaky, p.retried_flaky, p.summary,
                    r.recorded_at, r.commit_sha, r.run_id
             FROM pairs p JOIN runs r ON r.id = p.run
             WHERE r.id IN ({runs})
               AND (?3 IS NULL OR p.check_id = ?3)
               AND (?4 IS NULL OR p.environment = ?4)
             ORDER BY r.recorded_at, r.id, p.position"
        ))
        .map_err(|e| sqlite(path, e))?;
    let rows = statement
        .query_map(
            params![query.branch, query.last, query.check, query.environment],
            |r| {
                Ok(PairRow {
                    check: r.get(0)?,
                    environment: r.get(1)?,
                    result: r.get(2)?,
                    duration_ms: count_of(r.get(3)?),
                    passed: count_of(r.get(4)?),
                    failed: count_of(r.get(5)?),
                    tests_flaky: count_of(r.get(6)?),
                    retried_flaky: r.get(7)?,
                    summary: r.get(8)?,
                    recorded_at: r.get(9)?,
                    commit: r.get(10)?,
                    run_id: r.get(11)?,
                })
            },
        )
        .map_err(|e| sqlite(path, e))?;
    let mut order: Vec<(String, String)> = Vec::new();
    let mut by_pair: BTreeMap<(String, String), Vec<PairRow>> = BTreeMap::new();
    for row in rows {
        let row = row.map_err(|e| sqlite(path, e))?;
        let key = (row.check.clone(), row.environment.clone());
        if !by_pair.contains_key(&key) {
            order.push(key.clone());
        }
        by_pair.entry(key).or_default().push(row);
    }
    let mut spreads = spreads(history, query)?;
    Ok(order
        .into_iter()
        .map(|key| {
            let rows = by_pair.remove(&key).unwrap_or_default();
            let shards = spreads.remove(&key);
            Stats {
                shards,
                ..summarise(key.0, key.1, &rows)
            }
        })
        .collect())
}

/// Each split pair's shards in the most recent of the runs looked at that split it.
fn spreads(
    history: &History,
    query: &StatsQuery,
) -> Result<BTreeMap<(String, String), ShardSpread>, HistoryError> {
    let path = history.path();
    let runs = last_runs(query.pull_requests);
    let mut statement = history
        .connection()
        .prepare(&format!(
            "SELECT s.check_id, s.environment, s.run, s.shards, s.duration_ms
             FROM shards s JOIN runs r ON r.id = s.run
             WHERE r.id IN ({runs})
               AND (?3 IS NULL OR s.check_id = ?3)
               AND (?4 IS NULL OR s.environment = ?4)
             ORDER BY r.recorded_at, r.id, s.shard"
        ))
        .map_err(|e| sqlite(path, e))?;
    let rows = statement
        .query_map(
            params![query.branch, query.last, query.check, query.environment],
            |r| {
                Ok((
                    (r.get::<_, String>(0)?, r.get::<_, String>(1)?),
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            },
        )
        .map_err(|e| sqlite(path, e))?;
    // The latest run's durations of each pair (rows come oldest run first).
    let mut latest: BTreeMap<(String, String), (i64, u32, Vec<u64>)> = BTreeMap::new();
    for row in rows {
        let (key, run, shards, ms) = row.map_err(|e| sqlite(path, e))?;
        let entry = latest.entry(key).or_insert((run, 0, Vec::new()));
        if entry.0 != run {
            *entry = (run, 0, Vec::new());
        }
        entry.1 = u32::try_from(shards).unwrap_or(0);
        entry.2.push(u64::try_from(ms).unwrap_or(0));
    }
    Ok(latest
        .into_iter()
        .filter_map(|(key, (_, shards, durations))| {
            let slowest = *durations.iter().max()?;
            let fastest = *durations.iter().min()?;
            let mean = durations.iter().sum::<u64>() / durations.len() as u64;
            Some((
                key,
                ShardSpread {
                    shards,
                    slowest_ms: slowest,
                    fastest_ms: fastest,
                    mean_ms: mean,
                },
            ))
        })
        .collect())
}

/// A stored count (never negative when this tool wrote it).
fn count_of(value: Option<i64>) -> Option<u64> {
    value.map(|n| u64::try_from(n).unwrap_or(0))
}

struct PairRow {
    check: String,
    environment: String,
    result: String,
    duration_ms: Option<u64>,
    passed: Option<u64>,
    failed: Option<u64>,
    tests_flaky: Option<u64>,
    retried_flaky: bool,
    summary: Option<String>,
    recorded_at: String,
    commit: Option<String>,
    run_id: Option<String>,
}

fn summarise(check: String, environment: String, rows: &[PairRow]) -> Stats {
    let runs = u32::try_from(rows.len()).unwrap_or(u32::MAX);
    let passed = count(rows, |r| r.result == "PASS");
    let flaky = count(rows, |r| r.retried_flaky || r.tests_flaky.unwrap_or(0) > 0);
    let mut durations: Vec<u64> = rows.iter().filter_map(|r| r.duration_ms).collect();
    durations.sort_unstable();
    let rate = |n: u32| {
        if runs == 0 {
            0.0
        } else {
            f64::from(n) / f64::from(runs)
        }
    };
    Stats {
        check,
        environment,
        runs,
        passed,
        pass_rate: rate(passed),
        flaky,
        flaky_rate: rate(flaky),
        duration_p50_ms: percentile(&durations, 50),
        duration_p95_ms: percentile(&durations, 95),
        tests: rows
            .iter()
            .filter_map(|r| Some(r.passed? + r.failed.unwrap_or(0)))
            .collect(),
        last_failure: rows
            .iter()
            .rev()
            .find(|r| r.result != "PASS")
            .map(|r| Failure {
                recorded_at: r.recorded_at.clone(),
                commit: r.commit.clone(),
                run_id: r.run_id.clone(),
                result: r.result.clone(),
                summary: r.summary.clone(),
            }),
        shards: None,
    }
}

fn count(rows: &[PairRow], keep: impl Fn(&PairRow) -> bool) -> u32 {
    u32::try_from(rows.iter().filter(|r| keep(r)).count()).unwrap_or(u32::MAX)
}

/// The nearest-rank percentile `p` of sorted `values`.
fn percentile(sorted: &[u64], p: usize) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<u64> = (1..=20).collect();
        assert_eq!(percentile(&values, 50), Some(10));
        assert_eq!(percentile(&values, 95), Some(19));
        assert_eq!(percentile(&[7], 95), Some(7));
        assert_eq!(percentile(&[], 50), None);
    }
}
