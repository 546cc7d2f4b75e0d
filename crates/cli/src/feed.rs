//! One feed of what happens to a thread: stored events and live notices merged in the order
//! they arrive, so progress lines come out in the order things happened.

use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use troupe_core::ThreadId;
use troupe_engine::StreamNotice;
use troupe_store::Event;

pub enum Item {
    Event(Event),
    Notice(StreamNotice),
}

pub struct Feed {
    rx: mpsc::UnboundedReceiver<Item>,
    stop: watch::Sender<bool>,
    forwarders: Vec<JoinHandle<()>>,
}

impl Feed {
    /// Start forwarding the thread's items from both channels. Subscribe before the work
    /// starts, so nothing is missed.
    pub fn start(
        thread: ThreadId,
        events: broadcast::Receiver<Event>,
        stream: broadcast::Receiver<StreamNotice>,
    ) -> Feed {
        let (tx, rx) = mpsc::unbounded_channel();
        let (stop, stop_rx) = watch::channel(false);
        let forwarders = vec![
            tokio::spawn(forward(events, tx.clone(), stop_rx.clone(), move |e| {
                (e.thread_id == Some(thread)).then_some(Item::Event(e))
            })),
            tokio::spawn(forward(stream, tx, stop_rx, move |n| {
                (notice_thread(&n) == thread).then_some(Item::Notice(n))
            })),
        ];
        Feed {
            rx,
            stop,
            forwarders,
        }
    }

    /// The next item; `None` once the feed is finished and empty.
    pub async fn next(&mut self) -> Option<Item> {
        self.rx.recv().await
    }

    /// Stop forwarding after taking everything already sent, and return what is left.
    pub async fn finish(mut self) -> Vec<Item> {
        self.stop.send_replace(true);
        for f in self.forwarders.drain(..) {
            let _ = f.await;
        }
        let mut rest = Vec::new();
        while let Ok(item) = self.rx.try_recv() {
            rest.push(item);
        }
        rest
    }
}

async fn forward<T: Clone>(
    mut rx: broadcast::Receiver<T>,
    tx: mpsc::UnboundedSender<Item>,
    mut stop: watch::Receiver<bool>,
    keep: impl Fn(T) -> Option<Item>,
) {
    loop {
        tokio::select! {
            r = rx.recv() => match r {
                Ok(v) => {
                    if let Some(item) = keep(v) {
                        let _ = tx.send(item);
                    }
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
            _ = stop.wait_for(|s| *s) => break,
        }
    }
    // Everything sent before the stop was asked for is already in the channel.
    loop {
        match rx.try_recv() {
            Ok(v) => {
                if let Some(item) = keep(v) {
                    let _ = tx.send(item);
                }
            }
            Err(TryRecvError::Lagged(_)) => {}
            Err(_) => return,
        }
    }
}

fn notice_thread(n: &StreamNotice) -> ThreadId {
    match n {
        StreamNotice::TextDelta { thread_id, .. }
        | StreamNotice::ToolCallStarted { thread_id, .. }
        | StreamNotice::ToolCallWriting { thread_id, .. }
        | StreamNotice::ModelCallStarted { thread_id, .. }
        | StreamNotice::CommandStarted { thread_id, .. } => *thread_id,
    }
}
