//! Delegations: a request from one Bot's work item to another's on a shared job, and its
//! result, written once.

use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::{Value as Json, json};
use troupe_core::delegation::{DelegationState, Expects};
use troupe_core::{DelegationId, PlanId, RunId, SessionId, WorkItemId};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DelegationRecord {
    pub id: DelegationId,
    pub plan_id: PlanId,
    pub ticket_id: Option<i64>,
    /// The ticket's parts the request is for (ids); empty: the whole ticket (DEL-14).
    pub part_ids: Vec<i64>,
    /// The job's requirement entries the request names (ids), checked to apply (DEL-3).
    pub requirement_ids: Vec<i64>,
    pub sender_work_item: WorkItemId,
    pub recipient_work_item: WorkItemId,
    pub originating_run_id: Option<RunId>,
    pub pair_session_id: SessionId,
    pub ask: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub expects: Expects,
    pub continue_working: bool,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub state: DelegationState,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<Json>,
    pub replied_at: Option<i64>,
    pub cancelled_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

pub struct NewDelegation {
    pub plan_id: PlanId,
    pub ticket_id: Option<i64>,
    pub part_ids: Vec<i64>,
    pub requirement_ids: Vec<i64>,
    pub sender_work_item: WorkItemId,
    pub recipient_work_item: WorkItemId,
    pub originating_run_id: Option<RunId>,
    pub pair_session_id: SessionId,
    pub ask: String,
    pub expects: Expects,
    pub continue_working: bool,
}

const COLUMNS: &str = "id, plan_id, ticket_id, sender_work_item, recipient_work_item, \
    originating_run_id, pair_session_id, ask, expects, continue_working, state, result, \
    replied_at, cancelled_at, created_at, updated_at, parts, requirement_ids";

fn bad(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

fn id_list(text: &str, what: &str) -> Result<Vec<i64>> {
    serde_json::from_str(text).map_err(|e| bad(what, e))
}

fn from_row(r: &crate::Row) -> Result<DelegationRecord> {
    let result: Option<String> = r.get(11)?;
    Ok(DelegationRecord {
        id: DelegationId(r.get(0)?),
        plan_id: PlanId(r.get(1)?),
        ticket_id: r.get(2)?,
        sender_work_item: WorkItemId(r.get(3)?),
        recipient_work_item: WorkItemId(r.get(4)?),
        originating_run_id: r.get::<Option<i64>>(5)?.map(RunId),
        pair_session_id: SessionId(r.get(6)?),
        ask: r.get(7)?,
        expects: Expects::parse(&r.get::<String>(8)?).map_err(|e| bad("delegation", e))?,
        continue_working: r.get::<i64>(9)? != 0,
        state: DelegationState::parse(&r.get::<String>(10)?).map_err(|e| bad("delegation", e))?,
        result: result
            .map(|t| serde_json::from_str(&t).map_err(|e| bad("delegation result", e)))
            .transpose()?,
        replied_at: r.get(12)?,
        cancelled_at: r.get(13)?,
        created_at: r.get(14)?,
        updated_at: r.get(15)?,
        part_ids: id_list(&r.get::<String>(16)?, "delegation parts")?,
        requirement_ids: id_list(&r.get::<String>(17)?, "delegation requirement_ids")?,
    })
}

impl Tx<'_> {
    pub fn create_delegation(&mut self, d: &NewDelegation) -> Result<DelegationRecord> {
        let id = self.insert(
            "INSERT INTO delegations (plan_id, ticket_id, sender_work_item, recipient_work_item,
                 originating_run_id, pair_session_id, ask, expects, continue_working,
                 created_at, updated_at, parts, requirement_ids)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12)",
            args![
                d.plan_id.0,
                d.ticket_id,
                d.sender_work_item.0,
                d.recipient_work_item.0,
                d.originating_run_id.map(|r| r.0),
                d.pair_session_id.0,
                d.ask,
                d.expects.as_str(),
                d.continue_working as i64,
                self.now,
                json!(d.part_ids).to_string(),
                json!(d.requirement_ids).to_string()
            ],
        )?;
        let rec = self.delegation(DelegationId(id))?;
        self.delegation_event(&rec)?;
        Ok(rec)
    }

    pub fn delegation(&self, id: DelegationId) -> Result<DelegationRecord> {
        let sql = format!("SELECT {COLUMNS} FROM delegations WHERE id = ?1");
        self.query_opt(&sql, args![id.0], from_row)?
            .ok_or_else(|| StoreError::not_found("delegation", id))
    }

    /// Open requests made to a work item, oldest first.
    pub fn open_delegations_to(&self, item: WorkItemId) -> Result<Vec<DelegationRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM delegations WHERE recipient_work_item = ?1 AND state = 'open'
             ORDER BY id"
        );
        self.query_all(&sql, args![item.0], from_row)
    }

    /// Open requests a work item made, oldest first.
    pub fn open_delegations_from(&self, item: WorkItemId) -> Result<Vec<DelegationRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM delegations WHERE sender_work_item = ?1 AND state = 'open'
             ORDER BY id"
        );
        self.query_all(&sql, args![item.0], from_row)
    }

    pub fn delegations_of_plan(&self, plan: PlanId) -> Result<Vec<DelegationRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM delegations WHERE plan_id = ?1 ORDER BY id");
        self.query_all(&sql, args![plan.0], from_row)
    }

    /// Delegations whose records show in a conversation (its pair direct), or that were made
    /// by or for work items speaking there.
    pub fn delegations_of_session(&self, session: SessionId) -> Result<Vec<DelegationRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM delegations WHERE pair_session_id = ?1
                OR plan_id IN (SELECT id FROM plans WHERE home_session_id = ?1)
             ORDER BY id"
        );
        self.query_all(&sql, args![session.0], from_row)
    }

    /// Settle an open delegation with its result; `false` when it was settled already (the
    /// first settlement stands).
    pub fn settle_delegation(
        &mut self,
        id: DelegationId,
        state: DelegationState,
        result: &Json,
    ) -> Result<bool> {
        let (replied, cancelled) = match state {
            DelegationState::Replied => (Some(self.now), None),
            DelegationState::Cancelled => (None, Some(self.now)),
            DelegationState::Open => {
                return Err(StoreError::Invalid(
                    "a delegation is settled as replied or cancelled".into(),
                ));
            }
        };
        let n = self.exec(
            "UPDATE delegations SET state = ?2, result = ?3, replied_at = ?4, cancelled_at = ?5,
                 updated_at = ?6
             WHERE id = ?1 AND state = 'open'",
            args![
                id.0,
                state.as_str(),
                result.to_string(),
                replied,
                cancelled,
                self.now
            ],
        )?;
        if n == 1 {
            let rec = self.delegation(id)?;
            self.delegation_event(&rec)?;
        }
        Ok(n == 1)
    }

    fn delegation_event(&mut self, d: &DelegationRecord) -> Result<()> {
        let payload = json!({
            "delegation_id": d.id, "plan_id": d.plan_id, "state": d.state.as_str(),
            "expects": d.expects.as_str(), "sender_work_item": d.sender_work_item,
            "recipient_work_item": d.recipient_work_item,
        });
        self.session_event(
            "delegation_changed",
            d.pair_session_id,
            d.originating_run_id,
            payload,
        )
    }
}

impl Tx<'_> {
    /// Whether the run sent a delegation (progress for END-11).
    pub fn delegated_in(&self, run: RunId) -> Result<bool> {
        Ok(self
            .query_opt(
                "SELECT 1 FROM delegations WHERE originating_run_id = ?1 LIMIT 1",
                args![run.0],
                |r| r.get::<i64>(0),
            )?
            .is_some())
    }
}
