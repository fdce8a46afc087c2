//! The JSON files of a downloaded artifact (a zip archive from pull-request runs:
//! untrusted). Nothing is written to disk: entries are read into memory, each and all
//! of them bounded, and an entry whose name climbs out of the archive (`../`, an
//! absolute path) or is a link is skipped with a note.

use std::io::Read;

/// The bounds on one archive.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most entries looked at.
    pub entries: usize,
    /// The most bytes one JSON file may have once unpacked.
    pub file_bytes: u64,
    /// The most bytes all of them may have once unpacked.
    pub total_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            entries: 10_000,
            file_bytes: 256 * 1024 * 1024,
            total_bytes: 1024 * 1024 * 1024,
        }
    }
}

/// An archive's JSON files, by their name in it (as notes show it: the archive is
/// untrusted), and what was skipped.
#[derive(Debug, Default)]
pub struct Unzipped {
    pub files: Vec<(String, Vec<u8>)>,
    pub notes: Vec<String>,
}

/// Reads the `.json` files of the zip archive `bytes` within `limits`; an archive that
/// is not a zip, or breaks a bound, is an error.
pub fn json_files(bytes: &[u8], limits: Limits) -> Result<Unzipped, String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("not a zip archive: {e}"))?;
    if archive.len() > limits.entries {
        return Err(format!(
            "{} entries, more than the {} read",
            archive.len(),
            limits.entries
        ));
    }
    let mut out = Unzipped::default();
    let mut total: u64 = 0;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| format!("entry {i}: {e}"))?;
        let name = entry
            .name()
            .map_err(|e| format!("entry {i}: {e}"))?
            .into_owned();
        if entry.is_dir() || !name.to_ascii_lowercase().ends_with(".json") {
            continue;
        }
        if entry.is_symlink() {
            out.notes
                .push(format!("skipped `{}`: a link", shown(&name)));
            continue;
        }
        if name.starts_with(['/', '\\']) || entry.enclosed_name().is_none() {
            out.notes.push(format!(
                "skipped `{}`: its path leaves the archive",
                shown(&name)
            ));
            continue;
        }
        // The size an entry declares may lie: the read itself is bounded.
        let mut data = Vec::new();
        let read = (&mut entry)
            .take(limits.file_bytes + 1)
            .read_to_end(&mut data)
            .map_err(|e| format!("`{}`: {e}", shown(&name)))?;
        if read as u64 > limits.file_bytes {
            return Err(format!(
                "`{}` unpacks to more than {} bytes",
                shown(&name),
                limits.file_bytes
            ));
        }
        total += read as u64;
        if total > limits.total_bytes {
            return Err(format!(
                "its JSON files unpack to more than {} bytes",
                limits.total_bytes
            ));
        }
        out.files.push((shown(&name), data));
    }
    Ok(out)
}

/// An entry's name as notes show it: bounded, control characters escaped.
fn shown(name: &str) -> String {
    name.chars()
        .take(200)
        .flat_map(char::escape_default)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn archive(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in entries {
            zip.start_file(*name, options).unwrap();
            zip.write_all(data).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn json_files_are_read_and_escapes_skipped() {
        let bytes = archive(&[
            ("verify-matrix-report.json", b"{}"),
            ("logs/unit.log", b"not json"),
            ("../../etc/evil.json", b"{}"),
            ("/abs.json", b"{}"),
        ]);
        let got = json_files(&bytes, Limits::default()).unwrap();
        let names: Vec<&str> = got.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["verify-matrix-report.json"]);
        assert_eq!(got.notes.len(), 2, "{:?}", got.notes);
        assert!(got.notes[0].contains("leaves the archive"));
    }

    #[test]
    fn names_are_shown_escaped() {
        let bytes = archive(&[("evil\u{1b}[2J\n.json", b"{}")]);
        let got = json_files(&bytes, Limits::default()).unwrap();
        assert_eq!(got.files[0].0, "evil\\u{1b}[2J\\n.json");
    }

    #[test]
    fn bounds_hold_whatever_the_archive_declares() {
        // 2 MiB of zeros compresses to a few KiB: a small download, a large file.
        let big = vec![b'0'; 2 * 1024 * 1024];
        let bytes = archive(&[("r.json", &big)]);
        assert!(bytes.len() < 64 * 1024);
        let limits = Limits {
            file_bytes: 1024 * 1024,
            ..Limits::default()
        };
        let err = json_files(&bytes, limits).unwrap_err();
        assert!(err.contains("unpacks to more than 1048576 bytes"), "{err}");
        let many = archive(&[("a.json", b"{}"), ("b.json", b"{}"), ("c.json", b"{}")]);
        let limits = Limits {
            entries: 2,
            ..Limits::default()
        };
        assert!(json_files(&many, limits).unwrap_err().contains("3 entries"));
        let limits = Limits {
            total_bytes: 5,
            ..Limits::default()
        };
        assert!(
            json_files(&many, limits)
                .unwrap_err()
                .contains("more than 5 bytes")
        );
        assert!(
            json_files(b"PK\x03\x04 nope", Limits::default())
                .unwrap_err()
                .starts_with("not a zip archive")
        );
    }
}
