//! Tests of the config file rules.
use super::*;
use std::collections::HashMap;

pub(super) const FULL: &str = r#"
# Named endpoints
[endpoints.local]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen2.5-coder:7b"

[endpoints.claude]
kind = "anthropic"
model = "claude-sonnet-4-5"
api_key_env = "ANTHROPIC_API_KEY"

[roles]
default = "local"
review = "claude"

[limits]
request_timeout_secs = 120
max_attempts = 2
max_hops = 50
"#;

pub(super) fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("/etc/troupe/config.toml"))
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

pub(super) fn openai(model: &str) -> EndpointSpec {
    EndpointSpec {
        kind: "openai".into(),
        base_url: Some("http://127.0.0.1:11434/v1".into()),
        model: model.into(),
        api_key_env: None,
        script: None,
        takes_pictures: false,
        thinking_levels: Vec::new(),
        max_output_tokens: None,
    }
}

#[test]
fn parses_the_documented_example() {
    let c = parse(FULL).unwrap();
    assert_eq!(c.endpoints.len(), 2);
    assert_eq!(c.endpoints["local"], openai("qwen2.5-coder:7b"));
    assert_eq!(c.endpoints["claude"].kind, "anthropic");
    assert_eq!(
        c.endpoints["claude"].api_key_env.as_deref(),
        Some("ANTHROPIC_API_KEY")
    );
    assert_eq!(c.endpoints["claude"].base_url, None);
    assert_eq!(c.roles["default"], "local");
    assert_eq!(
        c.limits,
        Limits {
            request_timeout_secs: 120,
            max_attempts: 2,
            max_hops: 50
        }
    );
}

#[test]
fn docs_example_parses() {
    let doc = include_str!("../../../../docs/CONFIG.md");
    let start = doc
        .find("```toml\n")
        .expect("docs/CONFIG.md has a toml example")
        + 8;
    let len = doc[start..].find("```").unwrap();
    let c = parse(&doc[start..start + len]).unwrap();
    assert!(c.default_endpoint().is_some());
}

#[test]
fn empty_file_is_empty_config_with_default_limits() {
    let c = parse("").unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(c.limits.request_timeout_secs, 300);
    assert_eq!(c.limits.max_attempts, 4);
    assert_eq!(c.limits.max_hops, 400);
    assert!(c.role_endpoints().is_empty());
}

#[test]
fn partial_limits_keep_other_defaults() {
    let c = parse("[limits]\nmax_hops = 7\n").unwrap();
    assert_eq!(c.limits.max_hops, 7);
    assert_eq!(c.limits.max_attempts, 4);
}

#[test]
fn zero_limit_is_refused() {
    let e = err("[limits]\nmax_attempts = 0\n");
    assert!(
        e.contains("limits.max_attempts must be greater than 0"),
        "{e}"
    );
}

#[test]
fn role_endpoints_maps_roles_to_specs() {
    let c = parse(FULL).unwrap();
    let r = c.role_endpoints();
    assert_eq!(r.len(), 2);
    assert_eq!(r["default"], openai("qwen2.5-coder:7b"));
    assert_eq!(r["review"].model, "claude-sonnet-4-5");
    assert!(!r.contains_key("scribe"));
}

#[test]
fn parse_error_names_file_and_line() {
    let e = err("[endpoints.local]\nkind = \"openai\"\nmodel = \n");
    assert!(e.contains("/etc/troupe/config.toml"), "{e}");
    assert!(e.contains("line 3"), "{e}");
}

#[test]
fn unknown_top_level_table_is_refused() {
    let e = err("[endpoint.local]\nkind = \"openai\"\nmodel = \"m\"\n");
    assert!(e.contains("unknown field") && e.contains("endpoint"), "{e}");
    assert!(e.contains("line 1"), "{e}");
}

#[test]
fn an_endpoint_may_be_marked_as_taking_pictures() {
    let c = parse("[endpoints.eyes]\nkind = \"openai\"\nmodel = \"m\"\ntakes_pictures = true\n[roles]\npicture_judge = \"eyes\"\n").unwrap();
    assert!(c.role_endpoints()["picture_judge"].takes_pictures);
    assert!(!parse(FULL).unwrap().role_endpoints()["default"].takes_pictures);
    let e = err("[endpoints.eyes]\nkind = \"openai\"\nmodel = \"m\"\ntakes_pictures = \"yes\"\n");
    assert!(e.contains("takes_pictures"), "{e}");
}

#[test]
fn an_endpoint_may_list_its_models_thinking_levels() {
    let c = parse("[endpoints.gpt]\nkind = \"openai\"\nmodel = \"gpt-5\"\nthinking_levels = [\"minimal\", \"low\"]\n[roles]\nreading = \"gpt\"\n").unwrap();
    assert_eq!(
        c.role_endpoints()["reading"].thinking_levels,
        ["minimal", "low"]
    );
    let e =
        err("[endpoints.c]\nkind = \"anthropic\"\nmodel = \"m\"\nthinking_levels = [\"low\"]\n");
    assert!(e.contains("thinking_levels is for openai endpoints"), "{e}");
    let e =
        err("[endpoints.g]\nkind = \"openai\"\nmodel = \"m\"\nthinking_levels = [\"very low\"]\n");
    assert!(e.contains("'very low' is not a level name"), "{e}");
}

#[test]
fn an_endpoint_may_cap_its_replies_and_a_zero_cap_is_refused() {
    let c = parse("[endpoints.claude]\nkind = \"anthropic\"\nmodel = \"claude-x\"\nmax_output_tokens = 32000\n[roles]\ndefault = \"claude\"\n").unwrap();
    assert_eq!(
        c.role_endpoints()["default"].max_output_tokens,
        Some(32_000)
    );
    let e = err("[endpoints.c]\nkind = \"anthropic\"\nmodel = \"m\"\nmax_output_tokens = 0\n");
    assert!(
        e.contains("max_output_tokens is 0; it must be from 1 to"),
        "{e}"
    );
}

#[test]
fn unknown_endpoint_field_is_refused() {
    let e = err("[endpoints.local]\nkind = \"openai\"\nmodel = \"m\"\nbaseurl = \"http://x\"\n");
    assert!(e.contains("unknown field") && e.contains("baseurl"), "{e}");
    assert!(e.contains("line 4"), "{e}");
}

#[test]
fn unknown_limit_is_refused() {
    let e = err("[limits]\nmax_hopz = 3\n");
    assert!(e.contains("max_hopz"), "{e}");
}

#[test]
fn unknown_role_is_refused() {
    let e = err(&FULL.replace("review = \"claude\"", "reviewer = \"claude\""));
    assert!(
        e.contains(
            "role 'reviewer' is not one of default, reading, scribe, judgement, review, picture_judge"
        ),
        "{e}"
    );
    assert!(e.starts_with("/etc/troupe/config.toml: "), "{e}");
}

#[test]
fn every_documented_role_is_accepted() {
    let mut text = String::from("[endpoints.e]\nkind = \"anthropic\"\nmodel = \"m\"\n[roles]\n");
    for role in ROLES {
        text.push_str(&format!("{role} = \"e\"\n"));
    }
    let c = parse(&text).unwrap();
    assert_eq!(c.role_endpoints().len(), ROLES.len());
}

#[test]
fn role_to_undefined_endpoint_is_refused() {
    let e = err(&FULL.replace("review = \"claude\"", "review = \"cloud\""));
    assert!(
        e.contains("role 'review' points to endpoint 'cloud', which is not defined"),
        "{e}"
    );
    assert!(e.contains("defined: claude, local"), "{e}");
    let e = err("[roles]\ndefault = \"x\"\n");
    assert!(e.contains("no endpoints are defined"), "{e}");
}

#[test]
fn invalid_endpoint_is_named() {
    let e = err("[endpoints.bad]\nkind = \"bard\"\nmodel = \"m\"\n");
    assert!(
        e.contains("endpoint 'bad': unknown endpoint kind 'bard'"),
        "{e}"
    );
    let e = err("[endpoints.web]\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"localhost:1\"\n");
    assert!(e.contains("endpoint 'web': base_url 'localhost:1'"), "{e}");
    let e = err("[endpoints.s]\nkind = \"scripted\"\nmodel = \"m\"\n");
    assert!(
        e.contains("endpoint 's': endpoint of kind scripted needs a script"),
        "{e}"
    );
    let e = err("[endpoints.o]\nkind = \"openai\"\nmodel = \" \"\n");
    assert!(
        e.contains("endpoint 'o': endpoint of kind openai needs a model"),
        "{e}"
    );
}

#[test]
fn literal_key_is_refused() {
    let text = FULL.replace(
        "api_key_env = \"ANTHROPIC_API_KEY\"",
        "api_key = \"sk-ant-secret\"",
    );
    let e = parse(&text).unwrap_err();
    assert!(matches!(e, ConfigError::LiteralKey { .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("endpoints.claude.api_key"), "{e}");
    assert!(
        e.contains("put the key in an environment variable and name it with api_key_env"),
        "{e}"
    );
    assert!(
        !e.contains("sk-ant-secret"),
        "the key must not be echoed: {e}"
    );
}

#[test]
fn literal_key_anywhere_is_refused() {
    let e = err("api_key = \"x\"\n");
    assert!(e.contains("'api_key'") && e.contains("api_key_env"), "{e}");
    let e = err("[limits]\napi_key = \"x\"\n");
    assert!(e.contains("limits.api_key"), "{e}");
}

#[test]
fn relative_script_is_resolved_against_config_dir() {
    let text = "[endpoints.demo]\nkind = \"scripted\"\nmodel = \"scripted\"\nscript = \"s/demo.json\"\n\
                [endpoints.abs]\nkind = \"scripted\"\nmodel = \"scripted\"\nscript = \"/opt/x.json\"\n";
    let c = parse(text).unwrap();
    assert_eq!(
        c.endpoints["demo"].script.as_deref(),
        Some("/etc/troupe/s/demo.json")
    );
    assert_eq!(c.endpoints["abs"].script.as_deref(), Some("/opt/x.json"));
}

#[test]
fn load_reads_file_and_resolves_script() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "[endpoints.demo]\nkind = \"scripted\"\nmodel = \"scripted\"\nscript = \"demo.json\"\n\
         [roles]\ndefault = \"demo\"\n",
    )
    .unwrap();
    let c = Config::load(&path).unwrap();
    let script = c.default_endpoint().unwrap().script.clone().unwrap();
    assert_eq!(PathBuf::from(script), dir.path().join("demo.json"));
}

#[test]
fn explicit_missing_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.toml");
    let e = Config::load(&path).unwrap_err();
    assert!(matches!(e, ConfigError::NotFound { .. }), "{e:?}");
    assert!(e.to_string().contains("nope.toml"), "{e}");
    let env = |_: &str| -> Option<String> { None };
    assert!(matches!(
        Config::locate(Some(&path), &env),
        Err(ConfigError::NotFound { .. })
    ));
}

#[test]
fn default_missing_file_is_empty_config() {
    let dir = tempfile::tempdir().unwrap();
    let c = Config::load_or_default(&dir.path().join("nope.toml")).unwrap();
    assert_eq!(c, Config::default());
    let home = dir.path().to_str().unwrap().to_string();
    let env = move |name: &str| (name == "HOME").then(|| home.clone());
    assert_eq!(Config::locate(None, &env).unwrap(), Config::default());
}

#[test]
fn locate_reads_the_xdg_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("troupe")).unwrap();
    std::fs::write(dir.path().join("troupe/config.toml"), FULL).unwrap();
    let vars: HashMap<&str, String> =
        HashMap::from([("XDG_CONFIG_HOME", dir.path().to_str().unwrap().to_string())]);
    let env = move |name: &str| vars.get(name).cloned();
    let c = Config::locate(None, &env).unwrap();
    assert_eq!(c.roles["review"], "claude");
}

#[test]
fn locate_without_home_is_an_error() {
    let env = |_: &str| -> Option<String> { None };
    let e = Config::locate(None, &env).unwrap_err();
    assert!(matches!(e, ConfigError::Path(_)), "{e:?}");
}

#[test]
fn load_of_a_directory_is_a_read_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = Config::load(dir.path()).unwrap_err();
    assert!(matches!(e, ConfigError::Read { .. }), "{e:?}");
}

#[test]
fn load_of_broken_file_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.toml");
    std::fs::write(&path, "[roles]\ndefault = \n").unwrap();
    let e = Config::load(&path).unwrap_err().to_string();
    assert!(e.contains("broken.toml") && e.contains("line 2"), "{e}");
}

#[test]
fn api_key_env_outside_the_patterns_is_a_config_error() {
    let text = FULL.replace("\"ANTHROPIC_API_KEY\"", "\"HOME\"");
    let e = err(&text);
    assert!(
        e.contains("/etc/troupe/config.toml")
            && e.contains("endpoint 'claude'")
            && e.contains("'HOME' is refused")
            && e.contains("*_API_KEY, *_TOKEN, *_KEY"),
        "{e}"
    );
    // The file's own patterns replace the defaults.
    let narrowed = format!("{FULL}\n[keys]\nenv_patterns = [\"OPENAI_API_KEY\"]\n");
    let e = err(&narrowed);
    assert!(
        e.contains("'ANTHROPIC_API_KEY' is refused") && e.contains("OPENAI_API_KEY"),
        "{e}"
    );
    let widened = format!("{text}\n[keys]\nenv_patterns = [\"HOME\"]\n");
    let c = parse(&widened).unwrap();
    assert_eq!(c.key_env_rule().unwrap().patterns(), ["HOME"]);
    let e = err("[keys]\nenv_patterns = [\"*-KEY\"]\n");
    assert!(
        e.contains("keys.env_patterns") && e.contains("'*-KEY'"),
        "{e}"
    );
    let e = err("[keys]\npatterns = [\"*_KEY\"]\n");
    assert!(e.contains("unknown field"), "{e}");
}

#[test]
fn serve_allowed_hosts_are_bare_names() {
    let c = parse("[serve]\nallowed_hosts = [\"troupe.lan\", \"192.168.1.20\"]\n").unwrap();
    assert_eq!(c.serve.allowed_hosts, ["troupe.lan", "192.168.1.20"]);
    let e = err("[serve]\nallowed_hosts = [\"http://troupe.lan:7878\"]\n");
    assert!(
        e.contains("serve.allowed_hosts") && e.contains("without scheme or port"),
        "{e}"
    );
}

#[test]
fn workflows_section_sets_the_loop_guard_defaults() {
    let c = parse(
        "[workflows]\nmax_model_calls = 0\nno_progress_limit = 5\ncontinuation_spacing_ms = 250\n",
    )
    .unwrap();
    let g = c.workflows.guard_limits();
    assert_eq!(g.max_model_calls, 0);
    assert_eq!(g.no_progress_limit, 5);
    assert_eq!(g.spacing_ms, 250);
    // Absent: the documented defaults.
    let d = parse("").unwrap().workflows.guard_limits();
    assert_eq!(d, troupe_core::continuation_guard::GuardLimits::default());
    let e = err("[workflows]\ncontinuation_spacing_ms = 90000000\n");
    assert!(
        e.contains("workflows.continuation_spacing_ms must be at most"),
        "{e}"
    );
    let e = err("[workflows]\nmax_calls = 3\n");
    assert!(e.contains("max_calls"), "{e}");
}

#[test]
fn durability_is_full_unless_the_file_or_the_flag_says_otherwise() {
    use troupe_store::Durability::{Full, Normal};
    let none = parse("").unwrap();
    assert_eq!(none.durability, None);
    assert_eq!(none.durability(None), Full);
    assert_eq!(none.durability(Some(Normal)), Normal);
    let normal = parse("durability = \"normal\"\n").unwrap();
    assert_eq!(normal.durability(None), Normal);
    // The flag wins over the file, both ways.
    assert_eq!(normal.durability(Some(Full)), Full);
    let full = parse("durability = \"full\"\n[limits]\nmax_hops = 7\n").unwrap();
    assert_eq!(full.durability(Some(Normal)), Normal);
    assert_eq!(full.durability(None), Full);
}

#[test]
fn an_unknown_durability_is_refused_with_the_file_and_the_choices() {
    let e = err("durability = \"fast\"\n");
    assert!(e.contains("/etc/troupe/config.toml"), "{e}");
    assert!(e.contains("line 1"), "{e}");
    assert!(
        e.contains("durability must be \"full\"") && e.contains("not \"fast\""),
        "{e}"
    );
}

#[test]
fn the_reading_timeout_defaults_to_20_s_and_is_bounded() {
    assert_eq!(parse("").unwrap().reading.timeout_ms, 20_000);
    assert_eq!(
        parse("[reading]\ntimeout_ms = 5000\n")
            .unwrap()
            .reading
            .timeout_ms,
        5_000
    );
    assert!(err("[reading]\ntimeout_ms = 10\n").contains("reading.timeout_ms"));
    assert!(err("[reading]\nslots = 3\n").contains("slots"));
}

const MCP: &str = r#"
[mcp_servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"]
cwd = "servers"
env = { LOG_LEVEL = "warn" }
env_vars = ["GITHUB_TOKEN"]
tool_timeout_sec = 30
bots = ["ada"]

[mcp_servers.docs]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "DOCS_MCP_TOKEN"
enabled = false
"#;

#[test]
fn mcp_server_tables_parse_with_the_key_as_the_name() {
    let c = parse(MCP).unwrap();
    assert_eq!(c.mcp_servers.len(), 2);
    let files = &c.mcp_servers["files"];
    assert_eq!(files.name, "files");
    assert_eq!(files.command.as_deref(), Some("npx"));
    assert_eq!(files.args.len(), 3);
    // A relative cwd is the config file's directory's, like a script path.
    assert_eq!(files.cwd.as_deref(), Some("/etc/troupe/servers"));
    assert_eq!(files.env["LOG_LEVEL"], "warn");
    assert_eq!(files.env_vars, ["GITHUB_TOKEN"]);
    assert_eq!(files.tool_timeout_sec, 30);
    assert!(files.enabled && files.allows("ada") && !files.allows("bob"));
    let docs = &c.mcp_servers["docs"];
    assert_eq!(docs.url.as_deref(), Some("https://mcp.example.com/mcp"));
    assert_eq!(docs.bearer_token_env_var.as_deref(), Some("DOCS_MCP_TOKEN"));
    assert_eq!(docs.tool_timeout_sec, 120);
    assert!(!docs.enabled);
    assert!(parse("").unwrap().mcp_servers.is_empty());
}

#[test]
fn a_bad_mcp_server_table_is_refused_naming_the_table_and_field() {
    let e = err("[mcp_servers.files]\ncommand = \"x\"\ntool_timeout_sec = 0\n");
    assert!(e.contains("/etc/troupe/config.toml"), "{e}");
    assert!(
        e.contains("[mcp_servers.files] tool_timeout_sec: 0 is out of range"),
        "{e}"
    );
    let e = err("[mcp_servers.both]\ncommand = \"x\"\nurl = \"http://h/mcp\"\n");
    assert!(e.contains("[mcp_servers.both] command:"), "{e}");
    let e = err("[mcp_servers.web]\nurl = \"localhost:8080\"\n");
    assert!(e.contains("[mcp_servers.web] url:"), "{e}");
    let e = err("[mcp_servers.\"Bad Name\"]\ncommand = \"x\"\n");
    assert!(e.contains("[mcp_servers.Bad Name] name:"), "{e}");
    let e = err("[mcp_servers.x]\ncommand = \"x\"\nenv_vars = [\"TROUPE_TOKEN\"]\n");
    assert!(e.contains("[mcp_servers.x] env:"), "{e}");
    // Typos and the name field (the key is the name) are unknown fields, with their line.
    let e = err("[mcp_servers.x]\ncommand = \"x\"\ntimeout = 5\n");
    assert!(e.contains("timeout") && e.contains("line 3"), "{e}");
    let e = err("[mcp_servers.x]\nname = \"x\"\ncommand = \"x\"\n");
    assert!(e.contains("unknown field `name`"), "{e}");
}

const CHANNELS: &str = r#"
[channels.acme]
kind = "webhook"
bot = "Ada"
secret_env = "ACME_CHANNEL_SECRET"
outbound_url = "https://bridge.example/troupe/out"
require_mention = false
allow_dm = false

[channels.ops]
kind = "webhook"
bot = "bot_3"
secret_env = "OPS_SECRET"
outbound_url = "http://127.0.0.1:9000/out"
enabled = false
"#;

#[test]
fn channel_tables_parse_with_the_key_as_the_account() {
    let c = parse(CHANNELS).unwrap();
    assert_eq!(c.channels.len(), 2);
    let acme = &c.channels["acme"];
    assert_eq!(acme.name, "acme");
    assert_eq!(acme.bot, "Ada");
    assert_eq!(acme.secret_env, "ACME_CHANNEL_SECRET");
    assert!(!acme.filter.require_mention && acme.filter.allow_group && !acme.filter.allow_dm);
    assert!(acme.enabled);
    let ops = &c.channels["ops"];
    assert!(
        ops.filter.require_mention,
        "mention is required in groups by default"
    );
    assert!(!ops.enabled);
    assert!(parse("").unwrap().channels.is_empty());
}

#[test]
fn channel_table_errors_name_the_account_and_field() {
    let base = "[channels.acme]\nkind = \"webhook\"\nbot = \"Ada\"\nsecret_env = \"S\"\noutbound_url = \"http://h/out\"\n";
    assert!(parse(base).is_ok());
    let e = err(&base.replace("webhook", "feishu"));
    assert!(e.contains("[channels.acme] kind:"), "{e}");
    let e = err(&base.replace("http://h/out", "h/out"));
    assert!(e.contains("[channels.acme] outbound_url:"), "{e}");
    let e = err(&base.replace("\"S\"", "\"NOT-A-VAR\""));
    assert!(e.contains("[channels.acme] secret_env:"), "{e}");
    let e = err(&base.replace("[channels.acme]", "[channels.\"Acme Co\"]"));
    assert!(e.contains("[channels.Acme Co] name:"), "{e}");
    let e = err(&format!("{base}secret = \"x\"\n"));
    assert!(e.contains("secret"), "{e}");
    let e = err("[channels.acme]\nkind = \"webhook\"\n");
    assert!(e.contains("bot"), "{e}");
}
