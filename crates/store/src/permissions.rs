//! Permission requests (issue 18 item 15): a `channel_push` that crosses the communication
//! boundary waits as a `communication` request holding the push it would make, until a person
//! decides. A request is decided once: allowed or denied, never both, never twice.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::{Value, json};
use troupe_core::SessionId;

/// The only kind so far: a message to an outside chat.
pub const COMMUNICATION: &str = "communication";

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionStatus {
    Pending,
    Allowed,
    Denied,
}

impl PermissionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionStatus::Pending => "pending",
            PermissionStatus::Allowed => "allowed",
            PermissionStatus::Denied => "denied",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        match s {
            "pending" => Ok(PermissionStatus::Pending),
            "allowed" => Ok(PermissionStatus::Allowed),
            "denied" => Ok(PermissionStatus::Denied),
            other => Err(StoreError::Corrupt(format!(
                "permission_requests.status {other:?}"
            ))),
        }
    }
}

/// A person's answer to a request.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionDecision {
    Allow,
    Deny,
}

impl PermissionDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionDecision::Allow => "allow",
            PermissionDecision::Deny => "deny",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        match s {
            "allow" => Ok(PermissionDecision::Allow),
            "deny" => Ok(PermissionDecision::Deny),
            other => Err(format!("decision: {other:?} is neither allow nor deny")),
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PermissionRequest {
    pub id: i64,
    pub session_id: SessionId,
    /// `communication`.
    pub kind: String,
    pub status: PermissionStatus,
    /// What would be done once allowed (for `communication`, the push).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub request: Value,
    pub decision: Option<PermissionDecision>,
    pub decided_at: Option<i64>,
    pub created_at: i64,
}

const COLUMNS: &str = "id, session_id, kind, status, request, decision, decided_at, created_at";

impl Tx<'_> {
    /// Open a pending request for a session.
    pub fn open_permission_request(
        &mut self,
        session: SessionId,
        kind: &str,
        request: &Value,
    ) -> Result<PermissionRequest> {
        if kind != COMMUNICATION {
            return Err(StoreError::Invalid(format!(
                "kind: {kind:?} is not a permission kind (communication)"
            )));
        }
        let id = self.insert(
            "INSERT INTO permission_requests (session_id, kind, status, request, created_at)
             VALUES (?1, ?2, 'pending', ?3, ?4)",
            args![session.0, kind, request.to_string(), self.now],
        )?;
        self.session_event(
            "permission_requested",
            session,
            None,
            json!({"id": id, "kind": kind}),
        )?;
        self.permission_request(id)?
            .ok_or_else(|| StoreError::Corrupt("a permission request vanished".into()))
    }

    pub fn permission_request(&self, id: i64) -> Result<Option<PermissionRequest>> {
        let sql = format!("SELECT {COLUMNS} FROM permission_requests WHERE id = ?1");
        self.query_opt(&sql, args![id], row)
    }

    /// A session's requests, newest first (at most `limit`).
    pub fn permission_requests(
        &self,
        session: Option<SessionId>,
        limit: u32,
    ) -> Result<Vec<PermissionRequest>> {
        match session {
            Some(s) => {
                let sql = format!(
                    "SELECT {COLUMNS} FROM permission_requests WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2"
                );
                self.query_all(&sql, args![s.0, i64::from(limit)], row)
            }
            None => {
                let sql =
                    format!("SELECT {COLUMNS} FROM permission_requests ORDER BY id DESC LIMIT ?1");
                self.query_all(&sql, args![i64::from(limit)], row)
            }
        }
    }

    /// Decide a pending request; `false` when it was decided already (nothing changes).
    pub fn decide_permission_request(
        &mut self,
        id: i64,
        decision: PermissionDecision,
    ) -> Result<bool> {
        let status = match decision {
            PermissionDecision::Allow => PermissionStatus::Allowed,
            PermissionDecision::Deny => PermissionStatus::Denied,
        };
        let n = self.exec(
            "UPDATE permission_requests SET status = ?2, decision = ?3, decided_at = ?4
             WHERE id = ?1 AND status = 'pending'",
            args![id, status.as_str(), decision.as_str(), self.now],
        )?;
        if n == 1 {
            let r = self
                .permission_request(id)?
                .ok_or_else(|| StoreError::not_found("permission request", id))?;
            self.session_event(
                "permission_decided",
                r.session_id,
                None,
                json!({"id": id, "kind": r.kind, "decision": decision}),
            )?;
        }
        Ok(n == 1)
    }
}

fn row(r: &crate::Row) -> Result<PermissionRequest> {
    let status: String = r.get(3)?;
    let request: String = r.get(4)?;
    let decision: Option<String> = r.get(5)?;
    Ok(PermissionRequest {
        id: r.get(0)?,
        session_id: SessionId(r.get(1)?),
        kind: r.get(2)?,
        status: PermissionStatus::parse(&status)?,
        request: serde_json::from_str(&request)
            .map_err(|e| StoreError::Corrupt(format!("permission_requests.request: {e}")))?,
        decision: decision
            .map(|d| PermissionDecision::parse(&d).map_err(StoreError::Corrupt))
            .transpose()?,
        decided_at: r.get(6)?,
        created_at: r.get(7)?,
    })
}
