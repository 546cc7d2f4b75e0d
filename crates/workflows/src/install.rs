//! Plugging the workflow layer into the kernel at build time.

use crate::notes;
use crate::projection::WorkflowProjection;
use std::sync::Arc;
use troupe_engine::{EngineBuilder, EngineError};

/// Add the workflow layer's extensions: the instruction projection and the note tools.
pub fn install(builder: EngineBuilder) -> Result<EngineBuilder, EngineError> {
    let mut b = builder.context(Arc::new(WorkflowProjection));
    for t in notes::tools::registrations() {
        b = b.tool(t)?;
    }
    Ok(b)
}
