//! Restart: what a running session's manifest and folder say is left to do after a crash.
//! Each branch still current is looked at on its own:
//! - `open` with a response on disk: gate it and route it (its agent is not run again);
//! - `open` without one: its agent runs again from its request;
//! - `waiting`: the routed `waiting` response is set aside; when the exchange has a valid
//!   answer the agent resumes, otherwise the exchange runs again first.
//!
//! The same look, one branch at a time ([`pending_branch`]), retries a step in place when a
//! session blocked by a failed git command is re-entered (`Effect::Retry`).

use super::agent::AgentJob;
use super::drive::Drive;
use super::{RunnerError, split_agent};
use crate::gate::check_response;
use crate::route::Effect;
use crate::session::{BranchKey, BranchStatus, ResponseStatus, SessionStatus};

/// The effects that continue the session; agents whose answers are on disk are not re-run.
pub(crate) fn pending(drive: &mut Drive<'_>) -> Result<Vec<Effect>, RunnerError> {
    let mut effects = Vec::new();
    let current = drive.session.state().current.clone();
    for key in current {
        if drive.session.state().status != SessionStatus::Running {
            break;
        }
        effects.extend(pending_branch(drive, key)?);
    }
    Ok(effects)
}

/// What continues one current branch, from its folder.
pub(crate) fn pending_branch(
    drive: &mut Drive<'_>,
    key: BranchKey,
) -> Result<Vec<Effect>, RunnerError> {
    let mut effects = Vec::new();
    let Some(rec) = drive.session.state().branches.get(&key).cloned() else {
        return Ok(effects);
    };
    let job = AgentJob {
        key,
        exchange: None,
        operator: rec.operator.clone(),
        thread: None,
        task: String::new(),
        refusals: 0,
    };
    match rec.status {
        BranchStatus::Open => {
            if drive.session.response_path(key, None).exists() {
                drive.emit(key, "a response is on disk: gating and routing it");
                effects.extend(drive.branch_answered(job, None)?);
            } else {
                match drive.session.read_request(key, None) {
                    Ok(request) => {
                        drive.emit(key, "no response: its agent runs again from its request");
                        effects.push(Effect::OpenBranch { request });
                    }
                    Err(refusals) => {
                        let why = format!("the request cannot be read: {refusals}");
                        effects.extend(drive.block(key, "INVALID_INPUT", &why)?);
                    }
                }
            }
        }
        BranchStatus::Waiting => {
            let fresh = check_response(&drive.r.defs, &drive.session, key, None)
                .ok()
                .filter(|r| r.status != ResponseStatus::Waiting);
            if fresh.is_some() {
                drive.emit(key, "a new response is on disk: gating and routing it");
                effects.extend(drive.branch_answered(job, None)?);
                return Ok(effects);
            }
            let prefix = format!("{key}/");
            let exchange = drive
                .session
                .state()
                .leases
                .keys()
                .find(|a| a.starts_with(&prefix))
                .and_then(|a| split_agent(a))
                .and_then(|(_, x)| x);
            let Some(exchange) = exchange else {
                let why = "the branch waits, but on no exchange the manifest records";
                effects.extend(drive.block(key, "INVALID_INPUT", why)?);
                return Ok(effects);
            };
            drive.resume_after.insert((key, exchange.clone()));
            let answered =
                check_response(&drive.r.defs, &drive.session, key, Some(&exchange)).is_ok();
            if answered {
                drive.emit(
                    key,
                    format!("exchange `{exchange}` answered: resuming the agent"),
                );
                effects.extend(drive.resume_waiting(key, &exchange)?);
            } else {
                match drive.session.read_request(key, Some(&exchange)) {
                    Ok(request) => {
                        drive.emit(key, format!("exchange `{exchange}` runs again"));
                        effects.push(Effect::RunExchange {
                            branch: key,
                            exchange,
                            request,
                        });
                    }
                    Err(refusals) => {
                        let why = format!("the exchange request cannot be read: {refusals}");
                        effects.extend(drive.block(key, "INVALID_INPUT", &why)?);
                    }
                }
            }
        }
        BranchStatus::Done | BranchStatus::Blocked => {}
    }
    Ok(effects)
}
