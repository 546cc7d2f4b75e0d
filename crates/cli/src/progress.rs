//! What `troupe exec` shows while a run goes on: a one-line spinner on a terminal, plain
//! lines otherwise, or one JSON object per line with `--json`.

use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use troupe_engine::StreamNotice;
use troupe_store::Event;

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// Status text longer than this is cut, so the spinner stays on one line.
const STATUS_WIDTH: usize = 70;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Style {
    /// A spinner line redrawn in place (stderr is a terminal).
    Spinner,
    /// One plain line per step (stderr is a pipe or file).
    Lines,
    /// JSON lines on stdout.
    Json,
}

pub struct Progress {
    style: Style,
    frame: usize,
    status: Option<String>,
    /// Whether a spinner line is on screen and must be cleared before other output.
    drawn: bool,
    /// The model of the call in flight, for the status line.
    model: String,
}

impl Progress {
    pub fn new(style: Style) -> Self {
        Progress {
            style,
            frame: 0,
            status: None,
            drawn: false,
            model: "model".into(),
        }
    }

    pub fn style(&self) -> Style {
        self.style
    }

    /// A stored event of the thread being run.
    pub fn event(&mut self, e: &Event) {
        if self.style == Style::Json {
            json_line("event", e);
            return;
        }
        match e.kind.as_str() {
            "tool_call" => {
                let name = str_field(&e.payload, "name");
                let status = str_field(&e.payload, "status");
                let line = if status == "ok" {
                    format!("✓ {name}")
                } else {
                    format!("✗ {name} ({status})")
                };
                self.status = None;
                self.line(&line);
            }
            "command_finished" => self.status = None,
            "run_ended" => {
                self.status = None;
                self.clear();
            }
            "model_call" if e.payload.get("error").is_some_and(|v| !v.is_null()) => {
                self.status = None;
                self.line(&format!("✗ model call failed ({})", self.model));
            }
            _ => {}
        }
    }

    /// A live notice of the thread being run.
    pub fn notice(&mut self, n: &StreamNotice) {
        if self.style == Style::Json {
            json_line("stream", n);
            return;
        }
        match n {
            StreamNotice::ModelCallStarted { model, .. } => {
                self.model = model.clone();
                if self.style == Style::Lines {
                    self.line(&format!("> model call ({model})"));
                }
                self.set_status(format!("calling {model}…"));
            }
            StreamNotice::TextDelta { .. } => {
                // Only while the call is in flight: a late delta must not bring a finished
                // run's status line back.
                if self
                    .status
                    .as_deref()
                    .is_some_and(|s| s.starts_with("calling "))
                {
                    self.set_status(format!("{} is answering…", self.model));
                }
            }
            StreamNotice::ToolCallStarted { name, .. } => {
                self.set_status(format!("tool: {name}"));
            }
            StreamNotice::ToolCallWriting { name, chars, .. } => {
                self.set_status(format!("writing {name}: {chars} characters"));
            }
            StreamNotice::CommandStarted { command, .. } => {
                // The engine names the command by its summary, `shell: <command>`.
                let command = command.strip_prefix("shell: ").unwrap_or(command);
                if self.style == Style::Lines {
                    self.line(&format!("$ {}", one_line(command, usize::MAX)));
                }
                self.set_status(format!("running: {}", one_line(command, STATUS_WIDTH)));
            }
        }
    }

    /// Advance the spinner (called on a timer).
    pub fn tick(&mut self) {
        if self.style == Style::Spinner && self.status.is_some() {
            self.frame = (self.frame + 1) % FRAMES.len();
            self.draw();
        }
    }

    /// Remove the spinner line, before the final output.
    pub fn clear(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }

    /// A line on stderr that stays (the spinner, if any, is redrawn below it).
    pub fn line(&mut self, text: &str) {
        self.clear();
        eprintln!("{text}");
        if self.style == Style::Spinner {
            self.draw();
        }
    }

    fn set_status(&mut self, status: String) {
        self.status = Some(status);
        if self.style == Style::Spinner {
            self.draw();
        }
    }

    fn draw(&mut self) {
        let Some(status) = &self.status else {
            return;
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{} {status}", FRAMES[self.frame]);
        let _ = err.flush();
        self.drawn = true;
    }
}

/// One JSON object on stdout: the value's own fields plus `"type": kind`.
pub fn json_line(kind: &str, value: &impl Serialize) {
    let mut v = serde_json::to_value(value).unwrap_or(Value::Null);
    let obj = match v.as_object_mut() {
        Some(obj) => {
            obj.insert("type".into(), Value::String(kind.into()));
            v
        }
        None => serde_json::json!({"type": kind, "value": v}),
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{obj}");
    let _ = out.flush();
}

fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("?")
}

/// The first line of `text`, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    let more = text.trim().lines().count() > 1;
    let mut out: String = first.chars().take(max).collect();
    if more || first.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn one_line_cuts_long_and_multi_line_commands() {
        assert_eq!(one_line("ls -la", 70), "ls -la");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("a\nb", 70), "a…");
    }
}
