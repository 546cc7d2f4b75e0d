//! Runtime Boss projects (issue 18 item 17): a directory the boss opened a project boss in,
//! registered once; registering it again answers the existing row.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::SessionId;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Project {
    pub id: i64,
    pub directory: String,
    pub title: String,
    /// The project boss session opened there.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub session_id: Option<SessionId>,
    pub created_at: i64,
}

const COLUMNS: &str = "id, directory, title, session_id, created_at";

fn row(r: &crate::db::Row) -> Result<Project> {
    Ok(Project {
        id: r.get(0)?,
        directory: r.get(1)?,
        title: r.get(2)?,
        session_id: r.get::<Option<i64>>(3)?.map(SessionId),
        created_at: r.get(4)?,
    })
}

impl Tx<'_> {
    /// Register `directory` as a project with its boss session. `(project, true)`: newly
    /// registered; `(existing, false)`: it was already, and nothing changed.
    pub fn project_register(
        &mut self,
        directory: &str,
        title: &str,
        session: SessionId,
    ) -> Result<(Project, bool)> {
        if directory.trim().is_empty() {
            return Err(StoreError::Invalid("project directory is empty".into()));
        }
        if let Some(p) = self.project_by_directory(directory)? {
            return Ok((p, false));
        }
        let id = self.insert(
            "INSERT INTO projects (directory, title, session_id, created_at) VALUES (?1, ?2, ?3, ?4)",
            args![directory, title, session.0, self.now],
        )?;
        self.event(
            "project_registered",
            None,
            None,
            json!({"project_id": id, "directory": directory, "session_id": session.0}),
        )?;
        let p = self
            .project_by_directory(directory)?
            .ok_or_else(|| StoreError::Corrupt("project vanished after its insert".into()))?;
        Ok((p, true))
    }

    pub fn project_by_directory(&self, directory: &str) -> Result<Option<Project>> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM projects WHERE directory = ?1"),
            args![directory],
            row,
        )
    }

    /// Projects, newest first.
    pub fn projects(&self, limit: u32) -> Result<Vec<Project>> {
        self.query_all(
            &format!("SELECT {COLUMNS} FROM projects ORDER BY created_at DESC, id DESC LIMIT ?1"),
            args![limit],
            row,
        )
    }
}
