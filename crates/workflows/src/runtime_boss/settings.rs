//! The Runtime-domain settings as the API changes them (`GET/PATCH /v1/settings/runtime`): a
//! patch is checked whole (a bad field is a 422 naming it and nothing is written), stored, and
//! provisioning runs so the sessions follow at once (Boss Mode on: made and briefed; a persona
//! change: re-briefed once; off: reminders cancelled, sessions kept).

use super::ensure::Provisioned;
use crate::{WorkflowError, Workflows};
use std::path::Path;
use troupe_channels::ChannelDef;
use troupe_core::runtime_boss::{RuntimeSettings, RuntimeSettingsPatch};
use troupe_store::StoreError;

impl Workflows {
    pub fn runtime_settings(&self) -> Result<RuntimeSettings, WorkflowError> {
        Ok(self.store().read(|tx| tx.runtime_settings())?)
    }

    /// Apply `patch` (read, checked and written in one transaction), then provision.
    pub fn patch_runtime_settings(
        &self,
        patch: &RuntimeSettingsPatch,
        data_dir: &Path,
        accounts: &[ChannelDef],
    ) -> Result<(RuntimeSettings, Provisioned), WorkflowError> {
        let settings = self.store().write(|tx| {
            let next = tx
                .runtime_settings()?
                .apply(patch)
                .map_err(|e| StoreError::Invalid(e.to_string()))?;
            tx.set_runtime_settings(&next)?;
            Ok(next)
        })?;
        let provisioned = self.ensure_runtime_boss(data_dir, accounts)?;
        Ok((settings, provisioned))
    }
}
