//! One line: answering an ask, what the reader made of it, taking it back, and editing it.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use troupe_collab::holds::{ControlOutcome, ControlRequest};
use troupe_collab::{AnswerRequest, EditRequest, InsertOutcome, LineFlow, WorkAnswerRequest};
use troupe_core::SessionMessageId;
use troupe_core::conversation::SessionMessage;
use troupe_store::{LineReading, LineVersion};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_line, edit_line))
        .routes(routes!(versions))
        .routes(routes!(answer))
        .routes(routes!(work_answer))
        .routes(routes!(control))
        .routes(routes!(withdraw))
        .routes(routes!(insert))
        .routes(routes!(readings))
        .routes(routes!(flow))
}

#[utoipa::path(
    post, path = "/v1/messages/{id}/work-answer", tag = "sessions",
    params(("id" = i64, Path, description = "The work question card's line id")),
    request_body = WorkAnswerRequest,
    responses(
        (status = 200, description = "The card with its answer (the same `request_id` again answers the same); the blocked work goes on", body = SessionMessage),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
        (status = 409, description = "Answered already by another request (`already_answered`), its work closed (`work_closed`) or its card closed by a stop (`ask_closed`)", body = ErrorBody),
        (status = 422, description = "Not a work question; empty body or request_id", body = ErrorBody),
    )
)]
async fn work_answer(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<WorkAnswerRequest>,
) -> Result<Json<SessionMessage>, ApiError> {
    let id = path_id::<SessionMessageId>(&id)?;
    Ok(Json(state.collab.work_answer(id, req).await?))
}

#[utoipa::path(
    post, path = "/v1/messages/{id}/answer", tag = "sessions",
    params(("id" = i64, Path, description = "The ask line's id")),
    request_body = AnswerRequest,
    responses(
        (status = 200, description = "The ask with its answer; the asking Bot goes on", body = SessionMessage),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
        (status = 409, description = "Answered already (`already_answered`) or its turn was stopped (`ask_closed`)", body = ErrorBody),
        (status = 422, description = "Not an ask; empty answer, a bad option index, two picks on a single choice", body = ErrorBody),
    )
)]
async fn answer(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<AnswerRequest>,
) -> Result<Json<SessionMessage>, ApiError> {
    let id = path_id::<SessionMessageId>(&id)?;
    Ok(Json(state.collab.answer_ask(id, req).await?))
}

#[utoipa::path(
    post, path = "/v1/messages/{id}/withdraw", tag = "sessions",
    params(("id" = i64, Path, description = "A person's line")),
    responses(
        (status = 200, description = "The line, withdrawn: no Bot will read it", body = SessionMessage),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
        (status = 409, description = "A Bot has read it already (`already_read`)", body = ErrorBody),
        (status = 422, description = "Not a person's line", body = ErrorBody),
    )
)]
async fn withdraw(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SessionMessage>, ApiError> {
    let id = path_id::<SessionMessageId>(&id)?;
    Ok(Json(state.collab.withdraw_line(id)?))
}

#[utoipa::path(
    get, path = "/v1/messages/{id}/readings", tag = "sessions",
    params(("id" = i64, Path, description = "A line")),
    responses(
        (status = 200, description = "What the line reader made of the line: the model, the reading, the raw answer, and why the word lists read it instead (failure)", body = [LineReading]),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
    )
)]
async fn readings(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<LineReading>>, ApiError> {
    let id = path_id::<SessionMessageId>(&id)?;
    Ok(Json(state.collab.line_readings(id)?))
}

#[utoipa::path(
    get, path = "/v1/messages/{id}/flow", tag = "sessions",
    params(("id" = i64, Path, description = "A line")),
    responses(
        (status = 200, description = "The line's own flow (AT-8): how it was read (the readings with their raw answers), where it was filed (`filed_under`: \"Filed under: Promo › Cut\", by the names as they are now; `filing_step` false when only a quote, a path or the work's binding filed it) and whom it woke, and why", body = LineFlow),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
    )
)]
async fn flow(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<LineFlow>, ApiError> {
    Ok(Json(
        state.collab.line_flow(path_id::<SessionMessageId>(&id)?)?,
    ))
}

#[utoipa::path(
    post, path = "/v1/messages/{id}/insert", tag = "sessions",
    params(("id" = i64, Path, description = "A person's line")),
    responses(
        (status = 200, description = "What was done so the Bots read the line now: a working Bot's step cut, the person's own Stop lifted (`lifted`), or nothing for a Bot under a lasting stop (`held`); `cut: false` and no `lifted`: they read it at their next step", body = InsertOutcome),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
        (status = 422, description = "Not a person's line", body = ErrorBody),
    )
)]
async fn insert(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<InsertOutcome>, ApiError> {
    let id = path_id::<SessionMessageId>(&id)?;
    Ok(Json(state.collab.insert_line_now(id).await?))
}

#[utoipa::path(
    get, path = "/v1/messages/{id}", tag = "sessions",
    params(("id" = i64, Path, description = "A line")),
    responses(
        (status = 200, description = "The line (an ask with its answer)", body = SessionMessage),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
    )
)]
async fn get_line(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SessionMessage>, ApiError> {
    let id = path_id::<SessionMessageId>(&id)?;
    Ok(Json(state.collab.line(id)?))
}

#[utoipa::path(
    post, path = "/v1/messages/{id}/control", tag = "holds",
    params(("id" = i64, Path, description = "A person's line read as possibly control")),
    request_body = ControlRequest,
    responses(
        (status = 200, description = "What the press did: holds made (Stop) or lifted (Continue). Pressed once per line: a repeat answers the first press and does nothing. On a ceiling card (`control.kind: \"ceiling\"`, B §7.3) the action is another_way, change_plan, relax, take_as_is or carry_on, and `ceiling` says what the answer did; on a replacement card (`control.kind: \"replacement\"`, C §16 CW-18) it is use_new, change or keep_old, and `replacement` says which check is in force after it and, for change, the composer's `prefill`. An answered or withdrawn card is 409 card_closed", body = ControlOutcome),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
        (status = 409, description = "`card_closed`: the ceiling card was answered already, or its ticket closed another way", body = ErrorBody),
        (status = 422, description = "The line has no buttons, or not that one; an unknown action; `action_not_offered`: a button the ceiling card does not show (relax when not stuck on one requirement)", body = ErrorBody),
    )
)]
async fn control(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ControlRequest>,
) -> Result<Json<ControlOutcome>, ApiError> {
    let id = path_id::<SessionMessageId>(&id)?;
    let out = state.collab.press_control(id, req).await;
    Ok(Json(out.map_err(control_error)?))
}

/// A ceiling card's `action_not_offered` keeps its own code.
fn control_error(e: troupe_collab::CollabError) -> ApiError {
    match e {
        troupe_collab::CollabError::Invalid(m) if m.starts_with("action_not_offered") => {
            ApiError::new(
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                "action_not_offered",
                m,
            )
        }
        other => other.into(),
    }
}

#[utoipa::path(
    patch, path = "/v1/messages/{id}", tag = "sessions",
    params(("id" = i64, Path, description = "A person's line")),
    request_body = EditRequest,
    responses(
        (status = 200, description = "The line with its new words (`edited: true`); its words before are a version, the clauses the edit added a new quote. A Bot that has not read it reads only the new words; one that read it is told of the change. Nothing is carried out, refiled or woken by the new words", body = SessionMessage),
        (status = 400, description = "Malformed JSON or id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
        (status = 409, description = "`not_editable`, the message starting with the reason: `bot_line` (a Bot's line, an ask or an app line), `answer` (it answered a Bot's question), `executed_stop` (the app carried it out as a stop), `archived`, `bot_direct`, `bot_gone` (a direct whose Bot is gone), `taken_back`, `cleared`", body = ErrorBody),
        (status = 422, description = "Empty body", body = ErrorBody),
    )
)]
async fn edit_line(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<EditRequest>,
) -> Result<Json<SessionMessage>, ApiError> {
    let id = path_id::<SessionMessageId>(&id)?;
    Ok(Json(state.collab.edit_line(id, req.body).await?))
}

#[utoipa::path(
    get, path = "/v1/messages/{id}/versions", tag = "sessions",
    params(("id" = i64, Path, description = "A line")),
    responses(
        (status = 200, description = "The line's earlier words, oldest first (version 1 is as sent; the current words are the line's own); empty for a line never edited or whose history was cleared", body = [LineVersion]),
        (status = 400, description = "Malformed id", body = ErrorBody),
        (status = 404, description = "No such line", body = ErrorBody),
    )
)]
async fn versions(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<LineVersion>>, ApiError> {
    let id = path_id::<SessionMessageId>(&id)?;
    Ok(Json(state.collab.line_versions(id)?))
}
