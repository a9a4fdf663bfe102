//! The `/metrics` endpoint: a small blocking HTTP server (tiny_http) that answers Prometheus
//! in OpenMetrics when asked for it, and anyone else in the older text format.

use std::time::Duration;

use crate::metrics::Metrics;

/// Serves `/metrics` until `ended` says so (asked every 200 ms).
pub(crate) fn serve_metrics(http: &tiny_http::Server, metrics: &Metrics, ended: &dyn Fn() -> bool) {
    while !ended() {
        let Ok(Some(req)) = http.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        let response = match (req.method(), req.url()) {
            (tiny_http::Method::Get, "/metrics") => {
                // OpenMetrics to whoever asks for it (Prometheus does), else the older text.
                let open = req.headers().iter().any(|h| {
                    h.field.equiv("Accept")
                        && h.value.as_str().contains("application/openmetrics-text")
                });
                let (body, kind): (String, &[u8]) = if open {
                    (
                        metrics.encode(),
                        b"application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )
                } else {
                    (
                        metrics.encode_prometheus_text(),
                        b"text/plain; version=0.0.4; charset=utf-8",
                    )
                };
                let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], kind).ok();
                let mut r = tiny_http::Response::from_string(body);
                if let Some(h) = header {
                    r.add_header(h);
                }
                r
            }
            (tiny_http::Method::Get, "/") => {
                tiny_http::Response::from_string("linerate agent: metrics at /metrics\n")
            }
            _ => tiny_http::Response::from_string("not found\n").with_status_code(404),
        };
        let _ = req.respond(response);
    }
}
