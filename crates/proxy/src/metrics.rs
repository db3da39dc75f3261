//! Prometheus metrics for `/metrics`: requests, errors, overhead, time to first token, queues.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: &'static str,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamLabels {
    pub upstream: String,
    pub reason: &'static str,
}

pub struct Metrics {
    registry: Registry,
    pub requests: Family<RouteLabels, Counter>,
    pub upstream_failures: Family<UpstreamLabels, Counter>,
    pub fallbacks: Counter,
    pub stream_errors: Counter,
    pub overhead_seconds: Histogram,
    pub ttft_seconds: Histogram,
    /// Streams being relayed (whole replies are counted in `requests`).
    pub inflight: Gauge,
    pub sessions_open: Gauge,
    pub recorder_queue: Gauge,
    /// Remembered context blocks held in memory (bounded; the rest are in the store).
    pub sticky_blocks: Gauge,
    pub sticky_bytes: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("metaclaw");
        let requests = Family::<RouteLabels, Counter>::default();
        let upstream_failures = Family::<UpstreamLabels, Counter>::default();
        let fallbacks = Counter::default();
        let stream_errors = Counter::default();
        // 50 µs … ~400 ms: MetaClaw's own time is meant to stay well under a millisecond.
        let overhead_seconds = Histogram::new(
            prometheus_client::metrics::histogram::exponential_buckets(0.000_05, 2.0, 14),
        );
        let ttft_seconds = Histogram::new(
            prometheus_client::metrics::histogram::exponential_buckets(0.005, 2.0, 14),
        );
        let inflight = Gauge::default();
        let sessions_open = Gauge::default();
        let recorder_queue = Gauge::default();
        let sticky_blocks = Gauge::default();
        let sticky_bytes = Gauge::default();
        registry.register(
            "requests",
            "Agent API requests by route and status",
            requests.clone(),
        );
        registry.register(
            "upstream_failures",
            "Upstream attempts that failed, by upstream and reason",
            upstream_failures.clone(),
        );
        registry.register(
            "fallbacks",
            "Requests served by a fallback upstream",
            fallbacks.clone(),
        );
        registry.register(
            "stream_errors",
            "Streams that ended early (upstream died, timed out or client left)",
            stream_errors.clone(),
        );
        registry.register(
            "overhead_seconds",
            "Time spent inside MetaClaw per request, excluding the upstream",
            overhead_seconds.clone(),
        );
        registry.register(
            "ttft_seconds",
            "Time from request arrival to the first byte sent to the client",
            ttft_seconds.clone(),
        );
        registry.register(
            "open_streams",
            "Streaming replies being relayed",
            inflight.clone(),
        );
        registry.register("sessions_open", "Open sessions", sessions_open.clone());
        registry.register(
            "recorder_queue_depth",
            "Finished turns waiting to be written",
            recorder_queue.clone(),
        );
        registry.register(
            "sticky_blocks_in_memory",
            "Remembered context blocks held in memory",
            sticky_blocks.clone(),
        );
        registry.register(
            "sticky_bytes_in_memory",
            "Estimated bytes of remembered context blocks held in memory",
            sticky_bytes.clone(),
        );
        Metrics {
            registry,
            requests,
            upstream_failures,
            fallbacks,
            stream_errors,
            overhead_seconds,
            ttft_seconds,
            inflight,
            sessions_open,
            recorder_queue,
            sticky_blocks,
            sticky_bytes,
        }
    }

    pub fn request(&self, route: &'static str, status: u16) {
        self.requests
            .get_or_create(&RouteLabels { route, status })
            .inc();
    }

    pub fn upstream_failure(&self, upstream: &str, reason: &'static str) {
        self.upstream_failures
            .get_or_create(&UpstreamLabels {
                upstream: upstream.to_string(),
                reason,
            })
            .inc();
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}
