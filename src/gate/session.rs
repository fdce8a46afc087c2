//! One agent session as the gate keeps it, in the user's state folder outside the
//! repository: the commit its manifest is trusted at, and its blocks in a row.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::state;
use super::trust::Repository;

/// One session's state.
#[derive(Debug, Serialize, Deserialize)]
pub struct Session {
    session_id: String,
    root: PathBuf,
    /// The commit the session is judged from (none: the repository had no commit).
    pub commit: Option<String>,
    /// Its blocks in a row.
    pub blocks: u32,
    /// Where it is kept.
    #[serde(skip)]
    path: PathBuf,
}

impl Session {
    /// Session `id` of `repo`, as kept; else a new one, whose commit is `HEAD` at its
    /// start event (`starting`), and otherwise the commit
    /// [`Repository::start_without_session`] finds — or why there is none.
    pub fn of(repo: &Repository, id: &str, starting: bool) -> Result<Session, String> {
        let path = repo.state.join("sessions").join(format!(
            "{}.json",
            state::key(&[&repo.root.to_string_lossy(), id])
        ));
        if let Some(mut kept) =
            state::read::<Session>(&path).filter(|s| s.session_id == id && s.root == repo.root)
        {
            kept.path = path;
            return Ok(kept);
        }
        let commit = if starting {
            repo.head()
        } else {
            Some(repo.start_without_session()?)
        };
        Ok(Session {
            session_id: id.to_owned(),
            root: repo.root.clone(),
            commit,
            blocks: 0,
            path,
        })
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
