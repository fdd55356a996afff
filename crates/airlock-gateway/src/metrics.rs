//! Prometheus text for `/metrics`: HTTP requests counted by route template (never the raw path,
//! so ids do not explode the label set), method and status, plus the broker's counters.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::state::AppState;

/// HTTP request counters.
#[derive(Debug, Default)]
pub struct HttpMetrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
}

impl HttpMetrics {
    pub fn record(&self, route: &str, method: &str, status: u16) {
        // A poisoned lock only means another request panicked mid-increment; counts stay usable.
        let mut m = self
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *m.entry((route.to_string(), method.to_string(), status))
            .or_insert(0) += 1;
    }

    pub fn render(&self, out: &mut String) {
        let m = self
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        out.push_str(
            "# HELP airlock_http_requests_total HTTP requests by route, method and status.\n",
        );
        out.push_str("# TYPE airlock_http_requests_total counter\n");
        for ((route, method, status), n) in m.iter() {
            let _ = writeln!(
                out,
                "airlock_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {n}",
                label(route),
                label(method)
            );
        }
    }
}

/// Escapes a Prometheus label value.
pub fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Counts each request under its route template (`unmatched` for paths no route matched).
pub async fn count(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = req.method().as_str().to_string();
    let resp = next.run(req).await;
    state
        .metrics
        .record(&route, &method, resp.status().as_u16());
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_with_escaped_labels() {
        let m = HttpMetrics::default();
        m.record("/v1/actions", "POST", 200);
        m.record("/v1/actions", "POST", 200);
        m.record("a\"b\\c\nd", "GET", 404);
        let mut out = String::new();
        m.render(&mut out);
        assert!(out.contains(
            "airlock_http_requests_total{route=\"/v1/actions\",method=\"POST\",status=\"200\"} 2\n"
        ));
        assert!(out.contains(r#"route="a\"b\\c\nd""#), "{out}");
    }
}
