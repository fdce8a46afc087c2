//! `split: timing`: a shard's share of a check's tests, from the ids the runner lists
//! and the durations the history recorded for them.
//!
//! Every shard computes the whole split itself, from the same list and the same
//! history, and keeps its own share: the split is the longest-first greedy one (each
//! test, longest first, to the shard with the least time so far), which no shard can
//! compute differently from the same inputs. A test with no recorded duration counts
//! as the mean of the known ones (1 ms when none is known), so without a history the
//! split is an equal-count one. No listed test is ever dropped. Each shard records a
//! digest of the list and of the split: `merge` refuses shards that disagree.

use std::path::Path;

use compact_str::CompactString;
use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};

use crate::manifest::Shell;
use crate::results::{Shard, SplitFacts, TestTiming as Timed};

/// The recorded durations `split: timing` splits by, read by the caller from the
/// history before the run.
#[derive(Debug, Clone, Default)]
pub enum Timings {
    /// No history: every split is an equal-count one.
    #[default]
    None,
    /// Each (check, environment)'s tests' latest durations.
    Recorded(std::sync::Arc<FxHashMap<(String, String), Vec<Timed>>>),
    /// The history exists but could not be read: a timing split fails (shards that
    /// split differently could drop tests).
    Unreadable(String),
}

/// The most test ids `list:` may print.
pub const MAX_LISTED: usize = 1_000_000;

/// What a shard takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    /// This shard's test ids, in the order they were listed.
    pub ids: Vec<String>,
    pub facts: SplitFacts,
    /// The expected time of each shard (ms), in shard order.
    pub loads: Vec<u64>,
}

/// The test ids in `list:`'s output: one per line, trimmed; empty lines, and lines
/// with a space that are neither a path nor a node id (pytest's `3 tests collected in
/// 0.01s`), are passed over. An absolute path under `cwd` is made relative to it, as
/// reports name files. Duplicates are kept once.
pub fn parse_list(output: &str, cwd: &Path) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut ids = Vec::new();
    for line in output.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let pathlike = line.contains("::") || line.contains('/') || line.contains('\\');
        if line.contains(char::is_whitespace) && !pathlike {
            continue;
        }
        let id = relative(line, cwd);
        if seen.insert(id.clone()) {
            ids.push(id);
        }
    }
    ids
}

/// `line` relative to `cwd` when it is an absolute path under it.
fn relative(line: &str, cwd: &Path) -> String {
    let path = Path::new(line);
    if path.is_absolute() {
        let base = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        for base in [base.as_path(), cwd] {
            if let Ok(rest) = path.strip_prefix(base) {
                return rest.to_string_lossy().replace('\\', "/");
            }
        }
    }
    line.to_owned()
}

/// The words of an id or a test's suite and name, as both are compared: split at
/// path separators, `::`, `.`, `›`, `#` and spaces, a source file's extension dropped.
fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| matches!(c, '/' | '\\' | ':' | '.' | '›' | '#') || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .filter(|w| {
            !matches!(
                *w,
                "py" | "rs" | "js" | "ts" | "mjs" | "cjs" | "jsx" | "tsx" | "go" | "rb" | "java"
            )
        })
        .collect()
}

/// The recorded duration of each listed id: the sum of the durations of the timed
/// tests it holds (a test belongs to the id whose words begin its own, the longest
/// such: a file holds its tests, a node id is its test). Ids no timed test belongs to
/// are absent.
pub fn durations(listed: &[String], timed: &[Timed]) -> FxHashMap<usize, u64> {
    let mut by_words: FxHashMap<String, usize> = FxHashMap::default();
    for (i, id) in listed.iter().enumerate() {
        by_words.entry(words(id).join("\u{1f}")).or_insert(i);
    }
    let mut out: FxHashMap<usize, u64> = FxHashMap::default();
    for test in timed {
        let label = format!("{} {}", test.suite, test.name);
        let mut words = words(&label);
        // A suite that names the test again (`X › X`) adds nothing.
        if test.name.starts_with(test.suite.as_str()) && !test.suite.is_empty() {
            words = self::words(&test.name);
        }
        let held = (1..=words.len())
            .rev()
            .find_map(|len| by_words.get(&words[..len].join("\u{1f}")))
            // A runner that lists bare test names (`go test -list`): the name alone.
            .or_else(|| by_words.get(&self::words(&test.name).join("\u{1f}")));
        if let Some(&i) = held {
            *out.entry(i).or_default() += test.duration_ms;
        }
    }
    out
}

/// Shard `shard`'s share of `listed`, split `shard.count` ways by `known` durations.
pub fn share(listed: &[String], known: &FxHashMap<usize, u64>, shard: Shard) -> Share {
    let count = shard.count.max(1) as usize;
    let mean = if known.is_empty() {
        1
    } else {
        (known.values().sum::<u64>() / known.len() as u64).max(1)
    };
    let weight = |i: usize| known.get(&i).copied().unwrap_or(mean).max(1);
    let mut order: Vec<usize> = (0..listed.len()).collect();
    order.sort_by(|&a, &b| {
        weight(b)
            .cmp(&weight(a))
            .then_with(|| listed[a].cmp(&listed[b]))
    });
    let mut loads = vec![0u64; count];
    let mut assigned = vec![0u32; listed.len()];
    for i in order {
        // The lightest shard; the first of equals.
        let (lightest, _) = loads
            .iter()
            .enumerate()
            .min_by_key(|(k, load)| (**load, *k))
            .unwrap_or((0, &0));
        loads[lightest] += weight(i);
        assigned[i] = u32::try_from(lightest + 1).unwrap_or(u32::MAX);
    }
    let ids: Vec<String> = listed
        .iter()
        .zip(&assigned)
        .filter(|(_, k)| **k == shard.index)
        .map(|(id, _)| id.clone())
        .collect();
    let mut listed_digest = Sha256::new();
    let mut split_digest = Sha256::new();
    for (id, k) in listed.iter().zip(&assigned) {
        listed_digest.update((id.len() as u64).to_le_bytes());
        listed_digest.update(id.as_bytes());
        split_digest.update((id.len() as u64).to_le_bytes());
        split_digest.update(id.as_bytes());
        split_digest.update(k.to_le_bytes());
    }
    let facts = SplitFacts {
        listed: listed.len() as u64,
        share: ids.len() as u64,
        timed: known.len() as u64,
        listed_digest: hex16(&listed_digest.finalize()),
        split_digest: hex16(&split_digest.finalize()),
    };
    Share { ids, facts, loads }
}

fn hex16(digest: &[u8]) -> CompactString {
    use std::fmt::Write as _;
    let mut out = CompactString::default();
    for byte in &digest[..8] {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// `ids` as arguments of a command run by `shell`: each quoted for it, joined by
/// spaces.
pub fn quoted(ids: &[String], shell: Shell) -> String {
    ids.iter()
        .map(|id| match shell {
            Shell::Pwsh | Shell::Powershell => format!("'{}'", id.replace('\'', "''")),
            Shell::Cmd => format!("\"{}\"", id.replace('"', "")),
            Shell::Bash | Shell::Sh | Shell::None => shell_words::quote(id).into_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(suite: &str, name: &str, ms: u64) -> Timed {
        Timed {
            suite: suite.into(),
            name: name.into(),
            duration_ms: ms,
        }
    }

    #[test]
    fn node_ids_and_files_take_the_durations_of_their_tests() {
        let listed: Vec<String> = [
            "tests/test_calc.py::test_add",
            "tests/test_calc.py::TestDiv::test_zero",
            "src/sum.test.js",
        ]
        .map(String::from)
        .to_vec();
        let known = durations(
            &listed,
            &[
                timed("tests.test_calc", "test_add", 30),
                timed("tests.test_calc.TestDiv", "test_zero", 7),
                timed("src/sum.test.js", "sum › adds", 5),
                timed("src/sum.test.js", "sum › subtracts", 6),
                timed("gone", "test_removed", 99),
                timed("example.com/calc", "TestAdd", 12),
            ],
        );
        assert_eq!(
            durations(
                &["TestAdd".to_owned()],
                &[timed("example.com/calc", "TestAdd", 12)]
            )
            .get(&0),
            Some(&12),
            "a bare test name, as `go test -list` prints it"
        );
        assert_eq!(known.get(&0), Some(&30));
        assert_eq!(known.get(&1), Some(&7));
        assert_eq!(known.get(&2), Some(&11));
        assert_eq!(known.len(), 3, "an unknown test id is ignored");
    }

    #[test]
    fn the_split_keeps_every_test_once_and_balances_by_time() {
        let listed: Vec<String> = (0..40).map(|i| format!("t{i:02}")).collect();
        // Skewed: a few long tests, many short ones.
        let known: FxHashMap<usize, u64> = (0..40)
            .map(|i| (i, if i < 4 { 1000 } else { 10 }))
            .collect();
        let shares: Vec<Share> = (1..=4)
            .map(|k| share(&listed, &known, Shard { index: k, count: 4 }))
            .collect();
        let mut all: Vec<String> = shares.iter().flat_map(|s| s.ids.clone()).collect();
        all.sort();
        assert_eq!(all, listed);
        let loads = &shares[0].loads;
        assert!(
            loads.iter().max().unwrap() - loads.iter().min().unwrap() <= 10,
            "{loads:?}"
        );
        // Every shard computed the same split.
        assert!(
            shares
                .windows(2)
                .all(|w| w[0].facts.split_digest == w[1].facts.split_digest)
        );
        // Without a history, an equal-count split.
        let counts: Vec<usize> = (1..=3)
            .map(|k| {
                share(&listed, &FxHashMap::default(), Shard { index: k, count: 3 })
                    .ids
                    .len()
            })
            .collect();
        assert_eq!(counts, [14, 13, 13]);
    }

    #[test]
    fn lists_are_read_as_runners_print_them() {
        let ids = parse_list(
            "tests/a.py::test_x\ntests/a.py::test_y[1 2]\n\n2 tests collected in 0.01s\ntests/a.py::test_x\n",
            Path::new("/nowhere"),
        );
        assert_eq!(ids, ["tests/a.py::test_x", "tests/a.py::test_y[1 2]"]);
        let ids = parse_list("/work/p/src/sum.test.js\n", Path::new("/work/p"));
        assert_eq!(ids, ["src/sum.test.js"]);
        assert_eq!(quoted(&ids, Shell::Bash), "src/sum.test.js");
        assert_eq!(quoted(&["it's".into()], Shell::Pwsh), "'it''s'");
    }
}
