//! What Lattice says to the model: the per-call system section (state, requirements, Pathway,
//! the one valid next action), the prompts the controller delivers on entering a state, on a
//! resume or after a dropped action, the continuation, the completion mail and the Step text
//! a Lattice-owned BlueprintLoop carries out.

use troupe_core::lattice::{LatticeRun, PromptType, Step, StepStatus, WorkState, pathway};

fn bullets(items: &[String]) -> String {
    if items.is_empty() {
        return "  (none)".into();
    }
    items
        .iter()
        .map(|i| format!("  - {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What to do in a state: the one action that leaves it and how to get there.
pub fn state_task(run: &LatticeRun) -> String {
    match run.state {
        WorkState::Clarifying => "Clarify the goal with the person until it is clear what success means. Then call lattice_submit {\"action\":\"submit_requirements\",\"goal\":…,\"success_criteria\":[…],\"constraints\":[…],\"non_goals\":[…],\"assumptions\":[…]} and end the turn. If something only the person can decide is unclear, ask them and end the turn.".into(),
        WorkState::Planning => "Plan an ordered Pathway of Steps that reaches the success criteria: call pathway_write {\"future_steps\":[{\"title\",\"objective\",\"acceptance_criteria\":[…]}…]} (it replaces the pending Steps), then lattice_submit {\"action\":\"submit_pathway\",\"reason\":…} and end the turn.".into(),
        WorkState::ReviewingPathway => "Review the Pathway against the requirements and what the finished Steps showed: rewrite the unstarted Steps with pathway_write if they need it (only pending Steps can change), then lattice_submit {\"action\":\"submit_pathway_review\",\"reason\":…} and end the turn. The first pending Step becomes the current one.".into(),
        WorkState::Blueprinting => "Write a Blueprint for the current Step only: a note of kind \"blueprint\" (note_create, or note_update to revise one) that is decision-complete for this Step. Then lattice_submit {\"action\":\"submit_blueprint\",\"blueprint_id\":<note id>} and end the turn.".into(),
        WorkState::ReviewingBlueprint => "Review the bound Blueprint critically against the Step's objective and acceptance criteria; fix it with note_update if needed. Then lattice_submit {\"action\":\"submit_blueprint_review\",\"reason\":…} and end the turn.".into(),
        WorkState::AwaitingExecution => "The reviewed Blueprint awaits the person's approval. Do not start the work; answer the person's questions. If the person tells you to go ahead, call lattice_submit {\"action\":\"approve_execution\",\"reason\":…} and end the turn.".into(),
        WorkState::Executing => "A BlueprintLoop carries out the current Step; it owns this turn.".into(),
    }
}

fn step_line(s: &Step) -> String {
    let mut line = format!(
        "- {} [{}] {}: {}",
        s.id,
        s.status.as_str(),
        s.title,
        s.objective
    );
    if !s.acceptance_criteria.is_empty() {
        line.push_str(&format!(
            " (accept when: {})",
            s.acceptance_criteria.join("; ")
        ));
    }
    if let Some(r) = &s.result_summary {
        line.push_str(&format!(" — result: {r}"));
    }
    if let Some(f) = &s.failure_reason
        && s.status != StepStatus::Completed
    {
        line.push_str(&format!(" — failed: {f}"));
    }
    if let Some(b) = &s.blueprint {
        line.push_str(&format!(
            " — Blueprint note_{} v{}",
            b.note_id, b.bound_version
        ));
    }
    line
}

/// The Pathway as the model reads it.
pub fn pathway_text(run: &LatticeRun) -> String {
    let v = pathway::split(run);
    let mut out = String::new();
    out.push_str("Done or ended:\n");
    if v.history.is_empty() {
        out.push_str("  (none)\n");
    }
    for s in &v.history {
        out.push_str(&format!("  {}\n", step_line(s)));
    }
    out.push_str("Current:\n");
    match &v.current {
        Some(s) => out.push_str(&format!("  {}\n", step_line(s))),
        None => out.push_str("  (none)\n"),
    }
    out.push_str("Future (editable):\n");
    if v.editable_future.is_empty() {
        out.push_str("  (none)\n");
    }
    for s in &v.editable_future {
        out.push_str(&format!("  {}\n", step_line(s)));
    }
    out
}

fn requirements_text(run: &LatticeRun) -> String {
    match &run.requirements {
        None => match &run.goal_seed {
            Some(g) => format!("Not agreed yet. The person's goal: {g}"),
            None => "Not agreed yet.".into(),
        },
        Some(r) => format!(
            "Goal: {}\nSuccess criteria:\n{}\nConstraints:\n{}\nNon-goals:\n{}\nAssumptions:\n{}",
            r.goal,
            bullets(&r.success_criteria),
            bullets(&r.constraints),
            bullets(&r.non_goals),
            bullets(&r.assumptions)
        ),
    }
}

/// The system section of every model call while the Run is not executing.
pub fn system_section(run: &LatticeRun) -> String {
    format!(
        "# Lattice\n\nThis conversation runs Lattice {id} ({mode} mode): a large goal aligned, planned as an ordered Pathway of Steps, each Step carried out by a reviewed Blueprint in a BlueprintLoop. The host owns every transition: your tools only write the Pathway's unstarted Steps, Blueprint notes, and one action request at a time.\n\nState: {state} (state revision {sr}, Pathway revision {pr})\nValid next action: {action}\n\n## Requirements\n{req}\n\n## Pathway\n{path}\n## What to do now\n{task}",
        id = run.id,
        mode = run.mode.as_str(),
        state = run.state.as_str(),
        sr = run.state_revision,
        pr = run.pathway_revision,
        action = run.valid_action(),
        req = requirements_text(run),
        path = pathway_text(run),
        task = state_task(run),
    )
}

/// The prompt a `deliver_prompt` effect delivers.
pub fn prompt(run: &LatticeRun, kind: PromptType, errors: &[String]) -> String {
    let head = match kind {
        PromptType::StateEntry => format!(
            "[Lattice {}] The Run is now in {}.",
            run.id,
            run.state.as_str()
        ),
        PromptType::Resume => format!(
            "[Lattice {}] The Run was resumed in {}.",
            run.id,
            run.state.as_str()
        ),
        PromptType::Repair => format!(
            "[Lattice {}] Your last action could not be taken:\n{}\nThe Run stays in {}.",
            run.id,
            bullets(errors),
            run.state.as_str()
        ),
    };
    format!("{head}\n\n{}", state_task(run))
}

/// The plain continuation after a finished turn that left the state unchanged.
pub fn continuation(run: &LatticeRun) -> String {
    format!(
        "[Lattice {}] The Run is still in {}: a final answer does not move it. {}",
        run.id,
        run.state.as_str(),
        state_task(run)
    )
}

/// The run instruction of a Step's BlueprintLoop: only this Step is authorized.
pub fn step_instruction(run: &LatticeRun, s: &Step) -> String {
    format!(
        "Lattice {} Step {} \"{}\": {}\nAcceptance criteria:\n{}\nOnly this Step is authorized: no work on future Steps of the Pathway.",
        run.id,
        s.id,
        s.title,
        s.objective,
        bullets(&s.acceptance_criteria)
    )
}

/// The completion mail: steps done, the final Step and its audit summary.
pub fn completion(run: &LatticeRun) -> String {
    let total = run.pathway.len();
    let done = run.completed_steps();
    let last = run
        .pathway
        .iter()
        .rev()
        .find(|s| s.status == StepStatus::Completed);
    let last_text = last.map_or(String::new(), |s| {
        format!(
            "\nFinal Step: {} \"{}\". Audit summary: {}",
            s.id,
            s.title,
            s.result_summary.as_deref().unwrap_or("(none)")
        )
    });
    format!(
        "[Lattice {}] The Run is completed: {done} of {total} Steps done.{last_text}\nSummarize the result for the person.",
        run.id
    )
}

/// What a Lattice tool says while a Step executes (TOOL-4).
pub const EXECUTING_REFUSAL: &str = "Lattice tools are withdrawn while a Step executes: the BlueprintLoop owns this turn. This refusal authorizes no workaround through other tools and no work on a future Step; carry out the current Blueprint, then call blueprint_loop_stop.";
