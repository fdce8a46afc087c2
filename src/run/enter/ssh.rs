//! Entering a remote host over ssh (`enter.ssh`): the repository's files (those git
//! tracks and those it does not ignore) are copied to the folder `path` there, with
//! this tool's binary when the host's copy is not this one; the run inside runs there,
//! its stdin the link to this run; its result, journal and logs are brought back into
//! the output folder here.
//!
//! The folder is the tool's: each copy first removes the files the previous copy put
//! there (listed in `.verify-matrix/synced`), so a file deleted here is gone there too,
//! and the environment's earlier result, so none can pass for this run's.

use std::ffi::OsString;
use std::io::{Read as _, Seek as _};
use std::path::{Path, PathBuf};

use super::{Inner, PLACE, Step, WayIn};
use crate::manifest::Enter;
use crate::run::process::StopReceiver;

/// Where the tool's binary is kept in the remote folder.
const PROGRAM: &str = ".verify-matrix/bin/cargo-verify-matrix";

/// The list of the files the last copy put in the remote folder.
const SYNCED: &str = ".verify-matrix/synced";

/// The most the results brought home may weigh: a host that sends more is cut off.
const MAX_HOME: u64 = 1 << 30;

/// A remote host and the folder the repository is copied to there.
pub(super) struct Remote {
    /// `ssh`, its options and the host, before the remote command.
    ssh: Vec<OsString>,
    /// The host, as the manifest names it.
    host: String,
    /// The remote folder (absolute).
    path: String,
}

impl Remote {
    pub fn new(enter: &Enter, inner: &Inner<'_>) -> Result<Remote, String> {
        let Enter::Ssh {
            host,
            path,
            port,
            options,
        } = enter
        else {
            return Err(format!(
                "`{}` is entered by {}, not ssh",
                inner.name,
                enter.kind()
            ));
        };
        let mut ssh: Vec<OsString> = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20"]
            .into_iter()
            .map(OsString::from)
            .collect();
        if let Some(port) = port {
            ssh.push("-p".into());
            ssh.push(port.to_string().into());
        }
        ssh.extend(options.iter().map(OsString::from));
        ssh.push("--".into());
        ssh.push(host.into());
        Ok(Remote {
            ssh,
            host: host.clone(),
            path: path.clone(),
        })
    }

    /// `ssh … host 'command'`.
    fn command(&self, command: &str) -> Vec<OsString> {
        let mut argv = self.ssh.clone();
        argv.push(command.into());
        argv
    }

    /// `local`, a path here, as the run there sees it: inside the repository, the same
    /// place in the remote folder.
    fn there(&self, inner: &Inner<'_>, local: &Path) -> String {
        match local.strip_prefix(inner.repo) {
            Ok(rel) if rel.as_os_str().is_empty() => self.path.clone(),
            Ok(rel) => format!("{}/{}", self.path, rel.to_string_lossy()),
            Err(_) => local.to_string_lossy().into_owned(),
        }
    }

    /// The run inside, in the remote folder.
    pub fn way_in(&self, inner: &Inner<'_>) -> WayIn {
        let program = format!("{}/{PROGRAM}", self.path);
        let mut words: Vec<String> = vec![
            "/bin/sh".into(),
            "-c".into(),
            PLACE.into(),
            "cargo-verify-matrix".into(),
            program,
            "run".into(),
        ];
        words.extend(inner.args.iter().map(|a| self.there(inner, Path::new(a))));
        let command = format!(
            "cd {} && {}={} {}=stdin exec {}",
            shell_words::quote(&self.path),
            super::ENTERED_VAR,
            shell_words::quote(inner.name),
            super::LINK_VAR,
            shell_words::join(&words)
        );
        WayIn {
            argv: self.command(&command),
            ..WayIn::default()
        }
    }

    /// Copies the repository's files to the remote folder, and this tool's binary when
    /// the host's is not this one.
    pub async fn send(
        &self,
        inner: &Inner<'_>,
        stop: StopReceiver,
        say: &(dyn Fn(&str) + Sync),
    ) -> Result<(), String> {
        let program = inner.program.to_path_buf();
        let digest = tokio::task::spawn_blocking(move || digest_of(&program))
            .await
            .map_err(|e| e.to_string())
            .and_then(|d| d.map_err(|e| e.to_string()))
            .map_err(|e| format!("`{}` cannot be read: {e}", inner.program.display()))?;
        // What the host has: the digest of its copy of the binary, if any.
        let has = tempfile::tempfile().map_err(|e| format!("a temporary file: {e}"))?;
        let ask = self.command(&format!(
            "cat {}/{PROGRAM}.sha256 2>/dev/null; exit 0",
            shell_words::quote(&self.path)
        ));
        let asked = Step::new(&ask)
            .stdout(has.try_clone().map_err(|e| e.to_string())?, 1024)
            .run(stop.clone(), say)
            .await?;
        if asked.exit_code != 0 {
            return Err(format!(
                "`{}` did not answer over ssh: {}",
                self.host,
                asked.failure(&ask)
            ));
        }
        let mut known = String::new();
        let mut has = has;
        if has.rewind().is_ok() {
            let _ = (&has).take(1024).read_to_string(&mut known);
        }
        let with_program = known.trim() != digest;
        let out_rel = inner
            .out
            .strip_prefix(inner.repo)
            .ok()
            .map(Path::to_path_buf);
        let (repo, program) = (inner.repo.to_path_buf(), inner.program.to_path_buf());
        let archive = tokio::task::spawn_blocking(move || {
            pack(
                &repo,
                out_rel.as_deref(),
                with_program.then_some((&program, &digest)),
            )
        })
        .await
        .map_err(|e| format!("copying the repository: {e}"))?
        .map_err(|e| format!("copying the repository: {e}"))?;
        let stale = inner.result_files().map(|f| self.there(inner, &f));
        let unpack = self.command(&format!(
            "set -e; mkdir -p {path}; cd {path}; if [ -f {SYNCED} ]; then xargs -0 rm -f -- < {SYNCED}; fi; rm -f -- {stale}; tar -xf -",
            path = shell_words::quote(&self.path),
            stale = shell_words::join(stale),
        ));
        let sent = Step::new(&unpack).stdin(archive).run(stop, say).await?;
        if sent.exit_code != 0 {
            return Err(format!(
                "the repository could not be copied to `{}:{}`: {}",
                self.host,
                self.path,
                sent.failure(&unpack)
            ));
        }
        Ok(())
    }

    /// Brings the run's result, journal and logs home into the output folder.
    pub async fn bring_home(
        &self,
        inner: &Inner<'_>,
        stop: StopReceiver,
        say: &(dyn Fn(&str) + Sync),
    ) -> Result<(), String> {
        let [result, journal] = inner.result_files().map(|f| {
            f.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let wanted = [result, journal, format!("logs/{}", inner.stem)];
        let fetch = self.command(&format!(
            r#"cd {} 2>/dev/null || exit 0; set --; for f in {}; do if [ -e "$f" ]; then set -- "$@" "$f"; fi; done; if [ $# -gt 0 ]; then exec tar -cf - "$@"; fi"#,
            shell_words::quote(&self.there(inner, inner.out)),
            shell_words::join(&wanted),
        ));
        let mut home = tempfile::tempfile().map_err(|e| format!("a temporary file: {e}"))?;
        let fetched = Step::new(&fetch)
            .stdout(home.try_clone().map_err(|e| e.to_string())?, MAX_HOME)
            .run(stop, say)
            .await
            .map_err(|e| {
                format!(
                    "the results could not be brought home from `{}`: {e}",
                    self.host
                )
            })?;
        if fetched.exit_code != 0 {
            return Err(format!(
                "the results could not be brought home from `{}`: {}",
                self.host,
                fetched.failure(&fetch)
            ));
        }
        if home.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
            return Ok(());
        }
        home.rewind().map_err(|e| e.to_string())?;
        let mut archive = tar::Archive::new(home);
        archive.set_overwrite(true);
        archive.set_preserve_permissions(false);
        // Nothing is written outside the output folder, whatever the names say.
        archive.unpack(inner.out).map_err(|e| {
            format!(
                "the results from `{}` could not be unpacked into `{}`: {e}",
                self.host,
                inner.out.display()
            )
        })
    }
}

/// The files of the repository at `repo` to copy: those git tracks and those it does
/// not ignore (without git, every file but `.git` and `target`), less the output folder.
fn files(repo: &Path, out_rel: Option<&Path>) -> Vec<PathBuf> {
    let listed = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success());
    let mut files: Vec<PathBuf> = match listed {
        Some(output) => output
            .stdout
            .split(|b| *b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| PathBuf::from(String::from_utf8_lossy(f).into_owned()))
            .collect(),
        None => walkdir::WalkDir::new(repo)
            .into_iter()
            .filter_entry(|e| {
                e.depth() != 1 || !matches!(e.file_name().to_str(), Some(".git" | "target"))
            })
            .filter_map(Result::ok)
            .filter(|e| !e.file_type().is_dir())
            .filter_map(|e| e.path().strip_prefix(repo).ok().map(Path::to_path_buf))
            .collect(),
    };
    files.retain(|f| {
        !f.starts_with(".verify-matrix/bin")
            && f != Path::new(SYNCED)
            && out_rel.is_none_or(|out| out.as_os_str().is_empty() || !f.starts_with(out))
    });
    files.sort();
    files.dedup();
    files
}

/// A tar archive (in a temporary file) of the repository's files, the list of them,
/// and `program` (with its digest) when given.
fn pack(
    repo: &Path,
    out_rel: Option<&Path>,
    program: Option<(&PathBuf, &String)>,
) -> std::io::Result<std::fs::File> {
    let mut file = tempfile::tempfile()?;
    let mut builder = tar::Builder::new(file.try_clone()?);
    builder.follow_symlinks(false);
    let mut list = Vec::new();
    for rel in files(repo, out_rel) {
        match builder.append_path_with_name(repo.join(&rel), &rel) {
            Ok(()) => {
                list.extend_from_slice(rel.to_string_lossy().as_bytes());
                list.push(0);
            }
            // Tracked but deleted here: not copied.
            Err(e) if repo.join(&rel).symlink_metadata().is_err() => drop(e),
            Err(e) => return Err(e),
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let header = |size: u64, mode: u32| {
        let mut header = tar::Header::new_gnu();
        header.set_size(size);
        header.set_mode(mode);
        header.set_mtime(now);
        header.set_cksum();
        header
    };
    builder.append_data(
        &mut header(list.len() as u64, 0o644),
        SYNCED,
        list.as_slice(),
    )?;
    if let Some((program, digest)) = program {
        let mut binary = std::fs::File::open(program)?;
        let size = binary.metadata()?.len();
        builder.append_data(&mut header(size, 0o755), PROGRAM, &mut binary)?;
        builder.append_data(
            &mut header(digest.len() as u64, 0o644),
            format!("{PROGRAM}.sha256"),
            digest.as_bytes(),
        )?;
    }
    builder.into_inner()?.sync_all()?;
    file.rewind()?;
    Ok(file)
}

/// The SHA-256 of the file at `path`, in hex.
fn digest_of(path: &Path) -> std::io::Result<String> {
    use sha2::{Digest as _, Sha256};
    let mut hasher = Sha256::new();
    let mut file = std::fs::File::open(path)?;
    std::io::copy(&mut file, &mut hasher)?;
    Ok(format!("{:x}", hasher.finalize()))
}
