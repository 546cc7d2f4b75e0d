//! The bench's live display: one line per job. In a terminal the running job's line is redrawn
//! in place (elapsed time, model calls and tokens so far); otherwise plain lines are printed, one
//! when a job starts, one every ten model calls, one when it ends.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone)]
pub struct Live {
    inner: Arc<Mutex<State>>,
    terminal: bool,
}

struct State {
    label: String,
    started: Instant,
    calls: u64,
    tokens: u64,
    active: bool,
}

impl Live {
    pub fn new(terminal: bool) -> Live {
        let live = Live {
            inner: Arc::new(Mutex::new(State {
                label: String::new(),
                started: Instant::now(),
                calls: 0,
                tokens: 0,
                active: false,
            })),
            terminal,
        };
        if terminal {
            // The clock on the running line moves even while the model thinks.
            let ticker = live.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    ticker.redraw();
                }
            });
        }
        live
    }

    pub fn start(&self, label: &str) {
        {
            let mut s = self.lock();
            *s = State {
                label: label.to_string(),
                started: Instant::now(),
                calls: 0,
                tokens: 0,
                active: true,
            };
        }
        if self.terminal {
            self.redraw();
        } else {
            println!("{label:<28} running");
        }
    }

    pub fn update(&self, calls: u64, tokens: u64) {
        let plain_line = {
            let mut s = self.lock();
            s.calls = calls;
            s.tokens = tokens;
            (!self.terminal && calls.is_multiple_of(10)).then(|| line(&s, "running"))
        };
        match plain_line {
            Some(l) => println!("{l}"),
            None => self.redraw(),
        }
    }

    /// The job's last line: its verdict stays on screen.
    pub fn finish(&self, verdict: &str) {
        let text = {
            let mut s = self.lock();
            s.active = false;
            line(&s, verdict)
        };
        if self.terminal {
            print!("\r\x1b[K{text}\n");
            let _ = std::io::stdout().flush();
        } else {
            println!("{text}");
        }
    }

    fn redraw(&self) {
        if !self.terminal {
            return;
        }
        let s = self.lock();
        if s.active {
            print!("\r\x1b[K{}", line(&s, "running"));
            let _ = std::io::stdout().flush();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn line(s: &State, status: &str) -> String {
    let secs = s.started.elapsed().as_secs();
    format!(
        "{:<28} {status:<8} {:>3}:{:02}  {:>4} model calls  {:>8} tokens",
        s.label,
        secs / 60,
        secs % 60,
        s.calls,
        s.tokens
    )
}
