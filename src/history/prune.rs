//! Retention: which runs the history keeps, and removing the others with everything that
//! belongs only to them (their pairs, tests and shards, through the schema's cascades)
//! in one transaction, then compacting the file.
//!
//! A run is kept when any rule keeps it: it is among the newest `keep_runs`, or it was
//! recorded within `keep_days`, or it is its branch's latest run that a baseline can be
//! (a push or scheduled run, not a pull request's: `--baseline-from history` compares
//! with it). With both limits, a run goes only when both let it go ("whichever keeps
//! more"); a limit of 0 keeps everything.

use rusqlite::{TransactionBehavior, params};

use super::{History, HistoryError, sqlite};

/// How many runs are kept by default, at least.
pub const DEFAULT_KEEP_RUNS: u64 = 200;

/// How many days of runs are kept by default, at least.
pub const DEFAULT_KEEP_DAYS: u64 = 90;

/// What to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// The newest N runs (of `branch`, when given) are kept; `None`: no rule by count;
    /// `Some(0)`: everything is kept.
    pub keep_runs: Option<u64>,
    /// The runs of the last D days are kept; `None`: no rule by age; `Some(0)`:
    /// everything is kept.
    pub keep_days: Option<u64>,
    /// Only runs of this branch are considered (the others are all kept).
    pub branch: Option<String>,
}

impl Default for Retention {
    /// 200 runs or 90 days, whichever keeps more.
    fn default() -> Retention {
        Retention {
            keep_runs: Some(DEFAULT_KEEP_RUNS),
            keep_days: Some(DEFAULT_KEEP_DAYS),
            branch: None,
        }
    }
}

impl Retention {
    /// Whether it keeps every run (a limit of 0, or no limit at all).
    pub fn keeps_everything(&self) -> bool {
        self.keep_runs == Some(0)
            || self.keep_days == Some(0)
            || (self.keep_runs.is_none() && self.keep_days.is_none())
    }
}

/// What a prune removed and kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    pub runs_removed: u64,
    pub pairs_removed: u64,
    pub tests_removed: u64,
    pub shards_removed: u64,
    /// Runs left, and how many of them each rule kept (a run may be kept by several).
    pub runs_kept: u64,
    pub kept_by_count: u64,
    pub kept_by_age: u64,
    /// Runs kept only because each is its branch's latest that a baseline can be.
    pub kept_as_baseline: u64,
    /// The file's size (with its write-ahead log) before and after, in bytes.
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// The condition a kept run meets, as SQL over `runs` (`?1` the branch or null, `?2`
/// the count, `?3` the days).
const BY_COUNT: &str = "id IN (SELECT id FROM runs WHERE (?1 IS NULL OR branch IS ?1)
    ORDER BY recorded_at DESC, id DESC LIMIT ?2)";
const BY_AGE: &str = "julianday(recorded_at) >= julianday('now', '-' || ?3 || ' days')";
/// The latest run of each branch that a baseline can be (a branch with none gives no
/// id: a NULL in the list would make every comparison with it unknown, and so keep
/// every run).
const AS_BASELINE: &str = "id IN (SELECT latest FROM (SELECT (SELECT r.id FROM runs r
        WHERE r.branch IS b.branch AND r.pr IS NULL
          AND COALESCE(r.event, '') NOT IN ('pull_request', 'pull_request_target')
        ORDER BY r.recorded_at DESC, r.id DESC LIMIT 1) AS latest
    FROM (SELECT DISTINCT branch FROM runs) b) WHERE latest IS NOT NULL)";

impl History {
    /// Removes the runs `retention` does not keep, in one transaction, then compacts the
    /// file.
    pub fn prune(&mut self, retention: &Retention) -> Result<Pruned, HistoryError> {
        let path = self.path.clone();
        let bytes_before = self.bytes();
        let branch = retention.branch.as_deref();
        // No rule by count keeps none by count; no rule by age keeps none by age; a run
        // goes when no rule keeps it. SQLite's LIMIT -1 is no limit.
        let count = match retention.keep_runs {
            None => 0_i64,
            Some(n) => i64::try_from(n).unwrap_or(i64::MAX),
        };
        let days = match retention.keep_days {
            // Beyond any date a run can have: keeps none by age.
            None => -1_i64,
            Some(d) => i64::try_from(d.min(1_000_000)).unwrap_or(1_000_000),
        };
        let everything = retention.keeps_everything();
        let tx = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sqlite(&path, e))?;
        let considered = "(?1 IS NULL OR branch IS ?1)";
        let kept = format!(
            "(NOT {considered} OR {BY_COUNT} OR (?3 >= 0 AND {BY_AGE}) OR {AS_BASELINE} OR ?4)"
        );
        tx.execute(
            "CREATE TEMP TABLE IF NOT EXISTS pruned (id INTEGER PRIMARY KEY)",
            [],
        )
        .map_err(|e| sqlite(&path, e))?;
        tx.execute("DELETE FROM temp.pruned", [])
            .map_err(|e| sqlite(&path, e))?;
        tx.execute(
            &format!("INSERT INTO temp.pruned SELECT id FROM runs WHERE NOT {kept}"),
            params![branch, count, days, everything],
        )
        .map_err(|e| sqlite(&path, e))?;
        let of = |table: &str| -> Result<u64, HistoryError> {
            tx.query_row(
                &format!("SELECT count(*) FROM {table} WHERE run IN (SELECT id FROM temp.pruned)"),
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| sqlite(&path, e))
        };
        let pairs_removed = of("pairs")?;
        let tests_removed = of("tests")?;
        let shards_removed = of("shards")?;
        let runs_removed = tx
            .execute(
                "DELETE FROM runs WHERE id IN (SELECT id FROM temp.pruned)",
                [],
            )
            .map_err(|e| sqlite(&path, e))?;
        let tally = |condition: &str| -> Result<u64, HistoryError> {
            tx.query_row(
                &format!("SELECT count(*) FROM runs WHERE {condition}"),
                params![branch, count, days],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| sqlite(&path, e))
        };
        let runs_kept = tally("?1 IS ?1 AND ?2 IS ?2 AND ?3 IS ?3")?;
        let kept_by_count = tally(&format!("{considered} AND {BY_COUNT} AND ?3 IS ?3"))?;
        let kept_by_age = tally(&format!(
            "{considered} AND ?3 >= 0 AND {BY_AGE} AND ?2 IS ?2"
        ))?;
        let kept_as_baseline = if everything {
            0
        } else {
            tally(&format!(
                "{considered} AND {AS_BASELINE} AND NOT {BY_COUNT} AND NOT (?3 >= 0 AND {BY_AGE})"
            ))?
        };
        tx.execute("DROP TABLE temp.pruned", [])
            .map_err(|e| sqlite(&path, e))?;
        tx.commit().map_err(|e| sqlite(&path, e))?;
        if runs_removed > 0 {
            self.compact()?;
        }
        Ok(Pruned {
            runs_removed: u64::try_from(runs_removed).unwrap_or(0),
            pairs_removed,
            tests_removed,
            shards_removed,
            runs_kept,
            kept_by_count,
            kept_by_age,
            kept_as_baseline,
            bytes_before,
            bytes_after: self.bytes(),
        })
    }

    /// Moves the write-ahead log into the file and rewrites the file without the free
    /// pages a removal left.
    fn compact(&mut self) -> Result<(), HistoryError> {
        let path = self.path.clone();
        self.connection
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| sqlite(&path, e))?;
        self.connection
            .execute_batch("VACUUM")
            .map_err(|e| sqlite(&path, e))?;
        self.connection
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| sqlite(&path, e))?;
        Ok(())
    }

    /// The file's size with its write-ahead log, in bytes.
    pub fn bytes(&self) -> u64 {
        let len = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        len(&self.path) + len(std::path::Path::new(&wal))
    }
}
