//! The generic webhook adapter: inbound requests are JSON signed with the account's secret
//! (`X-Troupe-Signature: sha256=<hex HMAC-SHA256 of the body>`); outbound sends are the same
//! kind of signed JSON POSTed to the account's `outbound_url`. Any chat service can be wired
//! to it with a small bridge.

use crate::adapter::{ChannelAdapter, InboundError, SendError, Sent};
use crate::message::{ChatType, InboundMessage, OutboundBody, OutboundKind, Reaction};
use crate::signature::{SIGNATURE_HEADER, sign, verify};
use async_trait::async_trait;
use serde::Deserialize;
use std::time::Duration;

/// How long one outbound POST may take.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// The inbound body: what a bridge sends for one chat message. Fields Troupe does not read
/// are ignored (a bridge may forward the service's own).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Deserialize)]
pub struct InboundBody {
    pub chat_id: String,
    pub chat_type: ChatType,
    #[serde(default)]
    pub chat_name: Option<String>,
    pub sender_id: String,
    #[serde(default)]
    pub sender_name: Option<String>,
    /// Unique per account: a repeat of the same id is answered `duplicate` and delivers nothing.
    pub message_id: String,
    pub text: String,
    /// Whether the message mentions the account's Bot (groups may require it).
    #[serde(default)]
    pub mentioned: bool,
}

pub struct WebhookAdapter {
    account: String,
    secret: Vec<u8>,
    outbound_url: String,
    http: reqwest::Client,
}

impl WebhookAdapter {
    pub fn new(account: &str, secret: &[u8], outbound_url: &str) -> Self {
        WebhookAdapter {
            account: account.to_string(),
            secret: secret.to_vec(),
            outbound_url: outbound_url.trim().to_string(),
            http: reqwest::Client::builder()
                .timeout(SEND_TIMEOUT)
                .build()
                .unwrap_or_default(),
        }
    }

    async fn send(&self, body: OutboundBody) -> Result<Sent, SendError> {
        let bytes = serde_json::to_vec(&body).map_err(|e| SendError(e.to_string()))?;
        let signature = sign(&self.secret, &bytes);
        let resp = self
            .http
            .post(&self.outbound_url)
            .header("content-type", "application/json")
            .header(SIGNATURE_HEADER, signature)
            .body(bytes)
            .send()
            .await
            .map_err(|e| SendError(format!("POST {}: {e}", self.outbound_url)))?;
        let status = resp.status();
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            let text: String = text.chars().take(300).collect();
            return Err(SendError(format!(
                "POST {} answered {status}: {text}",
                self.outbound_url
            )));
        }
        // A receiver may name the message it posted; anything else is fine too.
        let message_id = resp.json::<serde_json::Value>().await.ok().and_then(|v| {
            v.get("message_id")
                .and_then(|m| m.as_str().map(String::from))
        });
        Ok(Sent { message_id })
    }

    fn body(
        &self,
        chat_id: &str,
        text: &str,
        reply_to: Option<&str>,
        kind: OutboundKind,
        key: &str,
    ) -> OutboundBody {
        OutboundBody {
            account_id: self.account.clone(),
            chat_id: chat_id.to_string(),
            text: text.to_string(),
            reply_to_message_id: reply_to.map(String::from),
            kind: kind.as_str().to_string(),
            idempotency_key: key.to_string(),
        }
    }
}

/// Read a signed body. The signature is checked before the body is read at all.
pub fn read_inbound(
    account: &str,
    secret: &[u8],
    signature: Option<&str>,
    body: &[u8],
) -> Result<InboundMessage, InboundError> {
    if !verify(secret, body, signature) {
        return Err(InboundError::BadSignature);
    }
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| InboundError::Malformed(format!("the body is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(InboundError::Invalid(format!(
            "the body must be a JSON object, got {}",
            kind_of(&value)
        )));
    }
    let b: InboundBody = serde_json::from_value(value)
        .map_err(|e| InboundError::Invalid(format!("invalid body: {e}")))?;
    for (field, v) in [
        ("chat_id", &b.chat_id),
        ("sender_id", &b.sender_id),
        ("message_id", &b.message_id),
    ] {
        if v.trim().is_empty() {
            return Err(InboundError::Invalid(format!("{field}: must not be empty")));
        }
        if v.len() > 256 {
            return Err(InboundError::Invalid(format!("{field}: at most 256 bytes")));
        }
    }
    troupe_core::conversation::validate_line(&b.text)
        .map_err(|m| InboundError::Invalid(format!("text: {}", m.replacen("body", "text", 1))))?;
    Ok(InboundMessage {
        account: account.to_string(),
        chat_id: b.chat_id,
        chat_type: b.chat_type,
        chat_name: b.chat_name,
        sender_id: b.sender_id,
        sender_name: b.sender_name,
        message_id: b.message_id,
        text: b.text,
        mentioned: b.mentioned,
    })
}

fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[async_trait]
impl ChannelAdapter for WebhookAdapter {
    fn account(&self) -> &str {
        &self.account
    }

    fn inbound(
        &self,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<InboundMessage, InboundError> {
        read_inbound(&self.account, &self.secret, signature, body)
    }

    async fn reply(
        &self,
        chat_id: &str,
        reply_to: &str,
        text: &str,
        key: &str,
    ) -> Result<Sent, SendError> {
        self.send(self.body(chat_id, text, Some(reply_to), OutboundKind::Reply, key))
            .await
    }

    async fn push(&self, chat_id: &str, text: &str, key: &str) -> Result<Sent, SendError> {
        self.send(self.body(chat_id, text, None, OutboundKind::Message, key))
            .await
    }

    async fn react(
        &self,
        chat_id: &str,
        message_id: &str,
        reaction: Reaction,
        key: &str,
    ) -> Result<Sent, SendError> {
        self.send(self.body(
            chat_id,
            reaction.as_str(),
            Some(message_id),
            OutboundKind::Reaction,
            key,
        ))
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"s3cret";

    fn signed(body: &str) -> (String, Vec<u8>) {
        (sign(SECRET, body.as_bytes()), body.as_bytes().to_vec())
    }

    #[test]
    fn inbound_reads_a_signed_message() {
        let (sig, body) = signed(
            r#"{"chat_id":"c1","chat_type":"group","chat_name":"Ops","sender_id":"u1",
                "sender_name":"Ada","message_id":"m1","text":"hi","mentioned":true,"extra":1}"#,
        );
        let m = read_inbound("acme", SECRET, Some(&sig), &body).unwrap();
        assert_eq!(m.account, "acme");
        assert_eq!(m.chat_type, ChatType::Group);
        assert_eq!(
            (m.chat_name.as_deref(), m.sender_name.as_deref()),
            (Some("Ops"), Some("Ada"))
        );
        assert!(m.mentioned);
    }

    #[test]
    fn inbound_checks_the_signature_before_the_body() {
        let (_, body) = signed("not json");
        assert_eq!(
            read_inbound("acme", SECRET, None, &body),
            Err(InboundError::BadSignature)
        );
        let wrong = sign(b"other", &body);
        assert_eq!(
            read_inbound("acme", SECRET, Some(&wrong), &body),
            Err(InboundError::BadSignature)
        );
        let (sig, body) = signed("not json");
        assert!(matches!(
            read_inbound("acme", SECRET, Some(&sig), &body),
            Err(InboundError::Malformed(_))
        ));
    }

    #[test]
    fn inbound_names_what_is_wrong() {
        for (raw, want) in [
            ("[1]", "got an array"),
            (
                r#"{"chat_type":"dm","sender_id":"u","message_id":"m","text":"x"}"#,
                "chat_id",
            ),
            (
                r#"{"chat_id":"c","chat_type":"channel","sender_id":"u","message_id":"m","text":"x"}"#,
                "unknown variant",
            ),
            (
                r#"{"chat_id":"c","chat_type":"dm","sender_id":"u","message_id":" ","text":"x"}"#,
                "message_id: must not be empty",
            ),
            (
                r#"{"chat_id":"c","chat_type":"dm","sender_id":"u","message_id":"m","text":"  "}"#,
                "text: text must not be empty",
            ),
        ] {
            let (sig, body) = signed(raw);
            match read_inbound("acme", SECRET, Some(&sig), &body) {
                Err(InboundError::Invalid(m)) => assert!(m.contains(want), "{raw}: {m}"),
                other => panic!("{raw}: {other:?}"),
            }
        }
    }
}
