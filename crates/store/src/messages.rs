//! Messages and their parts.

use crate::args;
use crate::{Result, StoreError, Tx};
use serde_json::json;
use std::collections::HashMap;
use troupe_core::drive::RootState;
use troupe_core::message::{Finish, Message, Origin, Part, PartBody, Role};
use troupe_core::{MessageId, RunId, ThreadId};

/// The latest message under a root, as the root's state reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootTail {
    pub id: MessageId,
    pub role: Role,
    pub finish: Option<Finish>,
    pub has_error: bool,
}

/// A message about to be written.
#[derive(Clone, Debug)]
pub struct NewMessage {
    pub thread_id: ThreadId,
    pub role: Role,
    pub origin: Origin,
    pub is_root: bool,
    /// For non-roots: the task it belongs to.
    pub root_id: Option<MessageId>,
    pub run_id: Option<RunId>,
    pub parts: Vec<Part>,
    pub finish: Option<Finish>,
    pub error: Option<String>,
    pub delivery_key: Option<String>,
    pub metadata: Option<serde_json::Value>,
}

impl Tx<'_> {
    pub fn insert_message(&mut self, m: &NewMessage) -> Result<Message> {
        if m.is_root && m.role != Role::User {
            return Err(StoreError::Invalid(
                "only a user message can be a root".into(),
            ));
        }
        let id = MessageId(self.insert(
            "INSERT INTO messages (thread_id, role, origin, origin_detail, is_root, root_id, run_id, finish, error, delivery_key, metadata, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            args![
                m.thread_id.0,
                m.role.as_str(),
                m.origin.kind(),
                m.origin.detail(),
                m.is_root,
                m.root_id.map(|r| r.0),
                m.run_id.map(|r| r.0),
                m.finish.map(|f| f.as_str()),
                m.error,
                m.delivery_key,
                m.metadata.as_ref().map(|v| v.to_string()),
                self.now
            ],
        )?);
        if m.is_root {
            self.exec(
                "UPDATE messages SET root_id = id WHERE id = ?1",
                args![id.0],
            )?;
        }
        for (seq, part) in m.parts.iter().enumerate() {
            self.insert_part(id, seq as i64, part)?;
        }
        let root_id = if m.is_root { Some(id) } else { m.root_id };
        let message = Message {
            id,
            thread_id: m.thread_id,
            role: m.role,
            origin: m.origin.clone(),
            is_root: m.is_root,
            root_id,
            run_id: m.run_id,
            parts: m.parts.clone(),
            finish: m.finish,
            error: m.error.clone(),
            delivery_key: m.delivery_key.clone(),
            metadata: m.metadata.clone(),
            created_at: self.now,
        };
        self.event(
            "message_created",
            Some(m.thread_id),
            m.run_id,
            json!({"message": message}),
        )?;
        Ok(message)
    }

    fn insert_part(&mut self, id: MessageId, seq: i64, part: &Part) -> Result<()> {
        let (text, call_id, name, is_error) = match &part.body {
            PartBody::Text { text } => (text.as_str(), None, None, false),
            PartBody::ToolCall {
                call_id,
                name,
                arguments,
            } => (
                arguments.as_str(),
                Some(call_id.as_str()),
                Some(name.as_str()),
                false,
            ),
            PartBody::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => (
                content.as_str(),
                Some(call_id.as_str()),
                Some(name.as_str()),
                *is_error,
            ),
        };
        self.exec_unawaited(
            "INSERT INTO message_parts (message_id, seq, kind, text, call_id, tool_name, is_error, visible, in_context)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            args![id.0, seq, part.kind(), text, call_id, name, is_error, part.visible, part.in_context],
        )?;
        Ok(())
    }

    /// Add a part at the end of a message (tool results join the assistant message that asked).
    pub fn append_part(&mut self, id: MessageId, part: &Part) -> Result<()> {
        let (thread, run, seq): (i64, Option<i64>, i64) = self
            .query_opt(
                "SELECT thread_id, run_id,
                        (SELECT COALESCE(MAX(seq) + 1, 0) FROM message_parts WHERE message_id = ?1)
                 FROM messages WHERE id = ?1",
                args![id.0],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?
            .ok_or_else(|| StoreError::not_found("message", id))?;
        self.insert_part(id, seq, part)?;
        self.event(
            "message_part_added",
            Some(ThreadId(thread)),
            run.map(RunId),
            json!({"message_id": id, "part": part}),
        )?;
        Ok(())
    }

    pub fn set_finish(&mut self, id: MessageId, finish: Finish, error: Option<&str>) -> Result<()> {
        self.exec(
            "UPDATE messages SET finish = ?2, error = ?3 WHERE id = ?1",
            args![id.0, finish.as_str(), error],
        )?;
        Ok(())
    }

    pub fn message(&self, id: MessageId) -> Result<Message> {
        let mut found = self.load_messages("WHERE m.id = ?1", args![id.0])?;
        found
            .pop()
            .ok_or_else(|| StoreError::not_found("message", id))
    }

    /// A thread's messages after `after` (exclusive), oldest first.
    pub fn messages(
        &self,
        thread: ThreadId,
        after: Option<MessageId>,
        limit: u32,
    ) -> Result<Vec<Message>> {
        self.load_messages(
            "WHERE m.thread_id = ?1 AND m.id > ?2 ORDER BY m.id LIMIT ?3",
            args![thread.0, after.map(|a| a.0).unwrap_or(0), limit],
        )
    }

    /// The thread's last `n` messages, oldest first.
    pub fn messages_tail(&self, thread: ThreadId, n: u32) -> Result<Vec<Message>> {
        let mut out = self.load_messages(
            "WHERE m.thread_id = ?1 ORDER BY m.id DESC LIMIT ?2",
            args![thread.0, n],
        )?;
        out.reverse();
        Ok(out)
    }

    /// The thread's latest root message of `origin` (any age: no tail is scanned).
    pub fn latest_root_with_origin(
        &self,
        thread: ThreadId,
        origin: &Origin,
    ) -> Result<Option<Message>> {
        let mut found = match origin.detail() {
            Some(detail) => self.load_messages(
                "WHERE m.thread_id = ?1 AND m.is_root = 1 AND m.origin = ?2 AND m.origin_detail = ?3
                 ORDER BY m.id DESC LIMIT 1",
                args![thread.0, origin.kind(), detail],
            )?,
            None => self.load_messages(
                "WHERE m.thread_id = ?1 AND m.is_root = 1 AND m.origin = ?2 AND m.origin_detail IS NULL
                 ORDER BY m.id DESC LIMIT 1",
                args![thread.0, origin.kind()],
            )?,
        };
        Ok(found.pop())
    }

    fn load_messages(&self, clause: &str, args: &[crate::Value]) -> Result<Vec<Message>> {
        let sql = format!(
            "SELECT m.id, m.thread_id, m.role, m.origin, m.origin_detail, m.is_root, m.root_id, m.run_id,
                    m.finish, m.error, m.delivery_key, m.created_at, m.metadata FROM messages m {clause}"
        );
        let rows = self.query_all(&sql, args, |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<i64>(1)?,
                r.get::<String>(2)?,
                r.get::<String>(3)?,
                r.get::<Option<String>>(4)?,
                r.get::<bool>(5)?,
                r.get::<Option<i64>>(6)?,
                r.get::<Option<i64>>(7)?,
                r.get::<Option<String>>(8)?,
                r.get::<Option<String>>(9)?,
                r.get::<Option<String>>(10)?,
                r.get::<i64>(11)?,
                r.get::<Option<String>>(12)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (
                id,
                thread,
                role,
                origin,
                detail,
                is_root,
                root,
                run,
                finish,
                error,
                key,
                created,
                metadata,
            ) = row;
            let bad =
                |what: &str, e: String| StoreError::Corrupt(format!("message {id} {what}: {e}"));
            out.push(Message {
                id: MessageId(id),
                thread_id: ThreadId(thread),
                role: role.parse().map_err(|e| bad("role", e))?,
                origin: Origin::from_parts(&origin, detail).map_err(|e| bad("origin", e))?,
                is_root,
                root_id: root.map(MessageId),
                run_id: run.map(RunId),
                parts: Vec::new(),
                finish: finish
                    .map(|f| f.parse())
                    .transpose()
                    .map_err(|e| bad("finish", e))?,
                error,
                delivery_key: key,
                metadata: metadata
                    .map(|m| serde_json::from_str(&m))
                    .transpose()
                    .map_err(|e| bad("metadata", e.to_string()))?,
                created_at: created,
            });
        }
        self.fill_parts(&mut out)?;
        Ok(out)
    }

    fn fill_parts(&self, messages: &mut [Message]) -> Result<()> {
        if messages.is_empty() {
            return Ok(());
        }
        let index: HashMap<i64, usize> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.0, i))
            .collect();
        // Exactly these messages' parts (a range would drag in other threads' messages).
        let ids = crate::db::id_list(messages.iter().map(|m| m.id.0))?;
        let sql = format!(
            "SELECT message_id, kind, text, call_id, tool_name, is_error, visible, in_context
             FROM message_parts WHERE message_id IN {}
             ORDER BY message_id, seq",
            self.dialect().in_list(1)
        );
        let rows = self.query_all(&sql, args![ids], |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<String>(1)?,
                r.get::<String>(2)?,
                r.get::<Option<String>>(3)?,
                r.get::<Option<String>>(4)?,
                r.get::<bool>(5)?,
                r.get::<bool>(6)?,
                r.get::<bool>(7)?,
            ))
        })?;
        for row in rows {
            let (mid, kind, text, call_id, name, is_error, visible, in_context) = row;
            let Some(&i) = index.get(&mid) else { continue };
            let body = match kind.as_str() {
                "text" => PartBody::Text { text },
                "tool_call" => PartBody::ToolCall {
                    call_id: call_id.unwrap_or_default(),
                    name: name.unwrap_or_default(),
                    arguments: text,
                },
                "tool_result" => PartBody::ToolResult {
                    call_id: call_id.unwrap_or_default(),
                    name: name.unwrap_or_default(),
                    content: text,
                    is_error,
                },
                other => {
                    return Err(StoreError::Corrupt(format!(
                        "message {mid} has a part of unknown kind '{other}'"
                    )));
                }
            };
            messages[i].parts.push(Part {
                body,
                visible,
                in_context,
            });
        }
        Ok(())
    }

    /// Where the thread's latest task stands: no root, still needing a model call, or answered.
    pub fn root_state(&self, thread: ThreadId) -> Result<RootState> {
        // The latest root and its last message in one statement (a root is under itself): one
        // round trip on PostgreSQL. A root not found under itself takes the two-step way.
        let found: Option<(i64, String, Option<String>)> = self.query_opt(
            "SELECT m.root_id, m.role, m.finish FROM messages m
             WHERE m.root_id = (SELECT MAX(id) FROM messages WHERE thread_id = ?1 AND is_root = 1)
             ORDER BY m.id DESC LIMIT 1",
            args![thread.0],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let (root, last) = match found {
            Some((root, role, finish)) => {
                let role: Role = role.parse().map_err(StoreError::Corrupt)?;
                let finish: Option<Finish> = finish
                    .map(|f| f.parse())
                    .transpose()
                    .map_err(StoreError::Corrupt)?;
                (root, Some((role, finish)))
            }
            None => {
                let root: Option<i64> = self.query_one(
                    "SELECT MAX(id) FROM messages WHERE thread_id = ?1 AND is_root = 1",
                    args![thread.0],
                    |r| r.get(0),
                )?;
                let Some(root) = root else {
                    return Ok(RootState::None);
                };
                let last = self.latest_in_root(MessageId(root))?;
                (root, last.map(|t| (t.role, t.finish)))
            }
        };
        Ok(match last {
            Some((Role::Assistant, Some(f))) if f.is_terminal() => RootState::Done(MessageId(root)),
            _ => RootState::Open(MessageId(root)),
        })
    }

    /// The latest message under a root.
    pub fn latest_in_root(&self, root: MessageId) -> Result<Option<RootTail>> {
        let row = self.query_opt(
                "SELECT id, role, finish, error IS NOT NULL FROM messages WHERE root_id = ?1 ORDER BY id DESC LIMIT 1",
                args![root.0],
                |r| {
                    Ok((
                        r.get::<i64>(0)?,
                        r.get::<String>(1)?,
                        r.get::<Option<String>>(2)?,
                        r.get::<bool>(3)?,
                    ))
                },
            )?;
        row.map(|(id, role, finish, has_error)| {
            Ok(RootTail {
                id: MessageId(id),
                role: role.parse().map_err(StoreError::Corrupt)?,
                finish: finish
                    .map(|f| f.parse())
                    .transpose()
                    .map_err(StoreError::Corrupt)?,
                has_error,
            })
        })
        .transpose()
    }

    /// The latest assistant reply under a root: (id, terminal, has error).
    pub fn latest_reply(&self, root: MessageId) -> Result<Option<(MessageId, bool, bool)>> {
        let row = self.query_opt(
                "SELECT id, finish, error IS NOT NULL FROM messages WHERE root_id = ?1 AND role = 'assistant' ORDER BY id DESC LIMIT 1",
                args![root.0],
                |r| Ok((r.get::<i64>(0)?, r.get::<Option<String>>(1)?, r.get::<bool>(2)?)),
            )?;
        Ok(row.map(|(id, finish, err)| {
            let terminal = finish
                .and_then(|f| f.parse::<Finish>().ok())
                .is_some_and(Finish::is_terminal);
            (MessageId(id), terminal, err)
        }))
    }
}
