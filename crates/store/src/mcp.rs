//! MCP servers as rows (issue 19): each server's definition, kept as the JSON the mcp crate
//! validated, and the record of every MCP call a run made. Server status is not stored: the
//! mcp crate publishes it as `mcp_server_status` events.

use crate::records::KEPT_CALLS_PER_RUN;
use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::{RunId, ThreadId};

/// A call's result is kept up to this many characters (the model saw its own clipped copy).
pub const MCP_RESULT_KEPT_CHARS: usize = 2000;
/// A call's error is kept up to this many characters.
pub const MCP_ERROR_KEPT_CHARS: usize = 500;

/// One server's stored definition.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct McpServerRow {
    pub name: String,
    /// The definition as the mcp crate wrote it (`troupe_mcp::ServerDef`'s JSON).
    pub definition: serde_json::Value,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One MCP call of a run, read-only or not.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct McpCallRecord {
    pub run_id: RunId,
    pub call_id: String,
    pub server: String,
    /// The server's own name for the tool (not the `<server>__<tool>` the model saw).
    pub tool: String,
    /// The server marked the tool `readOnlyHint: true`.
    pub read_only: bool,
    pub duration_ms: u64,
    pub ok: bool,
    pub error: Option<String>,
    /// The result as kept: at most [`MCP_RESULT_KEPT_CHARS`] characters.
    pub result: String,
}

impl Tx<'_> {
    /// Store a server's definition, new or replacing the one of that name; answers whether it
    /// was new. A replacement keeps its `created_at`.
    pub fn put_mcp_server(&mut self, name: &str, definition: &serde_json::Value) -> Result<bool> {
        if !definition.is_object() {
            return Err(StoreError::Invalid(format!(
                "MCP server {name:?}: a definition is a JSON object, not {definition}"
            )));
        }
        let text = definition.to_string();
        // Insert first: on PostgreSQL a second writer of the same new name waits here for the
        // first to commit, then finds the row and updates it instead of failing on the key.
        let inserted = self.exec(
            "INSERT INTO mcp_servers (name, definition, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?3) ON CONFLICT (name) DO NOTHING",
            args![name, text, self.now],
        )?;
        let created = inserted == 1;
        if !created {
            self.exec(
                "UPDATE mcp_servers SET definition = ?2, updated_at = ?3 WHERE name = ?1",
                args![name, text, self.now],
            )?;
        }
        self.event(
            "mcp_server_saved",
            None,
            None,
            json!({"name": name, "created": created}),
        )?;
        Ok(created)
    }

    /// The server of that name, if one is stored.
    pub fn mcp_server(&self, name: &str) -> Result<Option<McpServerRow>> {
        self.query_opt(
            "SELECT name, definition, created_at, updated_at FROM mcp_servers WHERE name = ?1",
            args![name],
            server_row,
        )
    }

    /// Every stored server, by name.
    pub fn mcp_servers(&self) -> Result<Vec<McpServerRow>> {
        self.query_all(
            "SELECT name, definition, created_at, updated_at FROM mcp_servers ORDER BY name",
            args![],
            server_row,
        )
    }

    /// Remove a server's definition; answers whether there was one. Its calls stay recorded.
    pub fn delete_mcp_server(&mut self, name: &str) -> Result<bool> {
        let gone = self.exec("DELETE FROM mcp_servers WHERE name = ?1", args![name])? == 1;
        if gone {
            self.event("mcp_server_deleted", None, None, json!({"name": name}))?;
        }
        Ok(gone)
    }

    /// Record a finished MCP call. Like command records, a run keeps its first
    /// `KEPT_CALLS_PER_RUN` (false when this one was not kept); every call is still told as an
    /// `mcp_call_finished` event. The result and error are clipped at a character boundary.
    pub fn record_mcp_call(&mut self, thread: ThreadId, c: &McpCallRecord) -> Result<bool> {
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM mcp_calls WHERE run_id = ?1",
            args![c.run_id.0],
            |r| r.get(0),
        )?;
        let kept = n < KEPT_CALLS_PER_RUN;
        if kept {
            let error = c
                .error
                .as_deref()
                .map(|e| clip_chars(e, MCP_ERROR_KEPT_CHARS));
            self.exec(
                "INSERT INTO mcp_calls (run_id, thread_id, call_id, server, tool, read_only, duration_ms, ok, error, result, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                args![
                    c.run_id.0,
                    thread.0,
                    c.call_id,
                    c.server,
                    c.tool,
                    c.read_only,
                    c.duration_ms,
                    c.ok,
                    error,
                    clip_chars(&c.result, MCP_RESULT_KEPT_CHARS),
                    self.now
                ],
            )?;
        }
        self.event(
            "mcp_call_finished",
            Some(thread),
            Some(c.run_id),
            json!({
                "call_id": c.call_id,
                "server": c.server,
                "tool": c.tool,
                "ok": c.ok,
                "duration_ms": c.duration_ms,
            }),
        )?;
        Ok(kept)
    }

    /// The run's kept MCP calls, in the order they were recorded.
    pub fn mcp_calls(&self, run: RunId) -> Result<Vec<McpCallRecord>> {
        self.query_all(
            "SELECT run_id, call_id, server, tool, read_only, duration_ms, ok, error, result
             FROM mcp_calls WHERE run_id = ?1 ORDER BY id",
            args![run.0],
            |r| {
                Ok(McpCallRecord {
                    run_id: RunId(r.get(0)?),
                    call_id: r.get(1)?,
                    server: r.get(2)?,
                    tool: r.get(3)?,
                    read_only: r.get(4)?,
                    duration_ms: r.get(5)?,
                    ok: r.get(6)?,
                    error: r.get(7)?,
                    result: r.get(8)?,
                })
            },
        )
    }
}

fn server_row(r: &crate::Row) -> Result<McpServerRow> {
    let name: String = r.get(0)?;
    let text: String = r.get(1)?;
    let definition = serde_json::from_str(&text).map_err(|e| {
        StoreError::Corrupt(format!(
            "MCP server {name:?}: stored definition is not JSON: {e}"
        ))
    })?;
    Ok(McpServerRow {
        name,
        definition,
        created_at: r.get(2)?,
        updated_at: r.get(3)?,
    })
}

/// The first `max` characters of `s` (never splitting one).
fn clip_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::clip_chars;

    #[test]
    fn clipping_counts_characters_not_bytes() {
        assert_eq!(clip_chars("héllo", 2), "hé");
        assert_eq!(clip_chars("héllo", 5), "héllo");
        assert_eq!(clip_chars("héllo", 9), "héllo");
        assert_eq!(clip_chars("", 0), "");
        assert_eq!(clip_chars("🦀🦀🦀", 1), "🦀");
    }
}
