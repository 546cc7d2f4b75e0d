//! Troupe's MCP test server: a real MCP server (on the official SDK's server side) whose tools
//! behave in known ways, for the MCP client's tests. Each test starts its own process.
//!
//! Usage: `mcp_test_server` speaks MCP over stdio; `mcp_test_server --http ADDR` serves
//! streamable HTTP at `/mcp` on ADDR (port 0 picks a free port) and prints
//! `listening on http://ADDR/mcp` once bound.
//!
//! Environment: `MCP_TEST_NOTES` (file `write_note` appends to), `MCP_TEST_EVENTS` (file `slow`
//! records `started slow` and `cancelled <id>` in), `MCP_TEST_MANY_TOOLS=N` (extra tools
//! `t0..`), `MCP_TEST_STDERR=text` (written to stderr at start), `MCP_TEST_FAIL_START=1`
//! (fail before speaking MCP, exit code 2).

mod catalog;
mod handler;

use std::{
    io::Write,
    net::SocketAddr,
    process::ExitCode,
    sync::{Arc, atomic::AtomicBool},
};

use rmcp::{
    ServiceExt,
    transport::{
        stdio,
        streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        },
    },
};

use crate::handler::{Shared, TestServer};

enum Mode {
    Stdio,
    Http(SocketAddr),
}

#[tokio::main]
async fn main() -> ExitCode {
    if let Some(text) = std::env::var_os("MCP_TEST_STDERR") {
        eprintln!("{}", text.to_string_lossy());
    }
    if std::env::var_os("MCP_TEST_FAIL_START").is_some_and(|value| value == "1") {
        eprintln!("cannot start: told to fail");
        return ExitCode::from(2);
    }
    let (mode, many) = match parse_mode().and_then(|mode| Ok((mode, many_tools()?))) {
        Ok(setup) => setup,
        Err(message) => {
            eprintln!("mcp_test_server: {message}");
            return ExitCode::from(2);
        }
    };
    let shared = Arc::new(Shared {
        many,
        unlocked: AtomicBool::new(false),
    });
    let outcome = match mode {
        Mode::Stdio => serve_stdio(shared).await,
        Mode::Http(addr) => serve_http(addr, shared).await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mcp_test_server: {message}");
            ExitCode::from(1)
        }
    }
}

fn parse_mode() -> Result<Mode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(Mode::Stdio),
        [flag, addr] if flag == "--http" => addr.parse().map(Mode::Http).map_err(|error| {
            format!("--http wants an address like 127.0.0.1:0, got {addr:?}: {error}")
        }),
        other => Err(format!(
            "unexpected arguments {other:?}; usage: mcp_test_server [--http ADDR]"
        )),
    }
}

fn many_tools() -> Result<usize, String> {
    match std::env::var("MCP_TEST_MANY_TOOLS") {
        Err(std::env::VarError::NotPresent) => Ok(0),
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| format!("MCP_TEST_MANY_TOOLS must be a count of tools, got {text:?}")),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err("MCP_TEST_MANY_TOOLS must be a count of tools, got non-UTF-8 text".into())
        }
    }
}

async fn serve_stdio(shared: Arc<Shared>) -> Result<(), String> {
    let running = TestServer::new(shared)
        .serve(stdio())
        .await
        .map_err(|error| format!("MCP start over stdio failed: {error}"))?;
    running
        .waiting()
        .await
        .map_err(|error| format!("the MCP service ended abnormally: {error}"))?;
    Ok(())
}

async fn serve_http(addr: SocketAddr, shared: Arc<Shared>) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    let bound = listener
        .local_addr()
        .map_err(|error| format!("cannot read the bound address: {error}"))?;
    // The SDK accepts only loopback Host headers by default; also accept the bound address.
    let config = StreamableHttpServerConfig::default().with_allowed_hosts([
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        bound.ip().to_string(),
    ]);
    let service = StreamableHttpService::new(
        move || Ok(TestServer::new(shared.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    // Tests wait for this line instead of polling the port.
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on http://{bound}/mcp")
        .and_then(|()| stdout.flush())
        .map_err(|error| format!("cannot announce the address on stdout: {error}"))?;
    axum::serve(listener, app)
        .await
        .map_err(|error| format!("the HTTP server stopped: {error}"))
}
