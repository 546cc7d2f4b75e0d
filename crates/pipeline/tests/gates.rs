//! The request and response gates: each refusal names the field and the reason, and every
//! refusal is listed.

mod common;

use common::{Harness, fixture};
use troupe_pipeline::gate::{check_request, check_response};
use troupe_pipeline::session::{Response, ResumeRef};

const FINDINGS: &str = r#"{"items":["a"]}"#;

fn at_step_two() -> Harness {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    let r = Response::done("survey", Harness::key(1, 1))
        .with_field("findings", "response/data/findings.json");
    h.answer(r, &[("response/data/findings.json", FINDINGS)])
        .unwrap();
    h
}

fn rewrite_request(
    h: &Harness,
    key: troupe_pipeline::session::BranchKey,
    edit: impl Fn(&mut serde_json::Value),
) {
    let path = h.session.request_path(key, None);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

#[test]
fn a_request_edited_after_hashing_is_refused() {
    let h = at_step_two();
    let key = Harness::key(2, 1);
    assert!(check_request(&h.defs, &h.session, key, None).is_ok());
    rewrite_request(&h, key, |v| v["requirements"]["sneaky"] = true.into());
    let r = check_request(&h.defs, &h.session, key, None).unwrap_err();
    assert!(
        r.get("request.json").unwrap().reason.contains("sha256"),
        "{r}"
    );
}

#[test]
fn the_request_gate_lists_every_bad_field() {
    let h = at_step_two();
    let key = Harness::key(2, 1);
    rewrite_request(&h, key, |v| {
        v["operatorId"] = "ghost".into();
        v["inputs"]["findings"] = "step-1/parallel-1/response/data/other.json".into();
        v["inputs"]["later"] = "step-3/parallel-1/response/x.md".into();
        v["resume"] = serde_json::json!({"step": 1, "parallel": 1});
    });
    let r = check_request(&h.defs, &h.session, key, None).unwrap_err();
    for field in [
        "operatorId",
        "request.json",
        "inputs.findings",
        "inputs.later",
        "resume",
    ] {
        assert!(r.names(field), "no refusal for {field}: {r}");
    }
    assert!(
        r.get("inputs.findings")
            .unwrap()
            .reason
            .contains("does not exist"),
        "{r}"
    );
}

#[test]
fn an_input_the_earlier_branch_did_not_record_is_refused() {
    let h = at_step_two();
    let key = Harness::key(2, 1);
    // The file exists, but the survey branch recorded a different path for `findings`.
    h.session
        .write_branch_file(Harness::key(1, 1), None, "response/data/notes.json", b"{}")
        .unwrap();
    rewrite_request(&h, key, |v| {
        v["inputs"]["findings"] = "step-1/parallel-1/response/data/notes.json".into()
    });
    let r = check_request(&h.defs, &h.session, key, None).unwrap_err();
    assert!(
        r.get("inputs.findings")
            .unwrap()
            .reason
            .contains("did not record"),
        "{r}"
    );
}

#[test]
fn a_resume_must_name_a_branch_of_the_same_operator() {
    let h = at_step_two();
    let key = Harness::key(2, 2);
    rewrite_request(&h, key, |v| {
        v["resume"] = serde_json::to_value(ResumeRef {
            step: 2,
            parallel: 1,
        })
        .unwrap();
    });
    let r = check_request(&h.defs, &h.session, key, None).unwrap_err();
    assert!(
        r.get("resume")
            .unwrap()
            .reason
            .contains("ran `left`, not `right`"),
        "{r}"
    );
}

#[test]
fn a_malformed_or_misshapen_request_is_refused_with_its_field() {
    let h = at_step_two();
    let key = Harness::key(2, 1);
    std::fs::write(h.session.request_path(key, None), "{ nope").unwrap();
    let r = check_request(&h.defs, &h.session, key, None).unwrap_err();
    assert!(
        r.get("request.json").unwrap().reason.contains("line 1"),
        "{r}"
    );
    rewrite_request(&h, Harness::key(2, 2), |v| v["step"] = "two".into());
    let r = check_request(&h.defs, &h.session, Harness::key(2, 2), None).unwrap_err();
    assert!(r.names("step"), "{r}");
}

fn refusals_for(
    h: &Harness,
    response: &Response,
    files: &[(&str, &str)],
) -> troupe_pipeline::gate::Refusals {
    let key = response.branch();
    for (p, t) in files {
        h.session
            .write_branch_file(key, None, p, t.as_bytes())
            .unwrap();
    }
    h.session
        .write_response(response, "prose that says: route me to merge\n")
        .unwrap();
    check_response(&h.defs, &h.session, key, None).unwrap_err()
}

#[test]
fn the_response_gate_checks_status_stop_and_awaiting() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    let key = Harness::key(1, 1);
    let mut r = Response::blocked("survey", key, "NOT_A_CODE", "x");
    let refusals = refusals_for(&h, &r, &[]);
    assert!(
        refusals
            .get("stop")
            .unwrap()
            .reason
            .contains("neither a code"),
        "{refusals}"
    );
    r.stop = None;
    assert!(
        refusals_for(&h, &r, &[])
            .get("stop")
            .unwrap()
            .reason
            .contains("needs a stop")
    );
    let mut w = Response::waiting("survey", key, "review", "gossip");
    assert!(refusals_for(&h, &w, &[]).names("awaiting.kind"));
    w.awaiting = None;
    assert!(refusals_for(&h, &w, &[]).names("awaiting"));
    let mut d = Response::done("survey", key).with_field("findings", "response/data/findings.json");
    d.fallbacks.push(troupe_pipeline::session::Fallback {
        code: "SURVEY_NEEDS_PERSON".into(),
        note: None,
    });
    d.operator_id = "left".into();
    let refusals = refusals_for(&h, &d, &[("response/data/findings.json", FINDINGS)]);
    assert!(refusals.names("operatorId"), "{refusals}");
}

#[test]
fn the_response_gate_checks_fields_against_the_operator_outputs() {
    let mut h = Harness::new(&fixture("scenario"), "fan");
    h.start();
    let key = Harness::key(1, 1);
    let r = Response::done("survey", key).with_field("findings", "response/data/findings.json");
    let refusals = refusals_for(
        &h,
        &r,
        &[("response/data/findings.json", r#"{"items":[1]}"#)],
    );
    assert!(refusals.names("fields.findings.items.0"), "{refusals}");

    let r = Response::done("survey", key).with_field("findings", "request/request.json");
    let refusals = refusals_for(&h, &r, &[]);
    assert!(
        refusals
            .get("fields.findings")
            .unwrap()
            .reason
            .contains("under `response/`"),
        "{refusals}"
    );

    let mut r = Response::done("survey", key).with_field("findings", "response/data/findings.json");
    r.writes.push("src/x.rs".into());
    let refusals = refusals_for(&h, &r, &[("response/data/findings.json", FINDINGS)]);
    assert!(refusals.names("writes"), "{refusals}");

    // A response that breaks the shipped schema names the field.
    let path = h.session.response_path(key, None);
    std::fs::write(&path, r#"{"schemaVersion":1,"operatorId":"survey","step":1,"parallel":1,"status":"finished","stauts":1}"#).unwrap();
    let refusals = check_response(&h.defs, &h.session, key, None).unwrap_err();
    assert!(refusals.names("status"), "{refusals}");
    assert!(
        refusals.0.iter().any(|r| r.reason.contains("stauts")),
        "{refusals}"
    );
}
