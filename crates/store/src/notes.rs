//! Versioned notes. A Blueprint is a note of kind `blueprint`; which writes are allowed is the
//! workflow layer's rule, not the store's. Every edit bumps the content version, and an edit
//! names the version it was based on, so a stale writer is told rather than overwriting.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// A note's id (`note_N` in display form; the bare number is accepted too).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = i64))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NoteId(pub i64);

impl fmt::Display for NoteId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "note_{}", self.0)
    }
}

impl FromStr for NoteId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let digits = s.strip_prefix("note_").unwrap_or(s);
        digits
            .parse::<i64>()
            .map(NoteId)
            .map_err(|_| format!("'{s}' is not a valid note id (expected note_N)"))
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    Note,
    Blueprint,
}

impl NoteKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::Note => "note",
            NoteKind::Blueprint => "blueprint",
        }
    }
}

impl FromStr for NoteKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "note" => Ok(NoteKind::Note),
            "blueprint" => Ok(NoteKind::Blueprint),
            other => Err(format!(
                "unknown note kind '{other}' (expected note or blueprint)"
            )),
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub id: NoteId,
    pub kind: NoteKind,
    pub title: String,
    pub body: String,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// BlueprintLoops started from this note.
    pub run_count: i64,
    pub last_run_at: Option<i64>,
    /// The BlueprintLoop running it now, if any.
    pub active_loop_id: Option<i64>,
}

impl Note {
    /// The digest of what the note says (kind, title and body): lowercase hex SHA-256. A Lattice
    /// Step binds a Blueprint by version and this digest, so run bookkeeping (run count, active
    /// loop) never makes a reviewed Blueprint look changed.
    pub fn content_digest(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.kind.as_str());
        h.update("\n");
        h.update(&self.title);
        h.update("\n");
        h.update(&self.body);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[derive(Clone, Debug)]
pub struct NewNote {
    pub kind: NoteKind,
    pub title: String,
    pub body: String,
}

/// An edit based on `base_version`; absent fields stay as they are.
#[derive(Clone, Debug, Default)]
pub struct NoteEdit {
    pub base_version: i64,
    pub kind: Option<NoteKind>,
    pub title: Option<String>,
    pub body: Option<String>,
}

/// What an edit did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoteEditOutcome {
    Updated(Note),
    /// The note moved on since `base_version`; nothing was written.
    Stale {
        current: Note,
    },
}

const NOTE_COLUMNS: &str = "id, kind, title, body, version, created_at, updated_at, run_count, last_run_at, active_loop_id";

fn note_from_row(r: &crate::Row) -> Result<Note> {
    let kind: String = r.get(1)?;
    let note = Note {
        id: NoteId(r.get(0)?),
        kind: NoteKind::Note,
        title: r.get(2)?,
        body: r.get(3)?,
        version: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
        run_count: r.get(7)?,
        last_run_at: r.get(8)?,
        active_loop_id: r.get(9)?,
    };
    kind.parse::<NoteKind>()
        .map(|kind| Note { kind, ..note })
        .map_err(|e| StoreError::Corrupt(format!("note kind: {e}")))
}

/// `%`, `_` and the escape character itself are matched literally in a search.
fn like_pattern(q: &str) -> String {
    let mut out = String::with_capacity(q.len() + 2);
    out.push('%');
    for c in q.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

impl Tx<'_> {
    pub fn create_note(&mut self, n: &NewNote) -> Result<Note> {
        if n.title.trim().is_empty() {
            return Err(StoreError::Invalid("note title is empty".into()));
        }
        let id = NoteId(self.insert(
            "INSERT INTO notes (kind, title, body, version, created_at, updated_at)
             VALUES (?1, ?2, ?3, 1, ?4, ?4)",
            args![n.kind.as_str(), n.title, n.body, self.now],
        )?);
        self.event(
            "note_created",
            None,
            None,
            json!({"note_id": id.0, "kind": n.kind.as_str(), "version": 1}),
        )?;
        self.note(id)
    }

    pub fn note(&self, id: NoteId) -> Result<Note> {
        self.find_note(id)?
            .ok_or_else(|| StoreError::not_found("note", id))
    }

    pub fn find_note(&self, id: NoteId) -> Result<Option<Note>> {
        let sql = format!("SELECT {NOTE_COLUMNS} FROM notes WHERE id = ?1");
        self.query_opt(&sql, args![id.0], note_from_row)
    }

    /// Notes, most recently updated first; `query` matches title or body (case-insensitive
    /// for ASCII), `kind` filters.
    pub fn notes(
        &self,
        query: Option<&str>,
        kind: Option<NoteKind>,
        limit: u32,
    ) -> Result<Vec<Note>> {
        let pattern = query.map(like_pattern);
        // Case-insensitive on both backends: SQLite's LIKE folds ASCII case, PostgreSQL's
        // does not, so both sides are lowered.
        let pattern = pattern.map(|p| p.to_lowercase());
        let sql = format!(
            "SELECT {NOTE_COLUMNS} FROM notes
             WHERE (CAST(?1 AS TEXT) IS NULL OR lower(title) LIKE ?1 ESCAPE '\\'
                    OR lower(body) LIKE ?1 ESCAPE '\\')
               AND (CAST(?2 AS TEXT) IS NULL OR kind = ?2)
             ORDER BY updated_at DESC, id DESC LIMIT ?3"
        );
        self.query_all(
            &sql,
            args![pattern, kind.map(NoteKind::as_str), limit],
            note_from_row,
        )
    }

    /// Apply an edit if the note is still at `base_version`; the version grows by one.
    pub fn edit_note(&mut self, id: NoteId, e: &NoteEdit) -> Result<NoteEditOutcome> {
        let current = self.note(id)?;
        if current.version != e.base_version {
            return Ok(NoteEditOutcome::Stale { current });
        }
        if e.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(StoreError::Invalid("note title is empty".into()));
        }
        let kind = e.kind.unwrap_or(current.kind);
        let title = e.title.clone().unwrap_or(current.title);
        let body = e.body.clone().unwrap_or(current.body);
        let n = self.exec(
            "UPDATE notes SET kind = ?3, title = ?4, body = ?5, version = version + 1, updated_at = ?6
             WHERE id = ?1 AND version = ?2",
            args![id.0, e.base_version, kind.as_str(), title, body, self.now],
        )?;
        if n == 0 {
            return Ok(NoteEditOutcome::Stale {
                current: self.note(id)?,
            });
        }
        let note = self.note(id)?;
        self.event(
            "note_updated",
            None,
            None,
            json!({"note_id": id.0, "kind": kind.as_str(), "version": note.version}),
        )?;
        Ok(NoteEditOutcome::Updated(note))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_ids_parse_bare_and_prefixed() {
        assert_eq!("note_4".parse::<NoteId>().unwrap(), NoteId(4));
        assert_eq!("4".parse::<NoteId>().unwrap(), NoteId(4));
        assert!("note_x".parse::<NoteId>().is_err());
    }

    fn blueprint() -> Note {
        Note {
            id: NoteId(1),
            kind: NoteKind::Blueprint,
            title: "Add a login page".into(),
            body: "Outcomes: a form.".into(),
            version: 1,
            created_at: 1,
            updated_at: 1,
            run_count: 0,
            last_run_at: None,
            active_loop_id: None,
        }
    }

    #[test]
    fn content_digest_follows_the_content_only() {
        let n = blueprint();
        let d = n.content_digest();
        assert_eq!(d.len(), 64);
        assert!(
            d.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        // SHA-256 of "blueprint\nAdd a login page\nOutcomes: a form."
        assert_eq!(
            d,
            "5a6614f6a5c5c5c85661f3830d1af1d4f01c2b580e2e21536cb52046c8305976"
        );
        let retitled = Note {
            title: "Add a sign-in page".into(),
            ..n.clone()
        };
        assert_ne!(retitled.content_digest(), d, "a title change changes it");
        let edited = Note {
            body: "Outcomes: a form and a test.".into(),
            ..n.clone()
        };
        assert_ne!(edited.content_digest(), d, "a body change changes it");
        let rekinded = Note {
            kind: NoteKind::Note,
            ..n.clone()
        };
        assert_ne!(rekinded.content_digest(), d, "a kind change changes it");
        let ran = Note {
            run_count: 3,
            last_run_at: Some(9),
            active_loop_id: Some(4),
            version: 2,
            updated_at: 9,
            ..n.clone()
        };
        assert_eq!(
            ran.content_digest(),
            d,
            "the version and run bookkeeping do not"
        );
    }

    #[test]
    fn like_pattern_matches_wildcards_literally() {
        assert_eq!(like_pattern("50%_a\\"), "%50\\%\\_a\\\\%");
    }
}
