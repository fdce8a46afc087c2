//! Reading and writing result files: atomic replacement, version checks, size bounds.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::report::{MissingKind, REPORT_FORMAT_VERSION, Report};
use super::schema::READ_VERSIONS;
use super::verdict::{FAILED_TO_RUN, NO_RESULT_IN, NO_RESULTS, failed_to_run_prefix};
use crate::untrusted::read_at_most_into;

/// Partial result files (and journals) larger than this are refused rather than loaded:
/// they come from artifacts, one environment each.
pub const MAX_RESULT_BYTES: u64 = 64 * 1024 * 1024;

/// Reports larger than this are refused rather than loaded. A report holds every pair of
/// the matrix: the tool's own report of GitHub's largest matrix (256 environments × 1,000
/// checks) is a few hundred megabytes, well inside it.
pub const MAX_REPORT_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// Why a result file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ResultFileError {
    #[error("failed to read result file `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to write result file `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("result file `{}` is {size} bytes, more than the {limit}-byte limit", path.display())]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    #[error("result file `{}` goes on past the {limit}-byte limit (a device, a pipe or a growing file)", path.display())]
    Unbounded { path: PathBuf, limit: u64 },
    #[error("result file `{}` is not valid: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error(
        "result file `{}` has format_version {found}; this build of cargo-verify-matrix reads version {reads} (use the tool version that wrote it)",
        path.display()
    )]
    Version {
        path: PathBuf,
        found: String,
        /// The versions read, as words (`1`, `1 or 2`, `1, 2 or 3`).
        reads: String,
    },
}

/// Writes `value` as compact JSON to `path` atomically and durably: a temporary file in
/// the same folder, synced to disk, then renamed over the target. A reader sees the old
/// or the new file, never half of one.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), ResultFileError> {
    write_json(path, value, true)
}

/// [`write_json_atomic`] without waiting for the disk, for a file made from others that
/// are kept (a report, from the partial results): readers still see the old or the new
/// file, never half of one, but a crash of the machine (not of the process) right after
/// may lose the new one. A report of GitHub's largest matrices is hundreds of megabytes,
/// and waiting for them to reach the disk was a tenth of a merge.
pub fn write_json_replacing<T: Serialize>(path: &Path, value: &T) -> Result<(), ResultFileError> {
    write_json(path, value, false)
}

/// Writes a report (large: every pair of the matrix) to `path` atomically, as
/// [`write_json_replacing`] would, its rows serialized on every core.
pub fn write_report_replacing(path: &Path, report: &Report) -> Result<(), ResultFileError> {
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    write_file(path, false, |out| {
        super::stream::write_report(out, report, threads)
    })
}

fn write_json<T: Serialize>(path: &Path, value: &T, sync: bool) -> Result<(), ResultFileError> {
    write_file(path, sync, |out| {
        serde_json::to_writer(out, value).map_err(std::io::Error::from)
    })
}

/// Writes what `write` writes, then a newline, to a temporary file beside `path`, and
/// renames it over `path` (after syncing it when `sync`).
fn write_file(
    path: &Path,
    sync: bool,
    write: impl FnOnce(&mut std::io::BufWriter<&mut std::fs::File>) -> std::io::Result<()>,
) -> Result<(), ResultFileError> {
    let write_err = |source| ResultFileError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(write_err)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".verify-matrix-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(write_err)?;
    // Compact: these files are for programs (`render --format json` pretty-prints for
    // people), and at GitHub's largest matrices the indentation alone is megabytes.
    // Streamed: a report of such a matrix is hundreds of megabytes, never held whole.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
    write(&mut out).map_err(write_err)?;
    out.write_all(b"\n").map_err(write_err)?;
    out.flush().map_err(write_err)?;
    drop(out);
    if sync {
        tmp.as_file().sync_data().map_err(write_err)?;
    }
    tmp.persist(path).map_err(|e| write_err(e.error))?;
    Ok(())
}

/// Has every buffer of [`LARGE_BUFFER`] or more the process frees handed back to the
/// system, for a process about to read many result files (`merge`, `report`).
///
/// glibc's allocator takes a buffer of 128 KiB or more from the system and hands it
/// back when freed, but each time it does, it raises the size from which it does so to
/// the buffer's own (up to 32 MiB), and the size past which it gives the heap's free
/// end back to twice that. After the first large buffer, a merge's large buffers are
/// carved from the heap, and the space they leave stays the process's. Measured on
/// GitHub's largest matrix, interleaved: a tenth less memory split four ways (385 →
/// 355 MiB), 4 % less unsplit, in the same time; at 128 KiB, the same memory and 7 %
/// more time (each result file's buffer taken from the system and handed back).
/// Elsewhere (other systems, other C libraries) nothing.
pub fn hand_back_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a tunable of the allocator (under the allocator's own
    // lock); any value is valid.
    unsafe {
        nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, LARGE_BUFFER as i32);
    }
}

/// The size from which [`hand_back_large_buffers`] has buffers handed back.
pub const LARGE_BUFFER: usize = 512 * 1024;

/// Reads a whole file of at most [`MAX_RESULT_BYTES`]; a bigger one is refused unread.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, ResultFileError> {
    read_at_most_bytes(path, MAX_RESULT_BYTES, Vec::new())
}

/// [`read_bounded`] into the buffer the thread last handed back with [`hand_back`]
/// (a merge reads a thousand files on each core, one after the other).
pub fn read_bounded_reusing(path: &Path) -> Result<Vec<u8>, ResultFileError> {
    read_at_most_bytes(path, MAX_RESULT_BYTES, SPARE.take())
}

/// A buffer read into, kept for the thread's next [`read_bounded_reusing`] unless it
/// is larger than 4 MiB.
pub fn hand_back(buffer: Vec<u8>) {
    if buffer.capacity() <= KEPT_BUFFER {
        SPARE.set(buffer);
    }
}

/// The largest buffer a thread keeps for its next read: a result file of a thousand
/// checks is a quarter of a megabyte.
const KEPT_BUFFER: usize = 4 << 20;

thread_local! {
    /// The buffer of the thread's last read, handed back.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The size of the file at `path`, when it is at most `limit`; a larger one is refused.
fn size_within(path: &Path, limit: u64) -> Result<u64, ResultFileError> {
    let size = std::fs::metadata(path)
        .map_err(|source| ResultFileError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    if size > limit {
        return Err(ResultFileError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit,
        });
    }
    Ok(size)
}

fn read_at_most_bytes(
    path: &Path,
    limit: u64,
    buffer: Vec<u8>,
) -> Result<Vec<u8>, ResultFileError> {
    let read_err = |source| ResultFileError::Read {
        path: path.to_path_buf(),
        source,
    };
    let size = size_within(path, limit)?;
    // The size may lie (a FIFO, a device, a file still growing): read no further.
    let file = std::fs::File::open(path).map_err(read_err)?;
    read_at_most_into(file, limit, size, buffer)
        .map_err(read_err)?
        .ok_or_else(|| ResultFileError::Unbounded {
            path: path.to_path_buf(),
            limit,
        })
}

/// The keys that say what a JSON document is, read without building the rest of it.
///
/// Only an object is probed, and a key said twice is still there (the whole reading
/// then refuses it, naming the file): a result with a key repeated is never taken for
/// something that is not a result, and passed over.
#[derive(Debug, Default)]
pub struct Probe {
    pub format_version: Option<serde_json::Value>,
    pub environment: Option<serde::de::IgnoredAny>,
    pub checks: Option<serde::de::IgnoredAny>,
    pub manifest: Option<serde::de::IgnoredAny>,
    pub rows: Option<serde::de::IgnoredAny>,
}

impl<'de> serde::Deserialize<'de> for Probe {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Probe, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = Probe;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Probe, A::Error> {
                use serde::de::IgnoredAny;
                let mut probe = Probe::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "format_version" => {
                            let value = map.next_value::<serde_json::Value>()?;
                            probe.format_version.get_or_insert(value);
                        }
                        other => {
                            let value = map.next_value::<IgnoredAny>()?;
                            let slot = match other {
                                "environment" => &mut probe.environment,
                                "checks" => &mut probe.checks,
                                "manifest" => &mut probe.manifest,
                                "rows" => &mut probe.rows,
                                _ => continue,
                            };
                            *slot = Some(value);
                        }
                    }
                }
                Ok(probe)
            }
            // Read through as values (malformed or nested too deep, an error as in any
            // document), then not an object.
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Probe, A::Error> {
                while seq.next_element::<serde_json::Value>()?.is_some() {}
                Err(serde::de::Error::invalid_type(
                    serde::de::Unexpected::Seq,
                    &self,
                ))
            }
        }
        deserializer.deserialize_any(Keys)
    }
}

impl Probe {
    /// Reads the keys of `bytes`. `Ok(None)` for valid JSON that is not an object;
    /// malformed JSON is an error.
    pub fn read(path: &Path, bytes: &[u8]) -> Result<Option<Probe>, ResultFileError> {
        match serde_json::from_slice::<Probe>(bytes) {
            Ok(probe) => Ok(Some(probe)),
            Err(e) if e.classify() == serde_json::error::Category::Data => Ok(None),
            Err(e) => Err(ResultFileError::Invalid {
                path: path.to_path_buf(),
                message: e.to_string(),
            }),
        }
    }
}

impl Probe {
    /// Parses the probed document as `T`: `format_version` is checked first, so that a
    /// newer file gets a clear message rather than a schema error, then the document is
    /// deserialized straight from the bytes (no intermediate tree), naming the path of
    /// the first field at fault.
    pub fn parse<T: DeserializeOwned>(
        &self,
        path: &Path,
        bytes: &[u8],
    ) -> Result<T, ResultFileError> {
        self.parse_versioned(path, bytes, READ_VERSIONS)
    }

    /// [`Probe::parse`] for a document of one of the `accepted` format versions.
    pub fn parse_versioned<T: DeserializeOwned>(
        &self,
        path: &Path,
        bytes: &[u8],
        accepted: &[u32],
    ) -> Result<T, ResultFileError> {
        check_version(path, self.format_version.as_ref(), accepted)?;
        // The plain parse is the fast one; only a document that fails it is parsed
        // again, tracking where, for the message.
        // Every record from an object (`objects`): a bare list of a record's values is
        // refused at any depth.
        super::objects::from_slice(bytes).or_else(|_| {
            super::objects::from_slice_at(bytes).map_err(|e| ResultFileError::Invalid {
                path: path.to_path_buf(),
                message: e.to_string(),
            })
        })
    }
}

/// `versions` as words: `1`, `1 or 2`, `1, 2 or 3`.
fn in_words(versions: &[u32]) -> String {
    let words: Vec<String> = versions.iter().map(u32::to_string).collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => words.concat(),
    }
}

/// `format_version` (as found in the document) is one of `accepted`.
fn check_version(
    path: &Path,
    found: Option<&serde_json::Value>,
    accepted: &[u32],
) -> Result<(), ResultFileError> {
    match found {
        Some(v)
            if v.as_u64()
                .is_some_and(|v| accepted.iter().any(|a| u64::from(*a) == v)) =>
        {
            Ok(())
        }
        Some(v) => Err(ResultFileError::Version {
            path: path.to_path_buf(),
            found: v.to_string(),
            reads: in_words(accepted),
        }),
        None => Err(ResultFileError::Invalid {
            path: path.to_path_buf(),
            message: "no `format_version`: not a cargo-verify-matrix result".to_owned(),
        }),
    }
}

impl Report {
    /// Reads a report file too large to hold beside its parsed form (more than
    /// [`MAX_RESULT_BYTES`], at most [`MAX_REPORT_BYTES`]): parsed as it is read, so
    /// the bytes are never all in memory, its rows on every core. A file that does not parse is read again to
    /// word the error as [`Report::read`] does (its version first, then the path of the
    /// field at fault).
    pub fn read_streamed(path: &Path) -> Result<Report, ResultFileError> {
        let read_err = |source| ResultFileError::Read {
            path: path.to_path_buf(),
            source,
        };
        let size = size_within(path, MAX_REPORT_BYTES)?;
        let open = || -> Result<_, ResultFileError> {
            let file = std::fs::File::open(path).map_err(read_err)?;
            // The size may lie (a file still growing): read no further than the limit.
            Ok(std::io::BufReader::with_capacity(
                1 << 20,
                std::io::Read::take(file, MAX_REPORT_BYTES),
            ))
        };
        let accepted = [1, REPORT_FORMAT_VERSION];
        let invalid = |message: String| ResultFileError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        // The rows are cut apart and parsed on every core; a document the fast reader
        // does not take is read again the exact way, which words what is wrong.
        let threads = std::thread::available_parallelism().map_or(2, usize::from);
        let fast = super::stream::read_report(open()?, threads);
        let read = match fast {
            Some(report) => Ok(report),
            None => super::objects::from_reader(open()?),
        };
        let mut report: Report = match read {
            Ok(report) => report,
            Err(e) if e.is_io() => {
                return Err(read_err(e.into()));
            }
            Err(e) if e.is_syntax() || e.is_eof() => return Err(invalid(e.to_string())),
            Err(_) => {
                let probe: Probe =
                    serde_json::from_reader(open()?).map_err(|e| invalid(e.to_string()))?;
                if probe.rows.is_none() {
                    // Not a report: a partial result (or anything else) this large is
                    // refused as `merge` refuses it.
                    return Err(ResultFileError::TooLarge {
                        path: path.to_path_buf(),
                        size,
                        limit: MAX_RESULT_BYTES,
                    });
                }
                check_version(path, probe.format_version.as_ref(), &accepted)?;
                return Err(match super::objects::from_reader_at::<Report>(open()?) {
                    Err(e) => invalid(e.to_string()),
                    Ok(_) => invalid("changed while it was read".to_owned()),
                });
            }
        };
        check_version(
            path,
            Some(&serde_json::Value::from(report.format_version)),
            &accepted,
        )?;
        if report.format_version == 1 {
            report.upgrade_from_v1();
        }
        Ok(report)
    }

    /// Reads a report file (probed as `probe`): format 2, or format 1 upgraded.
    pub fn read(
        path: &std::path::Path,
        bytes: &[u8],
        probe: &Probe,
    ) -> Result<Report, ResultFileError> {
        if probe.rows.is_none() && probe.environment.is_some() && probe.checks.is_some() {
            return Err(ResultFileError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "it is one environment's result (what `run` writes), not a report: make \
                     the report first with `cargo verify-matrix merge --out report.json {}`",
                    path.parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .map_or_else(|| ".".to_owned(), |p| p.display().to_string())
                ),
            });
        }
        let mut report: Report = probe.parse_versioned(path, bytes, &[1, REPORT_FORMAT_VERSION])?;
        if report.format_version == 1 {
            report.upgrade_from_v1();
        }
        Ok(report)
    }

    /// Reads a report of format 1, which kept these states in prose: each missing
    /// pair's kind from its reason (and whether its environment reported at all), and
    /// whether a required pair failed to run from the reasons. The report is format 2
    /// afterwards.
    pub fn upgrade_from_v1(&mut self) {
        let reasons = std::mem::take(&mut self.reasons);
        let mut failed_to_run = false;
        for missing in &mut self.missing {
            // A required pair that errored before an exit code: its reason says so.
            let prefix = failed_to_run_prefix(&missing.check, &missing.environment);
            let before_running = reasons.iter().any(|r| r.starts_with(&prefix));
            missing.kind = if missing.reason.starts_with(FAILED_TO_RUN) {
                MissingKind::FailedToRun
            } else if self
                .infra_blocked
                .iter()
                .any(|b| b.environment == missing.environment)
                || missing.reason == NO_RESULTS
                || missing.reason.starts_with(NO_RESULT_IN)
            {
                MissingKind::NoResult
            } else if before_running {
                MissingKind::FailedToRun
            } else {
                MissingKind::NotRun
            };
            failed_to_run |= before_running;
        }
        self.reasons = reasons;
        self.failed_to_run |= failed_to_run;
        self.format_version = REPORT_FORMAT_VERSION;
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    /// A buffer of 1 MiB, taken after one of 4 MiB was freed, comes from the system
    /// (whose pages are handed out whole: more room than asked for), not from the heap.
    /// In a process of its own: the allocator gives a buffer from free space it already
    /// holds whatever its size, and the other tests of this process leave some.
    #[test]
    fn large_buffers_are_handed_back_however_large_the_last_one_was() {
        const NAME: &str =
            "results::io::tests::large_buffers_are_handed_back_however_large_the_last_one_was";
        if std::env::var_os("VERIFY_MATRIX_TEST_ALONE").is_none() {
            let alone = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads", "1"])
                .env("VERIFY_MATRIX_TEST_ALONE", "1")
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&alone.stdout);
            assert!(
                alone.status.success() && said.contains("1 passed"),
                "{said}"
            );
            return;
        }
        super::hand_back_large_buffers();
        drop(std::hint::black_box(vec![1u8; 4 << 20]));
        let asked = 2 * super::LARGE_BUFFER;
        let buffer = std::hint::black_box(vec![1u8; asked]);
        // SAFETY: the pointer is the start of a live allocation made by `malloc`.
        let room = unsafe { nix::libc::malloc_usable_size(buffer.as_ptr() as *mut _) };
        assert!(room >= asked + 4096 - 16, "{room}: taken from the heap");
    }
}
