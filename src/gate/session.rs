//! One agent session as the gate keeps it, in the user's state folder outside the
//! repository: the snapshot of the manifest it is trusted at, and its blocks in a row.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::state;
use super::trust::{Repository, Snapshot};
use crate::manifest::Dialect;

/// One session's state.
#[derive(Debug, Serialize, Deserialize)]
pub struct Session {
    session_id: String,
    root: PathBuf,
    /// What the session is judged by: the snapshot taken at its start, or why none
    /// could be.
    trusted: Result<Snapshot, String>,
    /// Its blocks in a row.
    pub blocks: u32,
    /// Where it is kept.
    #[serde(skip)]
    path: PathBuf,
}

impl Session {
    /// Session `id` of `repo`, as kept; else a new one, whose snapshot is taken now at
    /// its start event (`starting`), and otherwise the one a person pinned (`hook pin`)
    /// — or why there is none.
    pub fn of(
        repo: &Repository,
        id: &str,
        starting: bool,
        given: Option<&Path>,
        dialect: Dialect,
    ) -> Result<Session, String> {
        let path = repo.state.join("sessions").join(format!(
            "{}.json",
            state::key(&[&repo.root.to_string_lossy(), id])
        ));
        if let Some(mut kept) = state::read_large::<Session>(&path)
            .filter(|s| s.session_id == id && s.root == repo.root)
        {
            kept.path = path;
            return Ok(kept);
        }
        let trusted = if starting {
            Snapshot::take(repo, given, dialect)
        } else {
            Ok(repo.pinned().ok_or_else(|| {
                "the session's start is not known: the agent's client sent no start event, \
                 and no person pinned a manifest for such sessions (the commit at a first \
                 stop may be one the agent made). Register the hook for the client's \
                 session-start event (SessionStart, sessionStart), or run `cargo \
                 verify-matrix hook pin` at a terminal, as docs/agents.md shows"
                    .to_owned()
            })?)
        };
        Ok(Session {
            session_id: id.to_owned(),
            root: repo.root.clone(),
            trusted,
            blocks: 0,
            path,
        })
    }

    /// The snapshot the session is judged by, or why there is none.
    pub fn trusted(&self) -> Result<&Snapshot, String> {
        self.trusted.as_ref().map_err(Clone::clone)
    }

    /// Saves the session. A state that cannot be saved is said (the client's own flag
    /// still ends a loop), never fatal.
    pub fn save(&self) -> Result<(), String> {
        state::write(&self.path, self).map_err(|e| {
            format!(
                "cannot save the gate's state in {}: {e}",
                Path::new(&self.path).display()
            )
        })
    }
}
