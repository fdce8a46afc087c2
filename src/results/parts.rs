//! A split check's shards' parts in a merged report, held as bytes. A check split four
//! ways at GitHub's largest matrix has a million parts; each as a [`ShardPart`] took
//! 112 bytes and its own place in a list, most of it the same for every part: the
//! shard, a short summary, a log path whose folder is the shard's. Here each part is
//! a few bytes (numbers as LEB128; the summary as its bytes, or not at all when it is
//! the one `run` gives a check that passed, made again from the exit code and the
//! duration; the log's name as its bytes and its folder as its place in a table the
//! environment's checks share), read back as the [`ShardPart`]s they were, in order,
//! and written as the same JSON.

use std::fmt::Write;
use std::sync::Arc;
use std::time::Duration;

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use super::duration::ForPeople;
use super::schema::{PartLog, Shard, ShardPart, Status};

/// Each shard's part of a split check's merged result, in shard order.
#[derive(Clone, Default)]
pub struct Parts {
    bytes: Box<[u8]>,
    /// The folders the parts' logs are in, by their place (see [`Folders`]).
    folders: Option<Arc<[Arc<str>]>>,
}

/// The log folders the parts of one environment's checks are made with: a part names
/// its log's folder by its place here. A new folder makes a new table (the parts made
/// before keep theirs), so a table is never changed once a part holds it; past
/// 64 folders, a folder is written whole in the part.
#[derive(Default)]
pub struct Folders {
    table: Option<Arc<[Arc<str>]>>,
    /// The bytes of the parts being written, its room used again check after check.
    scratch: Vec<u8>,
}

impl Folders {
    /// The most folders one table holds.
    const MOST: usize = 64;
}

/// Where `folder` is in `table`, added when there is room.
fn place(table: &mut Option<Arc<[Arc<str>]>>, folder: &str) -> Option<usize> {
    let known = table.as_deref().unwrap_or(&[]);
    if let Some(at) = known.iter().position(|f| **f == *folder) {
        return Some(at);
    }
    let at = known.len();
    if at >= Folders::MOST {
        return None;
    }
    let grown: Arc<[Arc<str>]> = known
        .iter()
        .cloned()
        .chain(std::iter::once(Arc::from(folder)))
        .collect();
    *table = Some(grown);
    Some(at)
}

// How a part's log path is written.
const NO_LOG: u8 = 0;
/// The folder by its place in the table, then the name.
const FOLDER_AT: u8 = 1;
/// The path whole (no folder split off).
const WHOLE: u8 = 2;
/// The folder written out, then the name.
const FOLDER_WRITTEN: u8 = 3;

// How a part's summary is written.
const SUMMARY_WRITTEN: u8 = 0;
/// Not written: the summary `run` gives a passing check, made again from the part's
/// exit code and duration when read (see [`passed`]).
const SUMMARY_PASSED: u8 = 1;

/// The summary `run` gives a check that passed with exit `code` in `ms`.
fn passed(code: i32, ms: u64) -> CompactString {
    let mut said = CompactString::const_new("passed (exit ");
    said.push_str(itoa::Buffer::new().format(code));
    said.push_str(") in ");
    if ms < 1000 {
        // As `ForPeople` writes it, without formatting machinery: a million parts.
        said.push_str(itoa::Buffer::new().format(ms));
        said.push_str("ms");
    } else {
        let _ = write!(said, "{}", ForPeople(Duration::from_millis(ms)));
    }
    said
}

/// Whether `summary` is what [`passed`] makes of the part's facts, exactly.
fn passed_as_said(status: Status, exit_code: Option<i32>, ms: u64, summary: &str) -> bool {
    let (Status::Pass, Some(code)) = (status, exit_code) else {
        return false;
    };
    summary.starts_with("passed (exit ") && passed(code, ms) == summary
}

const STATUSES: [Status; 4] = [Status::Pass, Status::Fail, Status::Error, Status::NotRun];

/// The parts of one check being written.
pub struct PartsWriter<'a> {
    folders: &'a mut Folders,
}

impl<'a> PartsWriter<'a> {
    pub fn new(folders: &'a mut Folders) -> PartsWriter<'a> {
        folders.scratch.clear();
        PartsWriter { folders }
    }

    /// Adds a part whose log is at `log` (its folder is everything to its last `/`).
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        shard: Shard,
        status: Status,
        exit_code: Option<i32>,
        duration_ms: u64,
        tests_executed: Option<u64>,
        summary: &str,
        log: Option<&str>,
    ) {
        let Folders { table, scratch: b } = &mut *self.folders;
        put(b, u64::from(shard.index));
        put(b, u64::from(shard.count));
        b.push(STATUSES.iter().position(|s| *s == status).unwrap_or(0) as u8);
        match exit_code {
            None => b.push(0),
            Some(code) => {
                b.push(1);
                // Zigzag: small negative codes stay short.
                put(b, u64::from(((code << 1) ^ (code >> 31)) as u32));
            }
        }
        put(b, duration_ms);
        match tests_executed {
            None => b.push(0),
            Some(n) => {
                b.push(1);
                put(b, n);
            }
        }
        if passed_as_said(status, exit_code, duration_ms, summary) {
            b.push(SUMMARY_PASSED);
        } else {
            b.push(SUMMARY_WRITTEN);
            put_str(b, summary);
        }
        match log {
            None => b.push(NO_LOG),
            Some(path) => match path.rfind('/') {
                None => {
                    b.push(WHOLE);
                    put_str(b, path);
                }
                Some(at) => {
                    let (folder, name) = path.split_at(at + 1);
                    match place(table, folder) {
                        Some(place) => {
                            b.push(FOLDER_AT);
                            put(b, place as u64);
                        }
                        None => {
                            b.push(FOLDER_WRITTEN);
                            put_str(b, folder);
                        }
                    }
                    put_str(b, name);
                }
            },
        }
    }

    pub fn finish(self) -> Parts {
        Parts {
            bytes: Box::from(self.folders.scratch.as_slice()),
            folders: self.folders.table.clone(),
        }
    }
}

impl Parts {
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn clear(&mut self) {
        *self = Parts::default();
    }

    /// The parts, in shard order.
    pub fn iter(&self) -> PartsIter<'_> {
        PartsIter { raw: self.raw() }
    }

    fn raw(&self) -> RawParts<'_> {
        RawParts {
            bytes: &self.bytes,
            folders: self.folders.as_deref().unwrap_or(&[]),
        }
    }

    pub fn first(&self) -> Option<ShardPart> {
        self.iter().next()
    }

    /// The first part's shard, read without the rest of the part.
    pub fn first_shard(&self) -> Option<Shard> {
        // A part begins with its shard.
        read_shard(&mut &self.bytes[..])
    }

    pub fn len(&self) -> usize {
        self.raw().count()
    }

    /// `parts` written as bytes.
    pub fn from_parts(parts: &[ShardPart]) -> Parts {
        let mut folders = Folders::default();
        let mut writer = PartsWriter::new(&mut folders);
        for part in parts {
            let log = part.log_path.as_ref().map(ToString::to_string);
            writer.push(
                part.shard,
                part.status,
                part.exit_code,
                part.duration_ms,
                part.tests_executed,
                &part.summary,
                log.as_deref(),
            );
        }
        writer.finish()
    }
}

/// The parts of one check, read back.
pub struct PartsIter<'a> {
    raw: RawParts<'a>,
}

impl Iterator for PartsIter<'_> {
    type Item = ShardPart;

    fn next(&mut self) -> Option<ShardPart> {
        self.raw.next().map(RawPart::owned)
    }
}

/// The parts of one check, each read as its bytes say, nothing copied.
struct RawParts<'a> {
    bytes: &'a [u8],
    folders: &'a [Arc<str>],
}

/// One part as its bytes say it.
struct RawPart<'a> {
    shard: Shard,
    status: Status,
    exit_code: Option<i32>,
    duration_ms: u64,
    tests_executed: Option<u64>,
    /// `None`: the summary [`passed`] makes.
    summary: Option<&'a str>,
    log: Option<RawLog<'a>>,
}

/// A part's log path: its folder (from the table or written) and its name.
struct RawLog<'a> {
    folder: Option<&'a Arc<str>>,
    written: &'a str,
    name: &'a str,
}

impl<'a> Iterator for RawParts<'a> {
    type Item = RawPart<'a>;

    fn next(&mut self) -> Option<RawPart<'a>> {
        if self.bytes.is_empty() {
            return None;
        }
        let part = self.read();
        if part.is_none() {
            // Only a writer above makes these bytes; were they ever not as written,
            // what is left is not read as parts.
            self.bytes = &[];
        }
        part
    }
}

/// A part's shard, the first thing written of it.
fn read_shard(b: &mut &[u8]) -> Option<Shard> {
    Some(Shard {
        index: u32::try_from(take(b)?).ok()?,
        count: u32::try_from(take(b)?).ok()?,
    })
}

impl<'a> RawParts<'a> {
    fn read(&mut self) -> Option<RawPart<'a>> {
        let b = &mut self.bytes;
        let shard = read_shard(b)?;
        let status = *STATUSES.get(usize::from(byte(b)?))?;
        let exit_code = match byte(b)? {
            0 => None,
            _ => {
                let z = u32::try_from(take(b)?).ok()?;
                Some(((z >> 1) as i32) ^ -((z & 1) as i32))
            }
        };
        let duration_ms = take(b)?;
        let tests_executed = match byte(b)? {
            0 => None,
            _ => Some(take(b)?),
        };
        let summary = match byte(b)? {
            SUMMARY_WRITTEN => Some(take_str(b)?),
            SUMMARY_PASSED => {
                exit_code?;
                None
            }
            _ => return None,
        };
        let log = match byte(b)? {
            NO_LOG => None,
            WHOLE => Some(RawLog {
                folder: None,
                written: "",
                name: take_str(b)?,
            }),
            FOLDER_AT => {
                let folder = self.folders.get(usize::try_from(take(b)?).ok()?)?;
                Some(RawLog {
                    folder: Some(folder),
                    written: "",
                    name: take_str(b)?,
                })
            }
            FOLDER_WRITTEN => Some(RawLog {
                folder: None,
                written: take_str(b)?,
                name: take_str(b)?,
            }),
            _ => return None,
        };
        Some(RawPart {
            shard,
            status,
            exit_code,
            duration_ms,
            tests_executed,
            summary,
            log,
        })
    }
}

impl RawPart<'_> {
    fn owned(self) -> ShardPart {
        let summary = match self.summary {
            Some(said) => CompactString::from(said),
            None => passed(self.exit_code.unwrap_or_default(), self.duration_ms),
        };
        let log_path = self.log.map(|log| match (log.folder, log.written) {
            (Some(folder), _) => PartLog::split(Some(folder.clone()), log.name),
            (None, "") => PartLog::split(None, log.name),
            (None, written) => PartLog::split(Some(Arc::from(written)), log.name),
        });
        ShardPart {
            shard: self.shard,
            status: self.status,
            exit_code: self.exit_code,
            duration_ms: self.duration_ms,
            tests_executed: self.tests_executed,
            summary,
            log_path,
        }
    }
}

impl std::fmt::Display for RawLog<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.folder.map_or(self.written, |folder| folder))?;
        f.write_str(self.name)
    }
}

impl Serialize for RawPart<'_> {
    /// As [`ShardPart`] is written, field for field.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Shown<'a, T>(&'a T);
        impl<T: std::fmt::Display> Serialize for Shown<'_, T> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self.0)
            }
        }
        let mut out = serializer.serialize_struct("ShardPart", 7)?;
        out.serialize_field("shard", &self.shard)?;
        out.serialize_field("status", &self.status)?;
        out.serialize_field("exit_code", &self.exit_code)?;
        out.serialize_field("duration_ms", &self.duration_ms)?;
        out.serialize_field("tests_executed", &self.tests_executed)?;
        match self.summary {
            Some(said) => out.serialize_field("summary", said)?,
            None => out.serialize_field(
                "summary",
                passed(self.exit_code.unwrap_or_default(), self.duration_ms).as_str(),
            )?,
        }
        out.serialize_field("log_path", &self.log.as_ref().map(Shown))?;
        out.end()
    }
}

fn put(bytes: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        bytes.push((n as u8) | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
}

fn put_str(bytes: &mut Vec<u8>, s: &str) {
    put(bytes, s.len() as u64);
    bytes.extend_from_slice(s.as_bytes());
}

#[inline]
fn byte(bytes: &mut &[u8]) -> Option<u8> {
    let (first, rest) = bytes.split_first()?;
    *bytes = rest;
    Some(*first)
}

#[inline]
fn take(bytes: &mut &[u8]) -> Option<u64> {
    // Most numbers here are under 128: one byte.
    if let Some((&first, rest)) = bytes.split_first()
        && first < 0x80
    {
        *bytes = rest;
        return Some(u64::from(first));
    }
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let b = byte(bytes)?;
        n |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

fn take_str<'a>(bytes: &mut &'a [u8]) -> Option<&'a str> {
    let len = usize::try_from(take(bytes)?).ok()?;
    if len > bytes.len() {
        return None;
    }
    let (s, rest) = bytes.split_at(len);
    *bytes = rest;
    std::str::from_utf8(s).ok()
}

impl PartialEq for Parts {
    fn eq(&self, other: &Parts) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Parts {}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Parts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.raw())
    }
}

impl<'de> Deserialize<'de> for Parts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Parts, D::Error> {
        let parts = Vec::<ShardPart>::deserialize(deserializer)?;
        Ok(Parts::from_parts(&parts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(index: u32, count: u32, exit: Option<i32>, log: Option<&str>) -> ShardPart {
        ShardPart {
            shard: Shard { index, count },
            status: STATUSES[(index as usize) % 4],
            exit_code: exit,
            duration_ms: u64::from(index) * 1_000_003,
            tests_executed: index
                .is_multiple_of(2)
                .then_some(u64::MAX - u64::from(index)),
            summary: format!("shard {index}: passed (exit 0) in 3ms — ü").into(),
            log_path: log.map(|l| PartLog::split(None, l)),
        }
    }

    #[test]
    fn parts_read_back_as_written_and_serialize_the_same() {
        let logs = [
            Some("logs/e001@1of4/c1.log"),
            None,
            Some("c3.log"),
            Some("/"),
            Some("a/b/"),
            Some("logs/e001@1of4/c2.log"),
        ];
        let exits = [
            Some(0),
            None,
            Some(-1),
            Some(i32::MIN),
            Some(i32::MAX),
            Some(137),
        ];
        let plain: Vec<ShardPart> = logs
            .iter()
            .zip(exits)
            .enumerate()
            .map(|(i, (log, exit))| part(i as u32 + 1, u32::MAX, exit, *log))
            .collect();
        let parts = Parts::from_parts(&plain);
        let back: Vec<ShardPart> = parts.iter().collect();
        assert_eq!(back, plain);
        assert_eq!(parts.len(), plain.len());
        assert_eq!(parts.first().as_ref(), plain.first());
        assert_eq!(parts.first_shard(), Some(plain[0].shard));
        assert_eq!(
            serde_json::to_string(&parts).unwrap(),
            serde_json::to_string(&plain).unwrap()
        );
        let read: Parts = serde_json::from_str(&serde_json::to_string(&plain).unwrap()).unwrap();
        assert_eq!(read, parts);
        assert!(Parts::default().is_empty() && Parts::default().first().is_none());
    }

    #[test]
    fn a_passing_part_s_own_summary_is_made_again_and_any_other_kept_as_it_was() {
        let pass = |exit: Option<i32>, ms: u64, summary: &str| ShardPart {
            shard: Shard { index: 1, count: 2 },
            status: Status::Pass,
            exit_code: exit,
            duration_ms: ms,
            tests_executed: None,
            summary: summary.into(),
            log_path: None,
        };
        let plain = vec![
            pass(Some(0), 3, "passed (exit 0) in 3ms"),
            pass(Some(3), 999, "passed (exit 3) in 999ms"),
            pass(Some(-2), 1_000, "passed (exit -2) in 1s"),
            pass(Some(0), 1_250, "passed (exit 0) in 1.2s"),
            pass(Some(0), 61_000, "passed (exit 0) in 1m 01s"),
            // Not as `run` says it for these facts: kept, byte for byte.
            pass(Some(0), 4, "passed (exit 0) in 3ms"),
            pass(Some(1), 3, "passed (exit 0) in 3ms"),
            pass(None, 3, "passed (exit 0) in 3ms"),
            pass(Some(0), 3, "passed (exit 0) in 3ms "),
            ShardPart {
                status: Status::Fail,
                ..pass(Some(0), 3, "passed (exit 0) in 3ms")
            },
        ];
        let parts = Parts::from_parts(&plain);
        assert_eq!(parts.iter().collect::<Vec<_>>(), plain);
        // The first five are made again: their summaries' bytes are not held.
        let held = |p: &ShardPart| Parts::from_parts(std::slice::from_ref(p)).bytes.len();
        for p in &plain[..5] {
            assert!(held(p) < 12, "{p:?} took {} bytes", held(p));
        }
        for p in &plain[5..] {
            assert!(held(p) > p.summary.len(), "{p:?}");
        }
    }

    #[test]
    fn a_table_full_of_folders_writes_the_next_folder_whole() {
        let mut folders = Folders::default();
        let mut all = Vec::new();
        let mut written = Vec::new();
        for i in 0..Folders::MOST + 3 {
            let mut writer = PartsWriter::new(&mut folders);
            let log = format!("logs/f{i}/c.log");
            writer.push(
                Shard { index: 1, count: 2 },
                Status::Pass,
                Some(0),
                1,
                None,
                "",
                Some(&log),
            );
            // The first folder again: found in the table, whatever else is in it.
            writer.push(
                Shard { index: 2, count: 2 },
                Status::Fail,
                Some(1),
                2,
                Some(3),
                "x",
                Some("logs/f0/d.log"),
            );
            all.push(writer.finish());
            written.push(log);
        }
        for (parts, log) in all.iter().zip(&written) {
            let read: Vec<String> = parts
                .iter()
                .map(|p| p.log_path.unwrap().to_string())
                .collect();
            assert_eq!(read, [log.as_str(), "logs/f0/d.log"]);
        }
        assert_eq!(folders.table.as_deref().unwrap().len(), Folders::MOST);
        // Parts made before a folder was added keep the table they were made with.
        assert_eq!(all[0].folders.as_deref().unwrap().len(), 1);
    }

    fn any_part() -> impl proptest::strategy::Strategy<Value = ShardPart> {
        use proptest::prelude::*;
        let summary = prop_oneof![
            Just(String::new()),
            "passed \\(exit -?[0-9]{1,3}\\) in [0-9]{1,3}(ms|s|\\.[0-9]s)",
            "\\PC{0,30}",
        ];
        let log = proptest::option::of(prop_oneof![
            "[a-c/]{0,12}",
            "logs/e[0-9]{1,2}@[1-4]of4/c[0-9]{1,3}\\.log",
            "\\PC{0,20}",
        ]);
        (
            (any::<u32>(), any::<u32>(), 0..4usize),
            (any::<Option<i32>>(), prop_oneof![0..5_000u64, any::<u64>()]),
            any::<Option<u64>>(),
            summary,
            log,
        )
            .prop_map(
                |((index, count, status), (exit, ms), tests, summary, log)| {
                    let passing = summary.starts_with("passed");
                    let derived = exit.map(|code| passed(code, ms).to_string());
                    ShardPart {
                        shard: Shard { index, count },
                        status: if passing {
                            Status::Pass
                        } else {
                            STATUSES[status]
                        },
                        exit_code: exit,
                        duration_ms: ms,
                        tests_executed: tests,
                        // Now and then the summary `run` gives these facts.
                        summary: match (status, derived) {
                            (0, Some(said)) => said.into(),
                            _ => summary.into(),
                        },
                        log_path: log.map(|l| PartLog::split(None, &l)),
                    }
                },
            )
    }

    proptest::proptest! {
        /// Any parts, written by one writer check after check (its folders shared),
        /// read back as they were and serialized as the same JSON.
        #[test]
        fn any_parts_read_back_as_they_were(
            checks in proptest::collection::vec(proptest::collection::vec(any_part(), 0..6), 1..8)
        ) {
            let mut folders = Folders::default();
            let mut written = Vec::new();
            for plain in &checks {
                let mut writer = PartsWriter::new(&mut folders);
                for p in plain {
                    let log = p.log_path.as_ref().map(ToString::to_string);
                    writer.push(
                        p.shard, p.status, p.exit_code, p.duration_ms, p.tests_executed,
                        &p.summary, log.as_deref(),
                    );
                }
                written.push(writer.finish());
            }
            for (parts, plain) in written.iter().zip(&checks) {
                proptest::prop_assert_eq!(&parts.iter().collect::<Vec<_>>(), plain);
                proptest::prop_assert_eq!(
                    serde_json::to_string(parts).unwrap(),
                    serde_json::to_string(plain).unwrap()
                );
            }
        }
    }
}
