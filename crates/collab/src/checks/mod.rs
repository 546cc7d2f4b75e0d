//! Acceptance checks (digest 003-C §15) and checks from the user's words (§16), run by the
//! daemon on the user's machine. Only the user writes checks (no organizer in this build);
//! Bots read them in their situation and have no tool for them (AC-7, AC-10).
//!
//! - `manage`: saving, editing, removing and confirming, validated by core (AC-1);
//! - `run`: running a check (commands through troupe-tools' shell runner in their own process
//!   group, with the shell's environment whitelist), recording its run, the locks of AC-6 and
//!   the quiet-job tick of AC-5;
//! - `bound`: the checks bound to a submission and their results for it (CK1, CK2);
//! - `words`: offers read from the user's filed lines, bound to the final cut and measured;
//! - `probe`: the `MediaProbe` that measures a video (ffprobe);
//! - `seams`: whether parts made apart fit together where they meet (AC-13…AC-17);
//! - `replacement`: the card asking which number stands when a later one differs (CW-18);
//! - `situation`: the job's checks in a segment's situation.

pub mod bound;
mod ffmpeg;
pub mod manage;
pub mod probe;
pub mod replacement;
pub mod run;
pub mod sample;
pub mod seams;
pub mod situation;
pub mod words;

pub use bound::BoundResult;
pub use manage::{CheckView, NewCheckRequest, PatchCheckRequest, PlanChecks};
pub use probe::{Ffprobe, MediaProbe};
pub use situation::ChecksSituation;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use troupe_core::PlanId;
use troupe_store::Store;

/// AC-5: a job is quiet after this long with no live segment on it.
pub const QUIET_AFTER_MS: i64 = 30_000;
/// AC-6: the most time checks may take in one quiet stretch of a job.
pub const QUIET_BUDGET: Duration = Duration::from_secs(15 * 60);

/// The checks' runner and everything it keeps between runs. Cheap to clone: the daemon makes
/// one and gives it to the routes, the hand-over's hooks and its timers.
#[derive(Clone)]
pub struct Checks {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    probe: Arc<dyn MediaProbe>,
    /// AC-6: one run per job at a time.
    plans: Mutex<HashMap<PlanId, Arc<tokio::sync::Mutex<()>>>>,
    /// AC-6: the time spent in each job's current quiet stretch, keyed by when it began.
    stretches: Mutex<HashMap<PlanId, (i64, Duration)>>,
    /// SC4: who judges a sample's standard; none set → not judged.
    judge: std::sync::OnceLock<Arc<dyn sample::PictureJudge>>,
}

impl Checks {
    pub fn new(store: Store, probe: Arc<dyn MediaProbe>) -> Checks {
        Checks {
            inner: Arc::new(Inner {
                store,
                probe,
                plans: Mutex::default(),
                stretches: Mutex::default(),
                judge: std::sync::OnceLock::new(),
            }),
        }
    }

    /// With the real ffprobe.
    pub fn with_ffprobe(store: Store) -> Checks {
        Checks::new(store, Arc::new(Ffprobe::default()))
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub(crate) fn probe(&self) -> &dyn MediaProbe {
        self.inner.probe.as_ref()
    }

    /// Who judges the sample's standard (SC4); false when one is set already.
    pub fn set_judge(&self, judge: Arc<dyn sample::PictureJudge>) -> bool {
        self.inner.judge.set(judge).is_ok()
    }

    pub(crate) fn judge(&self) -> Option<&Arc<dyn sample::PictureJudge>> {
        self.inner.judge.get()
    }

    fn plan_lock(&self, plan: PlanId) -> Arc<tokio::sync::Mutex<()>> {
        self.inner
            .plans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(plan)
            .or_default()
            .clone()
    }
}

impl crate::Collab {
    /// The daemon's checks runner: the one given with [`crate::Collab::use_checks`], else one
    /// with the real ffprobe made on first use.
    pub fn checks(&self) -> Checks {
        self.checks
            .get_or_init(|| {
                let checks = Checks::with_ffprobe(self.store().clone());
                checks.set_judge(Arc::new(sample::RoleJudge {
                    roles: self.roles.clone(),
                }));
                checks
            })
            .clone()
    }

    /// Use `checks` (the one the hand-over's hooks run, or one with a probe double); false
    /// when one is in use already. One given without a picture judge judges on the daemon's
    /// roles, as the one made here does.
    pub fn use_checks(&self, checks: Checks) -> bool {
        checks.set_judge(Arc::new(sample::RoleJudge {
            roles: self.roles.clone(),
        }));
        self.checks.set(checks).is_ok()
    }
}

/// The workspace a job's checks are relative to: its home conversation's, the folder the
/// job folder `<workspace>/jobs/<id>-<slug>` sits in.
pub fn plan_workspace(plan_folder: &str) -> PathBuf {
    let job = Path::new(plan_folder);
    match job.parent() {
        Some(jobs) if jobs.file_name().is_some_and(|n| n == "jobs") => jobs
            .parent()
            .map_or_else(|| job.to_path_buf(), Path::to_path_buf),
        _ => job.to_path_buf(),
    }
}

pub(crate) use troupe_tools::lexical;
