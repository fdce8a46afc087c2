//! The database's schema, versioned: `PRAGMA application_id` says the file is ours,
//! `PRAGMA user_version` which schema it has; each migration takes one version to the
//! next inside a transaction.

use rusqlite::{Connection, TransactionBehavior};

/// `VMHS` ("verify-matrix history store"): marks the file as this tool's.
pub const APPLICATION_ID: i32 = 0x564d_4853;

/// The schema this build writes.
pub const SCHEMA_VERSION: i32 = 5;

/// Each migration, from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 → 1: runs, their pairs, and the tests of pairs with a runner report.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        repository TEXT,
        branch TEXT,
        commit_sha TEXT,
        pr INTEGER,
        run_id TEXT,
        run_attempt INTEGER,
        recorded_at TEXT NOT NULL,
        manifest_path TEXT NOT NULL,
        manifest_digest TEXT NOT NULL,
        verdict TEXT NOT NULL,
        reasons TEXT NOT NULL
    );
    CREATE INDEX runs_by_branch ON runs (repository, branch, recorded_at);
    CREATE TABLE pairs (
        run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        check_id TEXT NOT NULL,
        environment TEXT NOT NULL,
        position INTEGER NOT NULL,
        result TEXT NOT NULL,
        status TEXT,
        exit_code INTEGER,
        duration_ms INTEGER,
        tests_passed INTEGER,
        tests_failed INTEGER,
        tests_skipped INTEGER,
        tests_flaky INTEGER,
        retried_flaky INTEGER NOT NULL,
        summary TEXT,
        PRIMARY KEY (run, check_id, environment)
    ) WITHOUT ROWID;
    CREATE TABLE tests (
        run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        check_id TEXT NOT NULL,
        environment TEXT NOT NULL,
        suite TEXT NOT NULL,
        name TEXT NOT NULL,
        outcome TEXT NOT NULL,
        duration_ms INTEGER
    );
    CREATE INDEX tests_by_pair ON tests (run, check_id, environment);",
    // 1 → 2: the tests a pair executed (what a baseline's test count compares).
    "ALTER TABLE pairs ADD COLUMN tests_executed INTEGER;",
    // 2 → 3: what started the run (only a push or schedule run is a baseline), and a
    // test's identity when its names were rewritten for display.
    "ALTER TABLE runs ADD COLUMN event TEXT;
    ALTER TABLE tests ADD COLUMN test_id TEXT;",
    // 3 → 4: each shard of a split pair, how long it took (what `history show`'s spread
    // reads; the next timing split reads each test's own time, in `tests`).
    "CREATE TABLE shards (
        run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        check_id TEXT NOT NULL,
        environment TEXT NOT NULL,
        shard INTEGER NOT NULL,
        shards INTEGER NOT NULL,
        status TEXT NOT NULL,
        duration_ms INTEGER NOT NULL,
        tests_executed INTEGER,
        PRIMARY KEY (run, check_id, environment, shard)
    ) WITHOUT ROWID;",
    // 4 → 5: a test's runs found by its identity (`history tests`, and queries by hand:
    // docs/local-use.md).
    "CREATE INDEX tests_by_test ON tests (check_id, test_id, suite, name);",
];

/// Why a file cannot be used.
pub(super) enum PrepareError {
    Refused(String),
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for PrepareError {
    fn from(e: rusqlite::Error) -> PrepareError {
        // "file is not a database" (SQLITE_NOTADB): a file of something else.
        if let rusqlite::Error::SqliteFailure(failure, _) = &e
            && failure.code == rusqlite::ErrorCode::NotADatabase
        {
            return PrepareError::Refused("not an SQLite database".to_owned());
        }
        PrepareError::Sqlite(e)
    }
}

/// Checks the file is ours (or new), sets the connection up (WAL, foreign keys), and
/// migrates it to [`SCHEMA_VERSION`].
pub(super) fn prepare(connection: &mut Connection, existed: bool) -> Result<(), PrepareError> {
    // Reading the header first: a file that is not SQLite fails here, before anything
    // could be written to it.
    // In one read transaction: a first writer creates the tables and stamps the id in
    // one transaction of its own, and three separate reads could see its file between
    // the two (no id, three tables).
    let (application, version, tables) = {
        let tx = connection.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let application: i32 = tx.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        let version: i32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let tables: i64 = tx.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        tx.commit()?;
        (application, version, tables)
    };
    if existed && application != APPLICATION_ID && (application != 0 || tables > 0) {
        return Err(PrepareError::Refused(format!(
            "not a cargo-verify-matrix history (application id {application:#x}, {tables} table(s))"
        )));
    }
    if version > SCHEMA_VERSION {
        return Err(PrepareError::Refused(format!(
            "its schema version {version} is newer than this build's {SCHEMA_VERSION}; use a newer cargo-verify-matrix"
        )));
    }
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    connection.pragma_update(None, "foreign_keys", true)?;
    let mut current = version;
    while current < SCHEMA_VERSION {
        let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another writer may have migrated it meanwhile.
        let now: i32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if now == current {
            tx.execute_batch(MIGRATIONS[usize::try_from(current).unwrap_or(0)])?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)?;
            tx.pragma_update(None, "user_version", current + 1)?;
        }
        tx.commit()?;
        current = connection.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    }
    Ok(())
}
