//! SC4, SC7: the picture judge's call. It runs on the `picture_judge` role (falling back to
//! `default`); a comparison that sends pictures needs that endpoint's model to take pictures,
//! else that one comparison runs on the default model (a Claude model always takes them).
//! When neither takes pictures the comparison goes on the facts alone.

use super::evidence::Picture;
use async_trait::async_trait;
use base64::Engine as _;
use std::time::Duration;
use troupe_core::thread::AgentBinding;
use troupe_engine::ModelResolver;
use troupe_llm::{ChatMessage, ImagePart};

/// One judge call's time limit.
const LIMIT: Duration = Duration::from_secs(120);

/// What a judge call gave.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeCall {
    /// The answer's text, or why there is none.
    pub raw: Result<String, String>,
    /// The model that answered; None when none could be resolved.
    pub model: Option<String>,
    /// Pictures actually sent.
    pub pictures_sent: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Default for JudgeCall {
    fn default() -> Self {
        JudgeCall {
            raw: Err("not called".into()),
            model: None,
            pictures_sent: 0,
            input_tokens: 0,
            output_tokens: 0,
        }
    }
}

/// The picture judge: the daemon's is [`RoleJudge`]; tests give their own.
#[async_trait]
pub trait PictureJudge: Send + Sync {
    async fn judge(&self, prompt: String, pictures: Vec<Picture>) -> JudgeCall;

    /// Whether a call with pictures would show them to a model (a seams check's pictures are
    /// its only evidence, so it is not sent to a model that cannot see them).
    fn sees_pictures(&self) -> bool {
        true
    }
}

/// The judge on the daemon's roles.
pub struct RoleJudge {
    pub roles: std::sync::Arc<dyn ModelResolver>,
}

fn binding(role: &str) -> AgentBinding {
    AgentBinding {
        name: "picture judge".into(),
        system_prompt: String::new(),
        role: role.into(),
        endpoint: None,
    }
}

fn image(p: &Picture) -> ImagePart {
    ImagePart {
        media_type: p.media_type.to_string(),
        data: base64::engine::general_purpose::STANDARD.encode(&p.bytes),
    }
}

#[async_trait]
impl PictureJudge for RoleJudge {
    fn sees_pictures(&self) -> bool {
        ["picture_judge", "default"].iter().any(|role| {
            self.roles
                .resolve(&binding(role))
                .is_ok_and(|r| r.provider.takes_pictures())
        })
    }

    async fn judge(&self, prompt: String, pictures: Vec<Picture>) -> JudgeCall {
        let mut resolved = match self.roles.resolve(&binding("picture_judge")) {
            Ok(r) => r,
            Err(e) => {
                return JudgeCall {
                    raw: Err(e),
                    ..JudgeCall::default()
                };
            }
        };
        // SC7: pictures go only to a model that takes them; else the default model's.
        if !pictures.is_empty()
            && !resolved.provider.takes_pictures()
            && let Ok(d) = self.roles.resolve(&binding("default"))
        {
            resolved = d;
        }
        let send = resolved.provider.takes_pictures();
        let images: Vec<ImagePart> = if send {
            pictures.iter().map(image).collect()
        } else {
            Vec::new()
        };
        let mut text = prompt;
        if !pictures.is_empty() && !send {
            text.push_str(
                "\n(The pictures could not be shown to this model: judge on the facts above.)\n",
            );
        }
        let model = resolved.provider.model().to_string();
        let pictures_sent = images.len() as u32;
        let out = crate::oneshot::call_once(
            resolved.provider.as_ref(),
            "You judge craft and form for a team app and answer with JSON only.",
            ChatMessage::user_with_images(text, images),
            600,
            LIMIT,
            false,
        )
        .await;
        match out {
            Ok(resp) => JudgeCall {
                raw: Ok(resp.text),
                model: Some(model),
                pictures_sent,
                input_tokens: resp.usage.input_tokens,
                output_tokens: resp.usage.output_tokens,
            },
            Err(why) => JudgeCall {
                raw: Err(why),
                model: Some(model),
                pictures_sent,
                ..JudgeCall::default()
            },
        }
    }
}
