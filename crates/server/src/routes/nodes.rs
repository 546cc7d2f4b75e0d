//! The nodes sharing this daemon's database: each one's heartbeat and the threads it holds.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use troupe_store::NodeRecord;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// A node as the API shows it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct NodeView {
    #[serde(flatten)]
    pub node: NodeRecord,
    /// Stopped cleanly, taken over, or silent for longer than the expiry, as of now.
    pub alive: bool,
    /// The node answering this request.
    pub this_node: bool,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_nodes))
}

#[utoipa::path(
    get, path = "/v1/nodes", tag = "nodes",
    responses(
        (status = 200, description = "Every node that used this database, newest first", body = [NodeView]),
        (status = 500, description = "The store failed", body = ErrorBody)
    )
)]
async fn list_nodes(State(state): State<AppState>) -> Result<Json<Vec<NodeView>>, ApiError> {
    let engine = state.collab.engine();
    let store = engine.store();
    let now = store.now();
    let nodes = store
        .read(|tx| tx.nodes())
        .map_err(troupe_collab::CollabError::from)?;
    Ok(Json(
        nodes
            .into_iter()
            .map(|node| NodeView {
                alive: node.alive_at(now),
                this_node: node.id == engine.node_id(),
                node,
            })
            .collect(),
    ))
}
