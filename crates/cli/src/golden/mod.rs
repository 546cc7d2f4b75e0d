//! `troupe bench golden`: fixed jobs run against a model through a real daemon, each judged by
//! deterministic checks, with what it cost. See docs/BENCHMARKS.md.

pub mod args;
pub mod checks;
pub mod daemon;
pub mod job;
pub mod pipeline_job;
pub mod progress;
pub mod proxy;
pub mod report;
pub mod runner;

use crate::exec::UsageError;
use anyhow::{Result, bail};
use args::GoldenArgs;
use runner::{Model, RunResult};
use std::io::IsTerminal;

pub async fn golden(a: GoldenArgs) -> Result<u8> {
    let model = match (&a.base_url, &a.config, &a.script_set) {
        (Some(url), None, None) => Model::Endpoint {
            base_url: url.clone(),
            model: a.model.clone().unwrap_or_default(),
            api_key_env: a.api_key_env.clone(),
            kind: a.kind.clone(),
            max_output_tokens: a.max_output_tokens,
        },
        (None, Some(c), None) => match &a.role {
            None => Model::Config(c.clone()),
            Some(role) => endpoint_of_role(c, role, a.max_output_tokens)?,
        },
        (None, None, Some(s)) => Model::Scripts(s.clone()),
        _ => {
            return Err(UsageError(
                "name the model: --base-url URL --model NAME, --config FILE, or --script-set SET"
                    .into(),
            )
            .into());
        }
    };
    if a.max_output_tokens.is_some() && !matches!(model, Model::Endpoint { .. }) {
        return Err(UsageError(
            "--max-output-tokens caps the measured endpoint: give it with --base-url, or with \
             --config and --role (a config file used as it is sets its own caps)"
                .into(),
        )
        .into());
    }
    let mut jobs = job::load_all(&a.jobs_dir)?;
    if !a.jobs.is_empty() {
        let known: Vec<String> = jobs.iter().map(|j| j.id.clone()).collect();
        if let Some(unknown) = a.jobs.iter().find(|j| !known.contains(j)) {
            bail!(
                "no job {unknown:?} in {} (jobs: {})",
                a.jobs_dir.display(),
                known.join(", ")
            );
        }
        jobs.retain(|j| a.jobs.contains(&j.id));
    }
    if let Some(cap) = a.max_wall_secs {
        for j in &mut jobs {
            j.file.limits.wall_secs = j.file.limits.wall_secs.min(cap);
        }
    }
    let proxy = match &model {
        Model::Endpoint { base_url, .. } => Some(proxy::Proxy::start(base_url).await?),
        _ => None,
    };
    let header = match &model {
        Model::Endpoint {
            base_url,
            model,
            max_output_tokens,
            ..
        } => match max_output_tokens {
            Some(n) => {
                format!("Golden path: `{model}` at {base_url}, replies capped at {n} tokens")
            }
            None => format!("Golden path: `{model}` at {base_url}"),
        },
        Model::Config(c) => format!("Golden path: the endpoints of {}", c.display()),
        Model::Scripts(s) => format!("Golden path: scripted answers `{s}`"),
    };
    let live = progress::Live::new(std::io::stdout().is_terminal() && !a.plain);
    let mut results = Vec::new();
    for job in &jobs {
        for run in 1..=a.repeat {
            let label = if a.repeat > 1 {
                format!("{} #{run}", job.id)
            } else {
                job.id.clone()
            };
            live.start(&label);
            let dir = a.out.join("runs").join(format!("{}-{run}", job.id));
            let result = run_one(job, run, &model, proxy.as_ref(), &dir, &live, &a).await;
            if let Some(why) = result
                .prompt_reuse
                .as_ref()
                .and_then(|p| p.unreachable.clone())
            {
                live.finish("UNREACHABLE");
                bail!(
                    "could not reach the endpoint ({why}); nothing was counted (each run's data is in {})",
                    a.out.join("runs").display()
                );
            }
            live.finish(match &result.failure {
                None => "pass",
                Some(_) => "FAIL",
            });
            if let Some(why) = &result.failure {
                println!("    {why}");
            }
            results.push(result);
        }
    }
    let table = report::write(&a.out, &header, &results)?;
    println!("\n{table}");
    println!(
        "results: {} and {}",
        a.out.join("results.json").display(),
        a.out.join("results.md").display()
    );
    Ok(if results.iter().all(|r| r.passed) {
        0
    } else {
        1
    })
}

async fn run_one(
    job: &job::Job,
    run: u32,
    model: &Model,
    proxy: Option<&proxy::Proxy>,
    dir: &std::path::Path,
    live: &progress::Live,
    a: &GoldenArgs,
) -> RunResult {
    let missing: Vec<&String> = job.file.needs.iter().filter(|c| !on_path(c)).collect();
    let mut result = RunResult {
        job: job.id.clone(),
        title: job.file.title.clone(),
        run,
        passed: false,
        failure: None,
        checks: Vec::new(),
        wall_ms: 0,
        usage: Default::default(),
        prompt_reuse: None,
        cost: None,
    };
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        result.failure = Some(format!("the checks need {} on PATH", names.join(", ")));
        return result;
    }
    let outcome = runner::run_job(job, model, proxy.map(|p| p.base_url.as_str()), dir, live).await;
    result.prompt_reuse = proxy.map(proxy::Proxy::take);
    match outcome {
        Err(e) => result.failure = Some(format!("the bench could not run the job: {e:#}")),
        Ok((checks, limit, wall_ms, usage)) => {
            result.failure = limit.or_else(|| {
                checks
                    .iter()
                    .find(|c| !c.passed)
                    .map(|c| format!("{}: {}", c.check, c.message))
            });
            result.passed = result.failure.is_none();
            result.cost = match (a.price_in, a.price_out) {
                (Some(i), Some(o)) => {
                    Some(usage.input_tokens as f64 * i / 1e6 + usage.output_tokens as f64 * o / 1e6)
                }
                _ => None,
            };
            (result.checks, result.wall_ms, result.usage) = (checks, wall_ms, usage);
        }
    }
    result
}

/// The endpoint a config file gives `role` (or `default`, for a role it leaves out), as if it
/// had been named with --base-url and --model.
fn endpoint_of_role(path: &std::path::Path, role: &str, cap: Option<u32>) -> Result<Model> {
    let config = crate::config::Config::load(path)?;
    config.validate()?;
    let endpoints = config.role_endpoints();
    let Some(e) = endpoints.get(role).or_else(|| endpoints.get("default")) else {
        bail!(
            "{} gives no endpoint to role {role:?} (nor to default)",
            path.display()
        );
    };
    let base_url = match (e.kind.as_str(), &e.base_url) {
        (_, Some(url)) => url.clone(),
        ("openai", None) => "https://api.openai.com/v1".to_string(),
        ("anthropic", None) => "https://api.anthropic.com".to_string(),
        (kind, None) => bail!(
            "role {role:?} uses a {kind} endpoint, which the bench cannot measure through its proxy; use --script-set for scripted answers"
        ),
    };
    if !matches!(e.kind.as_str(), "openai" | "anthropic") {
        bail!(
            "role {role:?} uses a {} endpoint; the bench measures openai or anthropic ones",
            e.kind
        );
    }
    Ok(Model::Endpoint {
        base_url,
        model: e.model.clone(),
        api_key_env: e.api_key_env.clone(),
        kind: e.kind.clone(),
        max_output_tokens: cap.or(e.max_output_tokens),
    })
}

fn on_path(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(cmd).is_file()))
}
