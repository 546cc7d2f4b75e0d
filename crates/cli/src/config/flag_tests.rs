//! Tests of the command-line flags that replace the config file's `default` endpoint.
use super::tests::{FULL, openai, parse};
use super::*;

fn flags() -> EndpointFlags {
    EndpointFlags::default()
}

#[test]
fn no_flags_change_nothing() {
    let mut c = parse(FULL).unwrap();
    let before = c.clone();
    c.apply_flags(&flags()).unwrap();
    assert_eq!(c, before);
}

#[test]
fn script_flag_makes_default_scripted() {
    let mut c = parse(FULL).unwrap();
    c.apply_flags(&EndpointFlags {
        script: Some("/tmp/demo.json".into()),
        ..flags()
    })
    .unwrap();
    let d = c.default_endpoint().unwrap();
    assert_eq!(d.kind, "scripted");
    assert_eq!(d.script.as_deref(), Some("/tmp/demo.json"));
    assert_eq!(c.roles["default"], FLAGS_ENDPOINT);
    // Other roles keep their endpoints.
    assert_eq!(c.role_endpoints()["review"].kind, "anthropic");
    c.validate().unwrap();
}

#[test]
fn relative_script_flag_is_made_absolute() {
    let mut c = Config::default();
    c.apply_flags(&EndpointFlags {
        script: Some("demo.json".into()),
        ..flags()
    })
    .unwrap();
    let script = PathBuf::from(c.default_endpoint().unwrap().script.clone().unwrap());
    assert!(script.is_absolute());
    assert_eq!(script, std::path::absolute("demo.json").unwrap());
}

#[test]
fn script_flag_with_others_is_an_error() {
    let mut c = Config::default();
    let e = c
        .apply_flags(&EndpointFlags {
            script: Some("/tmp/demo.json".into()),
            model: Some("m".into()),
            ..flags()
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("--script cannot be combined"), "{e}");
    assert_eq!(c, Config::default());
}

#[test]
fn the_reply_cap_flag_caps_the_flags_endpoint_or_the_configured_default() {
    let mut c = parse(FULL).unwrap();
    c.apply_flags(&EndpointFlags {
        base_url: Some("http://127.0.0.1:8080/v1".into()),
        model: Some("qwen".into()),
        max_output_tokens: Some(1024),
        ..flags()
    })
    .unwrap();
    assert_eq!(c.default_endpoint().unwrap().max_output_tokens, Some(1024));
    // Alone, it caps the configured default endpoint and keeps the rest of it.
    let mut c = parse(FULL).unwrap();
    let before = c.default_endpoint().unwrap().clone();
    c.apply_flags(&EndpointFlags {
        max_output_tokens: Some(2048),
        ..flags()
    })
    .unwrap();
    assert_eq!(
        c.default_endpoint().unwrap(),
        &EndpointSpec {
            max_output_tokens: Some(2048),
            ..before
        }
    );
    // A scripted endpoint calls no model: the cap is refused with it.
    let mut c = Config::default();
    let e = c
        .apply_flags(&EndpointFlags {
            script: Some("/tmp/demo.json".into()),
            max_output_tokens: Some(10),
            ..flags()
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("--max-output-tokens"), "{e}");
}

#[test]
fn base_url_and_model_replace_default_with_openai() {
    let mut c = parse(FULL).unwrap();
    c.apply_flags(&EndpointFlags {
        base_url: Some("https://api.example.com/v1".into()),
        model: Some("gpt-x".into()),
        api_key_env: Some("EXAMPLE_KEY".into()),
        ..flags()
    })
    .unwrap();
    assert_eq!(
        c.default_endpoint().unwrap(),
        &EndpointSpec {
            kind: "openai".into(),
            base_url: Some("https://api.example.com/v1".into()),
            model: "gpt-x".into(),
            api_key_env: Some("EXAMPLE_KEY".into()),
            script: None,
            takes_pictures: false,
            thinking_levels: Vec::new(),
            max_output_tokens: None,
        }
    );
    // The file's endpoint itself is untouched.
    assert_eq!(c.endpoints["local"], openai("qwen2.5-coder:7b"));
}

#[test]
fn base_url_and_model_work_without_a_config() {
    let mut c = Config::default();
    c.apply_flags(&EndpointFlags {
        base_url: Some("http://127.0.0.1:8080/v1".into()),
        model: Some("m".into()),
        ..flags()
    })
    .unwrap();
    assert_eq!(c.role_endpoints()["default"].model, "m");
    c.validate().unwrap();
}

#[test]
fn provider_anthropic_with_model_needs_no_base_url() {
    let mut c = Config::default();
    c.apply_flags(&EndpointFlags {
        provider: Some("anthropic".into()),
        model: Some("claude-x".into()),
        api_key_env: Some("ANTHROPIC_API_KEY".into()),
        ..flags()
    })
    .unwrap();
    let d = c.default_endpoint().unwrap();
    assert_eq!(d.kind, "anthropic");
    assert_eq!(d.base_url, None);
    assert_eq!(d.model, "claude-x");
    assert_eq!(d.api_key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
}

#[test]
fn unknown_provider_is_an_error() {
    let mut c = Config::default();
    let e = c
        .apply_flags(&EndpointFlags {
            provider: Some("scripted".into()),
            model: Some("m".into()),
            ..flags()
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("--provider must be openai or anthropic"), "{e}");
}

#[test]
fn base_url_without_model_is_an_error() {
    let mut c = parse(FULL).unwrap();
    let before = c.clone();
    let e = c
        .apply_flags(&EndpointFlags {
            base_url: Some("http://x/v1".into()),
            ..flags()
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("--base-url needs --model"), "{e}");
    assert_eq!(c, before);
}

#[test]
fn provider_without_model_is_an_error() {
    let mut c = parse(FULL).unwrap();
    let e = c
        .apply_flags(&EndpointFlags {
            provider: Some("anthropic".into()),
            ..flags()
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("--provider needs --model"), "{e}");
}

#[test]
fn invalid_base_url_flag_is_an_error() {
    let mut c = Config::default();
    let e = c
        .apply_flags(&EndpointFlags {
            base_url: Some("localhost:8080".into()),
            model: Some("m".into()),
            ..flags()
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains(FLAGS_ENDPOINT) && e.contains("http://"), "{e}");
    assert_eq!(c, Config::default());
}

#[test]
fn model_alone_overrides_only_the_default_roles_model() {
    let mut c = parse(&FULL.replace("review = \"claude\"", "review = \"local\"")).unwrap();
    c.apply_flags(&EndpointFlags {
        model: Some("llama3".into()),
        ..flags()
    })
    .unwrap();
    let r = c.role_endpoints();
    assert_eq!(r["default"], openai("llama3"));
    // A role that shared the endpoint keeps the file's model.
    assert_eq!(r["review"], openai("qwen2.5-coder:7b"));
    assert_eq!(c.endpoints["local"].model, "qwen2.5-coder:7b");
}

#[test]
fn model_alone_can_also_change_the_key_variable() {
    let mut c = parse(FULL).unwrap();
    c.apply_flags(&EndpointFlags {
        model: Some("llama3".into()),
        api_key_env: Some("LOCAL_KEY".into()),
        ..flags()
    })
    .unwrap();
    let d = c.default_endpoint().unwrap();
    assert_eq!(d.model, "llama3");
    assert_eq!(d.api_key_env.as_deref(), Some("LOCAL_KEY"));
    assert_eq!(d.base_url.as_deref(), Some("http://127.0.0.1:11434/v1"));
}

#[test]
fn model_alone_without_default_is_an_error() {
    let mut c = Config::default();
    let e = c
        .apply_flags(&EndpointFlags {
            model: Some("llama3".into()),
            ..flags()
        })
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--model alone") && e.contains("none is configured"),
        "{e}"
    );
    assert_eq!(c, Config::default());
}

#[test]
fn model_alone_on_scripted_default_is_an_error() {
    let mut c = Config::default();
    c.apply_flags(&EndpointFlags {
        script: Some("/tmp/s.json".into()),
        ..flags()
    })
    .unwrap();
    let e = c
        .apply_flags(&EndpointFlags {
            model: Some("llama3".into()),
            ..flags()
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("scripted"), "{e}");
}
