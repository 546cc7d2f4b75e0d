//! The channel layer the daemon holds: its accounts (each a definition and its adapter), the
//! conversation layer it delivers into, and the Boss Mode seam.

use crate::adapter::ChannelAdapter;
use crate::def::{ChannelDef, ChannelKind};
use crate::seam::BossIngress;
use crate::webhook::WebhookAdapter;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use troupe_collab::Collab;

/// One channel account: its definition and the adapter that speaks for it.
#[derive(Clone)]
pub struct Account {
    pub def: ChannelDef,
    pub adapter: Arc<dyn ChannelAdapter>,
}

/// How a send is tried before it is settled failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The waits between attempts; attempts = waits + 1.
    pub waits: Vec<Duration>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            waits: vec![Duration::from_millis(500), Duration::from_secs(2)],
        }
    }
}

/// The turn of one chat's first message.
type ChatLock = Arc<tokio::sync::Mutex<()>>;

#[derive(Clone)]
pub struct Channels {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) collab: Collab,
    accounts: RwLock<BTreeMap<String, Account>>,
    boss: RwLock<Option<Arc<dyn BossIngress>>>,
    /// One first message per chat at a time, so a chat gets one conversation.
    chat_locks: Mutex<HashMap<(String, String), ChatLock>>,
    /// Sends being made by this process, so the follower and a resend never race on one.
    pub(crate) in_flight: Mutex<HashSet<i64>>,
    pub(crate) retry: RetryPolicy,
}

impl Channels {
    pub fn new(collab: Collab) -> Self {
        Self::with_retry(collab, RetryPolicy::default())
    }

    pub fn with_retry(collab: Collab, retry: RetryPolicy) -> Self {
        Channels {
            inner: Arc::new(Inner {
                collab,
                accounts: RwLock::default(),
                boss: RwLock::default(),
                chat_locks: Mutex::default(),
                in_flight: Mutex::default(),
                retry,
            }),
        }
    }

    /// Build each account's adapter from its definition, reading its secret through
    /// `secret` (the daemon's environment); the accounts replace the ones held. A disabled
    /// account needs no secret. An error names the account and what is wrong.
    pub fn configure(
        &self,
        defs: &[ChannelDef],
        secret: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        let mut out = BTreeMap::new();
        for def in defs {
            def.validate()?;
            if out.contains_key(&def.name) {
                return Err(format!("[channels.{}] is defined twice", def.name));
            }
            let value = secret(&def.secret_env).filter(|s| !s.is_empty());
            let adapter: Arc<dyn ChannelAdapter> = match (def.kind, value) {
                (ChannelKind::Webhook, Some(s)) => Arc::new(WebhookAdapter::new(
                    &def.name,
                    s.as_bytes(),
                    &def.outbound_url,
                )),
                (_, None) if def.enabled => {
                    return Err(format!(
                        "[channels.{}] secret_env: the variable {} is not set (or empty)",
                        def.name, def.secret_env
                    ));
                }
                // Disabled and without its secret: kept, so sends already recorded for it
                // are settled as failed with a reason rather than left pending.
                (ChannelKind::Webhook, None) => {
                    Arc::new(WebhookAdapter::new(&def.name, b"", &def.outbound_url))
                }
            };
            out.insert(
                def.name.clone(),
                Account {
                    def: def.clone(),
                    adapter,
                },
            );
        }
        *self
            .inner
            .accounts
            .write()
            .unwrap_or_else(|p| p.into_inner()) = out;
        Ok(())
    }

    /// Hold an account with an adapter of the caller's (another chat service, a test's).
    pub fn insert_account(&self, account: Account) {
        self.inner
            .accounts
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(account.def.name.clone(), account);
    }

    pub fn account(&self, name: &str) -> Option<Account> {
        self.inner
            .accounts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    /// An enabled account's adapter, for sends the caller makes itself (reactions).
    pub fn adapter(&self, name: &str) -> Option<Arc<dyn ChannelAdapter>> {
        self.account(name)
            .filter(|a| a.def.enabled)
            .map(|a| a.adapter)
    }

    /// Every account's definition, by name.
    pub fn accounts(&self) -> Vec<ChannelDef> {
        self.inner
            .accounts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|a| a.def.clone())
            .collect()
    }

    /// Install Boss Mode's routing (see [`crate::seam`]).
    pub fn set_boss_ingress(&self, boss: Arc<dyn BossIngress>) {
        *self.inner.boss.write().unwrap_or_else(|p| p.into_inner()) = Some(boss);
    }

    pub(crate) fn boss_ingress(&self) -> Option<Arc<dyn BossIngress>> {
        self.inner
            .boss
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn chat_lock(&self, account: &str, chat: &str) -> ChatLock {
        self.inner
            .chat_locks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((account.to_string(), chat.to_string()))
            .or_default()
            .clone()
    }

    pub fn collab(&self) -> &Collab {
        &self.inner.collab
    }
}
