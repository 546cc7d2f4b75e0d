//! A Bot's skills and the project skills (ADR 0052, QE7): the person lists, adds, edits and
//! deletes a Bot's skills, shares one with every Bot (confirmed once more), and updates, turns
//! off or stops sharing a shared copy.

use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::routes::path_id;
use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;
use troupe_core::BotId;
use troupe_store::{BotSkill, ProjectSkill};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_skills, add_skill))
        .routes(routes!(get_skill, edit_skill, delete_skill))
        .routes(routes!(share_skill))
        .routes(routes!(list_project_skills))
        .routes(routes!(switch_project_skill, unshare_project_skill))
        .routes(routes!(update_project_skill))
}

fn id_of(raw: &str, what: &str) -> Result<i64, ApiError> {
    raw.trim()
        .parse::<i64>()
        .map_err(|_| ApiError::bad_request(format!("path id: '{raw}' is not a {what} id")))
}

#[utoipa::path(
    get, path = "/v1/bots/{id}/skills", tag = "bots",
    params(("id" = i64, Path, description = "Bot id")),
    responses(
        (status = 200, description = "The Bot's skills by name, each with its text; `retrospective_id` marks one whose retrospective change stands, `shared_as` one shared as a project skill", body = [BotSkill]),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such Bot", body = ErrorBody),
    )
)]
async fn list_skills(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<BotSkill>>, ApiError> {
    Ok(Json(state.collab.bot_skills(path_id::<BotId>(&id)?)?))
}

/// A new skill for a Bot.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSkillRequest {
    /// 1–64 characters, one line; unique for the Bot (compared without case).
    pub name: String,
    /// The catalog line: 1–200 characters, one line, on what the skill is for.
    pub description: String,
    /// The text, 1–20,000 characters.
    pub body: String,
}

#[utoipa::path(
    post, path = "/v1/bots/{id}/skills", tag = "bots",
    params(("id" = i64, Path, description = "Bot id")),
    request_body = NewSkillRequest,
    responses(
        (status = 200, description = "The skill", body = BotSkill),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such Bot", body = ErrorBody),
        (status = 409, description = "skill_taken: the Bot has a skill of this name (edit it instead)", body = ErrorBody),
        (status = 422, description = "Name, description or text empty or too long, or the Bot keeps 30 skills already", body = ErrorBody),
    )
)]
async fn add_skill(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<NewSkillRequest>,
) -> Result<Json<BotSkill>, ApiError> {
    let bot = path_id::<BotId>(&id)?;
    Ok(Json(state.collab.add_bot_skill(
        bot,
        &req.name,
        &req.description,
        &req.body,
    )?))
}

#[utoipa::path(
    get, path = "/v1/skills/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Skill id")),
    responses(
        (status = 200, description = "The skill as it is now (what \"Update the shared copy\" shows)", body = BotSkill),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such skill", body = ErrorBody),
    )
)]
async fn get_skill(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<BotSkill>, ApiError> {
    Ok(Json(state.collab.bot_skill(id_of(&id, "skill")?)?))
}

/// The person's change to a skill (any change takes a retrospective's mark off).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillPatch {
    pub name: Option<String>,
    pub description: Option<String>,
    pub body: Option<String>,
}

#[utoipa::path(
    patch, path = "/v1/skills/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Skill id")),
    request_body = SkillPatch,
    responses(
        (status = 200, description = "The skill as changed; a shared copy of it stays as it was until updated", body = BotSkill),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such skill", body = ErrorBody),
        (status = 409, description = "skill_taken: the Bot has another skill of this name", body = ErrorBody),
        (status = 422, description = "Nothing to change, or a field empty or too long", body = ErrorBody),
    )
)]
async fn edit_skill(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<SkillPatch>,
) -> Result<Json<BotSkill>, ApiError> {
    Ok(Json(state.collab.edit_bot_skill(
        id_of(&id, "skill")?,
        req.name.as_deref(),
        req.description.as_deref(),
        req.body.as_deref(),
    )?))
}

#[utoipa::path(
    delete, path = "/v1/skills/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Skill id")),
    responses(
        (status = 200, description = "The skill deleted; a shared copy of it stays", body = BotSkill),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such skill", body = ErrorBody),
    )
)]
async fn delete_skill(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<BotSkill>, ApiError> {
    Ok(Json(state.collab.delete_bot_skill(id_of(&id, "skill")?)?))
}

/// The person's confirmation, asked once more (QE7).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShareRequest {
    /// Must be true.
    pub confirm: bool,
}

#[utoipa::path(
    post, path = "/v1/skills/{id}/share", tag = "bots",
    params(("id" = i64, Path, description = "Skill id")),
    request_body = ShareRequest,
    responses(
        (status = 200, description = "The project skill: a copy of the skill as it is now, on for every Bot", body = ProjectSkill),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such skill", body = ErrorBody),
        (status = 409, description = "not_shareable: shared already, or a project skill of this name exists", body = ErrorBody),
        (status = 422, description = "Not confirmed, or 20 project skills are on already", body = ErrorBody),
    )
)]
async fn share_skill(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ShareRequest>,
) -> Result<Json<ProjectSkill>, ApiError> {
    Ok(Json(
        state
            .collab
            .share_bot_skill(id_of(&id, "skill")?, req.confirm)?,
    ))
}

#[utoipa::path(
    get, path = "/v1/project-skills", tag = "bots",
    responses(
        (status = 200, description = "Every shared copy by name: on or off, its owner (marked when archived), and whether the owner has changed its skill since (`owner_changed`, with `source_updated_at` to confirm an update against)", body = [ProjectSkill]),
    )
)]
async fn list_project_skills(
    State(state): State<AppState>,
) -> Result<Json<Vec<ProjectSkill>>, ApiError> {
    Ok(Json(state.collab.project_skills()?))
}

/// Turn a shared copy on or off.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectSkillPatch {
    pub enabled: bool,
}

#[utoipa::path(
    patch, path = "/v1/project-skills/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Project skill id")),
    request_body = ProjectSkillPatch,
    responses(
        (status = 200, description = "The copy, on or off", body = ProjectSkill),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such project skill", body = ErrorBody),
        (status = 422, description = "20 project skills are on already", body = ErrorBody),
    )
)]
async fn switch_project_skill(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ProjectSkillPatch>,
) -> Result<Json<ProjectSkill>, ApiError> {
    Ok(Json(state.collab.set_project_skill_enabled(
        id_of(&id, "project skill")?,
        req.enabled,
    )?))
}

#[utoipa::path(
    delete, path = "/v1/project-skills/{id}", tag = "bots",
    params(("id" = i64, Path, description = "Project skill id")),
    responses(
        (status = 200, description = "Sharing stopped: the copy leaves every Bot's catalog; the owner's skill stays", body = ProjectSkill),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such project skill", body = ErrorBody),
    )
)]
async fn unshare_project_skill(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ProjectSkill>, ApiError> {
    Ok(Json(
        state
            .collab
            .unshare_project_skill(id_of(&id, "project skill")?)?,
    ))
}

/// "Update the shared copy", confirmed after seeing the owner's skill as it is now.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSharedRequest {
    /// The owner's skill's `updated_at` as it was shown (`source_updated_at`).
    pub seen_updated_at: i64,
    /// Must be true.
    pub confirm: bool,
}

#[utoipa::path(
    post, path = "/v1/project-skills/{id}/update", tag = "bots",
    params(("id" = i64, Path, description = "Project skill id")),
    request_body = UpdateSharedRequest,
    responses(
        (status = 200, description = "The copy now says what the owner's skill says", body = ProjectSkill),
        (status = 400, description = "The id is not a number, or malformed JSON", body = ErrorBody),
        (status = 404, description = "No such project skill", body = ErrorBody),
        (status = 409, description = "not_updatable: the owner's skill was deleted, changed again since it was shown, or says what the copy says", body = ErrorBody),
        (status = 422, description = "Not confirmed", body = ErrorBody),
    )
)]
async fn update_project_skill(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<UpdateSharedRequest>,
) -> Result<Json<ProjectSkill>, ApiError> {
    Ok(Json(state.collab.update_project_skill(
        id_of(&id, "project skill")?,
        req.seen_updated_at,
        req.confirm,
    )?))
}
