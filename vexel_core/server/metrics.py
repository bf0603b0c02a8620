"""``/metrics``: the engine's counters in Prometheus' text format, with vLLM's names.

Totals and gauges (requests running and waiting, KV usage, token counts, prefix-cache
queries and hits, preemptions) are read from `EngineStats` at scrape time; latencies and
finished requests are observed as they happen through `EngineStats.subscribe`. Every
exporter owns its registry, so several servers can live in one process (tests do).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from vexel_core.engine import FinishReason
from vexel_core.engine.metrics import EngineStats

PREFIX = "vexel:"
CONTENT_TYPE = CONTENT_TYPE_LATEST

# Latency buckets in seconds, from a fast GPU step to a long CPU generation.
_TOKEN_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
                  2.5, 5.0, 7.5, 10.0)
_REQUEST_BUCKETS = (0.1, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0,
                    50.0, 60.0, 120.0, 240.0, 480.0)


class _StatsCollector(Collector):
    """Reads the engine's running totals at each scrape."""

    def __init__(self, stats: EngineStats, model: str) -> None:
        self.stats = stats
        self.model = model

    def collect(self) -> Iterator[Metric]:
        s = self.stats
        gauges = [
            ("num_requests_running", "Requests being generated now.", s.running),
            ("num_requests_waiting", "Requests queued, waiting to be scheduled.", s.waiting),
            ("kv_cache_usage_perc", "Fraction of KV-cache blocks in use (1 = full).",
             s.kv_usage),
        ]
        counters = [
            ("prompt_tokens", "Prompt tokens computed (prefix-cache hits excluded).",
             s.prompt_tokens),
            ("generation_tokens", "Tokens generated.", s.generation_tokens),
            ("prefix_cache_queries", "Prefix-cache lookups.", s.prefix_queries),
            ("prefix_cache_hits", "Prefix-cache lookups that found a cached block.",
             s.prefix_hits),
            ("num_preemptions", "Sequences preempted for lack of KV blocks.", s.preemptions),
        ]
        for name, text, value in gauges:
            g = GaugeMetricFamily(PREFIX + name, text, labels=["model_name"])
            g.add_metric([self.model], value)
            yield g
        for name, text, value in counters:
            c = CounterMetricFamily(PREFIX + name, text, labels=["model_name"])
            c.add_metric([self.model], value)
            yield c


class MetricsExporter:
    """The server's Prometheus registry; `attach` it to an engine once one is running."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.model = ""
        reg = self.registry
        self.ttft = Histogram(PREFIX + "time_to_first_token_seconds",
                              "Seconds from arrival to the first generated token.",
                              ["model_name"], buckets=_TOKEN_BUCKETS, registry=reg)
        self.itl = Histogram(PREFIX + "inter_token_latency_seconds",
                             "Seconds between two tokens of one sequence.",
                             ["model_name"], buckets=_TOKEN_BUCKETS, registry=reg)
        self.e2e = Histogram(PREFIX + "e2e_request_latency_seconds",
                             "Seconds from arrival to the last token of a sequence.",
                             ["model_name"], buckets=_REQUEST_BUCKETS, registry=reg)
        self.finished = Counter(PREFIX + "request_success",
                                "Finished sequences by reason (stop, length; abort counts a "
                                "cancelled request once).",
                                ["model_name", "finished_reason"], registry=reg)

    def attach(self, stats: EngineStats, model: str) -> None:
        self.model = model
        for histogram in (self.ttft, self.itl, self.e2e):  # every series shows from the start
            histogram.labels(model)
        for reason in FinishReason:
            self.finished.labels(model, reason.value)
        self.registry.register(_StatsCollector(stats, model))
        stats.subscribe(self._observe)

    def _observe(self, event: str, value: float) -> None:
        """An `EngineStats` listener; runs on the engine thread (prometheus_client is
        thread-safe)."""
        histogram = {"ttft": self.ttft, "itl": self.itl, "e2e": self.e2e}.get(event)
        if histogram is not None:
            histogram.labels(self.model).observe(value)
        elif event.startswith("finish:"):
            self.finished.labels(self.model, event.removeprefix("finish:")).inc(value)

    def render(self) -> bytes:
        return generate_latest(self.registry)
