//! Seams (continuity) checks (digest 003-C §15 AC-13…AC-17): parts several Bots made apart
//! are judged where they meet. The parts come in order (`parts`); each seam gets evidence from
//! both sides — for text, about 700 characters either side, and the whole set's digest; for
//! pictures and video, both sides put side by side in one picture kept under the job folder's
//! reserved `checks/<check>/` (`frames`) — and the picture judge's model answers JSON (asked
//! again once if it does not parse). Every call is billed as an acceptance-check call. A run
//! whose judge saw pictures is for reference only; none is judged while a stop covers the job
//! or once today's picture judging has cost its budget.

pub mod frames;
pub mod parts;

use super::run::Outcome;
use super::sample::{JudgeCall, PictureJudge};
use super::{Checks, plan_workspace};
use crate::CollabError;
use parts::{Body, Part};
use std::path::{Path, PathBuf};
use troupe_core::hold::HoldScope;
use troupe_core::sample_standard::budget_left;
use troupe_core::seams::judge::{Seam, SeamEvidence, outcome, parse_answer, prompt};
use troupe_core::seams::split::{EXCERPT_CHARS, Section, digest, end_of, start_of};
use troupe_store::{CheckRecord, NewAcceptanceCheckCall, PlanRecord, RunOutcome};
use troupe_tools::{MAX_PICTURE_BYTES, Workspace, sniff_media_type};

use super::sample::evidence::Picture;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The reserved folder a check's seam pictures are kept in, relative to the job folder.
pub fn pictures_folder(check: &CheckRecord) -> String {
    format!("checks/{}", check.id)
}

fn error(detail: impl Into<String>) -> Outcome {
    Outcome::new(RunOutcome::Error, detail)
}

impl Checks {
    /// Run a seams check: its parts, their seams' evidence, the judge's answer.
    pub(crate) async fn judge_seams(
        &self,
        check: &CheckRecord,
        plan: &PlanRecord,
    ) -> Result<Outcome, CollabError> {
        let ws = match Workspace::open(plan_workspace(&plan.folder)) {
            Ok(ws) => ws,
            Err(e) => return Ok(error(format!("the workspace is missing: {e}"))),
        };
        let parts = match parts::parts(check, &ws).await {
            Ok(p) => p,
            Err(o) => return Ok(o),
        };
        let visual = !parts[0].body.is_text();
        if visual {
            // Pictures are a reference, judged only when nothing holds the job and today's
            // picture budget has room.
            let (stopped, spent) = self.store().read(|tx| {
                let now = tx.now();
                let stopped = tx.holds_in_force()?.iter().any(|h| match &h.scope {
                    HoldScope::Everything => true,
                    HoldScope::Plan { plan_id } => *plan_id == plan.id,
                    HoldScope::Session { session_id } => plan.home_session_id == Some(*session_id),
                    _ => false,
                });
                Ok((
                    stopped,
                    tx.picture_spend_since(now - now.rem_euclid(DAY_MS))?,
                ))
            })?;
            if stopped {
                return Ok(not_judged(
                    "a stop holds the job; no pictures are judged under it",
                ));
            }
            if !budget_left(spent) {
                return Ok(not_judged("today's picture judging has spent its budget"));
            }
        }
        let Some(judge) = self.judge().cloned() else {
            return Ok(not_judged("no picture judge is set up"));
        };
        if visual && !judge.sees_pictures() {
            return Ok(not_judged(
                "no model that reads pictures is set (Tools → Roles: the picture judge, or a \
                 default model that takes pictures)",
            ));
        }
        let line = self.store().read(|tx| {
            Ok(super::manage::check_view(tx, check.id)?
                .line
                .unwrap_or_default())
        })?;
        let (seams, pictures, whole_set) = if visual {
            let folder = Path::new(&plan.folder).join(pictures_folder(check));
            match seam_pictures(&parts, &folder, &pictures_folder(check)).await {
                Ok((s, p)) => (s, p, Vec::new()),
                Err(o) => return Ok(o),
            }
        } else {
            text_seams(&parts)
        };
        let ask = prompt(&line, &plan.spec.rules, &seams, &whole_set);
        let answer = self
            .ask_judge(check, judge.as_ref(), ask, pictures, seams.len(), !visual)
            .await?;
        let mut o = match answer {
            Err(o) => o,
            Ok(a) => {
                let (passed, detail, output) = outcome(&seams, &a);
                let mut o = Outcome::new(
                    if passed {
                        RunOutcome::Passed
                    } else {
                        RunOutcome::Failed
                    },
                    detail,
                );
                o.output_tail = output;
                o
            }
        };
        o.for_reference = visual && o.outcome != RunOutcome::Error;
        Ok(o)
    }

    /// AC-16: call the judge, once more if the answer does not read; every call billed.
    async fn ask_judge(
        &self,
        check: &CheckRecord,
        judge: &dyn PictureJudge,
        ask: String,
        pictures: Vec<Picture>,
        seams: usize,
        whole_set: bool,
    ) -> Result<Result<troupe_core::seams::judge::Answer, Outcome>, CollabError> {
        let mut ask = ask;
        for attempt in 0..2 {
            let call = judge.judge(ask.clone(), pictures.clone()).await;
            let read = call
                .raw
                .as_ref()
                .map(|raw| parse_answer(raw, seams, whole_set));
            self.bill(
                check,
                &call,
                match &read {
                    Ok(Ok(_)) => "read",
                    Ok(Err(_)) => "unreadable",
                    Err(_) => "failed",
                },
            )?;
            match read {
                Ok(Ok(a)) => return Ok(Ok(a)),
                // No model to ask at all is a setting to make, not a judge that failed.
                Err(why) if call.model.is_none() => {
                    return Ok(Err(not_judged(&format!(
                        "no model is set for the picture judge (Tools → Roles: picture_judge, \
                         else default): {why}"
                    ))));
                }
                Err(why) => {
                    return Ok(Err(not_judged(&format!("the judge gave no answer: {why}"))));
                }
                Ok(Err(why)) if attempt == 0 => {
                    ask.push_str(&format!(
                        "\nYour last answer could not be read ({why}). Answer again with the \
                         JSON object only.\n"
                    ));
                }
                Ok(Err(why)) => {
                    return Ok(Err(not_judged(&format!(
                        "the judge's answer could not be read twice: {why}"
                    ))));
                }
            }
        }
        unreachable!("the loop returns on its second pass")
    }

    /// Record one call as spend of its own kind, acceptance checks.
    fn bill(
        &self,
        check: &CheckRecord,
        call: &JudgeCall,
        answer: &'static str,
    ) -> Result<(), CollabError> {
        let Some(model) = call.model.clone() else {
            return Ok(());
        };
        self.store().write(|tx| {
            tx.record_acceptance_check_call(&NewAcceptanceCheckCall {
                check_id: check.id,
                model,
                pictures: call.pictures_sent,
                input_tokens: call.input_tokens,
                output_tokens: call.output_tokens,
                answer,
                raw: call.raw.clone().ok(),
            })
        })?;
        Ok(())
    }
}

fn not_judged(why: &str) -> Outcome {
    error(format!("not judged: {why}"))
}

fn text_of(p: &Part) -> &str {
    match &p.body {
        Body::Text(t) => t,
        _ => "",
    }
}

/// Text seams: the end of one part and the start of the next, and the whole set's digest.
fn text_seams(
    parts: &[Part],
) -> (
    Vec<Seam>,
    Vec<Picture>,
    Vec<troupe_core::seams::split::PartDigest>,
) {
    let seams = parts
        .windows(2)
        .map(|w| Seam {
            from: w[0].name.clone(),
            to: w[1].name.clone(),
            evidence: SeamEvidence::Text {
                end_of_from: end_of(text_of(&w[0]), EXCERPT_CHARS),
                start_of_to: start_of(text_of(&w[1]), EXCERPT_CHARS),
            },
        })
        .collect();
    let digests = parts
        .iter()
        .map(|p| {
            let text = text_of(p);
            let heading = text
                .lines()
                .next()
                .filter(|l| l.trim_start().starts_with('#'))
                .map(|l| l.trim_start_matches('#').trim().to_string())
                .unwrap_or_default();
            digest(
                &p.name,
                &Section {
                    heading,
                    text: text.to_string(),
                },
            )
        })
        .collect();
    (seams, Vec::new(), digests)
}

/// Picture seams: each seam's two sides side by side, kept under `folder` (the job folder's
/// `checks/<check>/`, emptied first) and sent to the judge.
async fn seam_pictures(
    parts: &[Part],
    folder: &Path,
    shown_as: &str,
) -> Result<(Vec<Seam>, Vec<Picture>), Outcome> {
    let _ = tokio::fs::remove_dir_all(folder).await;
    tokio::fs::create_dir_all(folder)
        .await
        .map_err(|e| error(format!("{shown_as} cannot be made: {e}")))?;
    let mut seams = Vec::new();
    let mut pictures = Vec::new();
    for (i, w) in parts.windows(2).enumerate() {
        let n = i + 1;
        let left = side(&w[0], folder, &format!(".seam-{n:02}-end.png"), true).await;
        let right = side(&w[1], folder, &format!(".seam-{n:02}-start.png"), false).await;
        let (Some(left), Some(right)) = (left, right) else {
            return Err(error(format!(
                "the frames of {}→{} could not be taken (ffmpeg is needed)",
                w[0].name, w[1].name
            )));
        };
        let name = format!("seam-{n:02}.png");
        let out = folder.join(&name);
        let made = frames::side_by_side(&left, &right, &out).await;
        for p in [&left, &right] {
            if p.file_name()
                .is_some_and(|f| f.to_string_lossy().starts_with(".seam-"))
            {
                let _ = tokio::fs::remove_file(p).await;
            }
        }
        let bytes = if made {
            tokio::fs::read(&out).await.ok()
        } else {
            None
        };
        let Some(bytes) = bytes.filter(|b| b.len() as u64 <= MAX_PICTURE_BYTES) else {
            return Err(error(format!(
                "the picture of {}→{} could not be made",
                w[0].name, w[1].name
            )));
        };
        let Some(media_type) = sniff_media_type(&bytes) else {
            return Err(error(format!("{shown_as}/{name} is not a picture")));
        };
        pictures.push(Picture { media_type, bytes });
        seams.push(Seam {
            from: w[0].name.clone(),
            to: w[1].name.clone(),
            evidence: SeamEvidence::Picture {
                index: n,
                path: format!("{shown_as}/{name}"),
            },
        });
    }
    Ok((seams, pictures))
}

/// One side of a seam as a picture file: a picture is itself; a video's last (`end`) or
/// first frame is taken into `folder`.
async fn side(p: &Part, folder: &Path, name: &str, end: bool) -> Option<PathBuf> {
    match &p.body {
        Body::Picture(path) => Some(path.clone()),
        Body::Video {
            file,
            start,
            end: stop,
        } => {
            let out = folder.join(name);
            let ok = if end {
                frames::last_frame(file, *start, *stop, &out).await
            } else {
                frames::first_frame(file, *start, &out).await
            };
            ok.then_some(out)
        }
        Body::Text(_) => None,
    }
}
