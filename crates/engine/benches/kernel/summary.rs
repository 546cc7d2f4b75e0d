//! Several runs back to back: each run's process prints one `result` line, the parent collects
//! them and prints the median of every figure per mode, durability and tool.

use crate::setup::Tool;
use std::collections::BTreeMap;
use troupe_store::Durability;

/// The line a mode's process prints for the parent: `result mode=M durability=D [tool=T]
/// key=value …`; a mode that calls no tool (idle) has no `tool`.
pub fn result_line(
    mode: &str,
    durability: Durability,
    tool: Option<Tool>,
    figures: &[(&str, f64)],
) -> String {
    let mut line = format!("result mode={mode} durability={durability}");
    if let Some(tool) = tool {
        line.push_str(&format!(" tool={tool}"));
    }
    for (k, v) in figures {
        line.push_str(&format!(" {k}={v:.3}"));
    }
    line
}

/// One run's figures, in the order it printed them.
type Figures = Vec<(String, f64)>;

/// Every run's figures, by (mode, durability, tool), in the order they ran.
#[derive(Default)]
pub struct Results {
    runs: BTreeMap<(String, String, String), Vec<Figures>>,
}

impl Results {
    /// Takes a `result` line; other lines are ignored.
    pub fn take(&mut self, line: &str) {
        let Some(rest) = line.strip_prefix("result ") else {
            return;
        };
        let mut mode = String::new();
        let mut durability = String::new();
        let mut tool = String::new();
        let mut figures = Vec::new();
        for pair in rest.split_whitespace() {
            let Some((k, v)) = pair.split_once('=') else {
                continue;
            };
            match k {
                "mode" => mode = v.to_string(),
                "durability" => durability = v.to_string(),
                "tool" => tool = v.to_string(),
                _ => {
                    if let Ok(x) = v.parse::<f64>() {
                        figures.push((k.to_string(), x));
                    }
                }
            }
        }
        self.runs
            .entry((mode, durability, tool))
            .or_default()
            .push(figures);
    }

    /// The median of each figure, with every run's value in the order they ran.
    pub fn print(&self) {
        if self.runs.values().all(|r| r.len() < 2) && self.runs.len() < 2 {
            return;
        }
        println!("summary: median of the runs (every run's value in the order they ran)");
        for ((mode, durability, tool), runs) in &self.runs {
            let tool = if tool.is_empty() {
                String::new()
            } else {
                format!(" tool={tool}")
            };
            println!(
                "  {mode} durability={durability}{tool} ({} runs)",
                runs.len()
            );
            let keys: Vec<&String> = runs.first().into_iter().flatten().map(|(k, _)| k).collect();
            for key in keys {
                let values: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| r.iter().find(|(k, _)| k == key).map(|(_, v)| *v))
                    .collect();
                let shown: Vec<String> = values.iter().map(|v| num(*v)).collect();
                println!(
                    "    {key:<22} median {:>9}   ({})",
                    num(median(values.clone())),
                    shown.join(" · ")
                );
            }
        }
    }
}

/// Whole numbers for large figures, two decimals for small ones (load, seconds), three below
/// one (commits per step under group commit are a few hundredths).
fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}
