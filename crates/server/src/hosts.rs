//! Which requests a daemon answers at all: the `Host` must name this daemon, and a
//! state-changing request from a browser must come from the daemon's own page.
//!
//! Without this, a page on any site could reach a loopback daemon by resolving its own name to
//! 127.0.0.1 (DNS rebinding): the browser then treats the daemon as that site and sends its
//! requests, with the site's name in `Host`. A rebinding name is never the bound address or a
//! loopback name, so checking `Host` refuses it. `Origin` covers the other browser route, a form
//! or script on another site posting straight to `http://127.0.0.1:PORT`.

use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The names and port a daemon answers to. Built from the address actually bound (so a port 0
/// bind uses the port it got) and the names given with `--allowed-host`.
#[derive(Clone, Debug)]
pub struct HostRule {
    bound: SocketAddr,
    /// Lowercase names, without port.
    names: Vec<String>,
}

impl HostRule {
    /// `allowed` are extra names (`troupe.lan`, `192.168.1.20`, `[fe80::1]`), without scheme or
    /// port: the port is always the bound one.
    pub fn new(bound: SocketAddr, allowed: &[String]) -> Result<HostRule, String> {
        let names = allowed
            .iter()
            .map(|n| normalize_allowed_host(n))
            .collect::<Result<_, _>>()?;
        Ok(HostRule { bound, names })
    }

    /// Whether `authority` (`name[:port]`, as in `Host`) names this daemon.
    pub fn accepts(&self, authority: &str) -> bool {
        let Some((name, port)) = split_authority(authority) else {
            return false;
        };
        // Without a port a client means the scheme's default, 80 for plain HTTP.
        if port.unwrap_or(80) != self.bound.port() {
            return false;
        }
        let name = name.to_ascii_lowercase();
        if name == "localhost" || self.names.contains(&name) {
            return true;
        }
        let literal = name.trim_start_matches('[').trim_end_matches(']');
        match literal.parse::<IpAddr>() {
            Ok(ip) if ip.is_loopback() || ip == self.bound.ip() => true,
            // A bind on every interface is reached by each of the machine's addresses. An
            // address literal cannot be a rebinding name (the browser would send it to that
            // address, not here), so any is accepted; names still need --allowed-host.
            Ok(_) => self.bound.ip().is_unspecified(),
            Err(_) => false,
        }
    }

    /// The names a request may use, for the refusals' messages.
    fn names(&self) -> String {
        let bound = match self.bound.ip() {
            ip if ip.is_unspecified() => "any address of this machine".to_string(),
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        };
        let mut names: Vec<String> = vec![bound];
        for n in ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(String::from)
            .chain(self.names.iter().cloned())
        {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names.join(", ")
    }
}

/// An allowed host as `--allowed-host` or the config file gives it, lowercased; an error for
/// anything but a bare name or address (a scheme or port would never match `Host`'s form).
pub fn normalize_allowed_host(name: &str) -> Result<String, String> {
    let n = name.trim().to_ascii_lowercase();
    let plain = !n.contains("://") && (n.starts_with('[') || !n.contains(':'));
    if !plain || split_authority(&n).is_none_or(|(_, port)| port.is_some()) {
        return Err(format!(
            "allowed host '{name}' must be a bare name or address without scheme or port, \
             e.g. troupe.lan or 192.168.1.20 (the port is always the bound one)"
        ));
    }
    Ok(n)
}

/// `name[:port]` split; IPv6 literals keep their brackets. None when it is not an authority.
fn split_authority(s: &str) -> Option<(&str, Option<u16>)> {
    let (name, port) = if s.starts_with('[') {
        let end = s.find(']')?;
        let (name, rest) = s.split_at(end + 1);
        match rest {
            "" => (name, None),
            _ => (name, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match s.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (s, None),
        }
    };
    let valid_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._[]:".contains(c));
    if !valid_name || (!name.starts_with('[') && name.contains(':')) {
        return None;
    }
    match port {
        None => Some((name, None)),
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some((name, Some(p.parse().ok()?)))
        }
        Some(_) => None,
    }
}

fn state_changing(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers
        .get(name)
        .map(|v| v.to_str().unwrap_or("<not text>"))
}

/// Refuse a request whose `Host` does not name this daemon (421 `host_not_allowed`), and a
/// state-changing one whose `Origin` is another site (403 `cross_origin`). Requests without
/// `Origin` (curl, scripts) are not browsers' cross-site requests and pass.
pub async fn check_host_and_origin(
    State(rule): State<Arc<HostRule>>,
    req: Request,
    next: Next,
) -> Response {
    // HTTP/2 carries the authority in the URI instead of a Host header.
    let host = header_text(req.headers(), header::HOST)
        .or_else(|| req.uri().authority().map(|a| a.as_str()));
    if !host.is_some_and(|h| rule.accepts(h)) {
        let got = host.map_or("no Host header".to_string(), |h| format!("Host '{h}'"));
        return ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "host_not_allowed",
            format!(
                "{got} does not name this daemon; accepted: {} with port {} \
                 (add names with --allowed-host)",
                rule.names(),
                rule.bound.port()
            ),
        )
        .into_response();
    }
    if state_changing(req.method())
        && let Some(origin) = header_text(req.headers(), header::ORIGIN)
    {
        let own = origin
            .strip_prefix("http://")
            .is_some_and(|authority| rule.accepts(authority));
        if !own {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "cross_origin",
                format!(
                    "a {} from Origin '{origin}' is refused: only the daemon's own page may \
                     change anything, http://NAME:{} with NAME one of {}",
                    req.method(),
                    rule.bound.port(),
                    rule.names()
                ),
            )
            .into_response();
        }
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(bound: &str, allowed: &[&str]) -> HostRule {
        let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
        HostRule::new(bound.parse().unwrap(), &allowed).unwrap()
    }

    #[test]
    fn loopback_names_with_the_bound_port_are_accepted() {
        let r = rule("127.0.0.1:7878", &[]);
        for ok in [
            "127.0.0.1:7878",
            "localhost:7878",
            "LocalHost:7878",
            "[::1]:7878",
            "[0:0:0:0:0:0:0:1]:7878",
        ] {
            assert!(r.accepts(ok), "{ok}");
        }
        for bad in [
            "evil.example:7878",
            "127.0.0.1:7879",
            "127.0.0.1",
            "localhost",
            "localhost.evil.example:7878",
            "user@127.0.0.1:7878",
            "127.0.0.1:7878/x",
            "127.0.0.1:",
            "",
            "[::1",
            "::1:7878",
        ] {
            assert!(!r.accepts(bad), "{bad}");
        }
    }

    #[test]
    fn a_bare_name_means_port_80() {
        let r = rule("127.0.0.1:80", &[]);
        assert!(r.accepts("localhost"));
        assert!(r.accepts("127.0.0.1:80"));
        assert!(!r.accepts("evil.example"));
    }

    #[test]
    fn allowed_names_and_the_bound_address() {
        let r = rule("192.168.1.20:7878", &["Troupe.LAN", "[fe80::1]"]);
        assert!(r.accepts("192.168.1.20:7878"));
        assert!(r.accepts("troupe.lan:7878"));
        assert!(r.accepts("[fe80::1]:7878"));
        assert!(!r.accepts("troupe.lan:80"));
        assert!(!r.accepts("192.168.1.21:7878"));
        assert!(!r.accepts("other.lan:7878"));
        // Every interface: any address literal, but names only when allowed.
        let any = rule("0.0.0.0:7878", &[]);
        assert!(any.accepts("10.0.0.5:7878"));
        assert!(any.accepts("localhost:7878"));
        assert!(!any.accepts("rebound.example:7878"));
    }

    #[test]
    fn allowed_hosts_are_bare_names() {
        let bound: SocketAddr = "127.0.0.1:1".parse().unwrap();
        for bad in [
            "http://x.lan",
            "x.lan:8080",
            "",
            "x.lan/path",
            "fe80::1",
            "[fe80::1]:1",
        ] {
            assert!(HostRule::new(bound, &[bad.to_string()]).is_err(), "{bad}");
        }
    }
}
