"""What the engine counts, ready for the server to export and for `vexel bench` to report.

Plain numbers and observation callbacks: the engine knows nothing of Prometheus. A listener
(the server's exporter, the benchmark) subscribes with `EngineStats.subscribe`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vexel_core.engine.scheduler import Schedule

Listener = Callable[[str, float], None]
"""Called with (event, value): ``ttft`` / ``itl`` / ``e2e`` seconds, ``finish:<reason>`` 1."""


@dataclass
class StepRecord:
    """One engine step, for finding where a run's time goes (``vexel bench --trace-steps``).

    ``launch_s`` is host time spent building and starting the step's graph; ``submit_s`` is
    the part of it spent in ``mx.async_eval``, which encodes the graph (on a GPU: compiling
    kernels and building attention plans met for the first time) and blocks while the device
    has too much work queued (MLX on CUDA: more than 10 submitted kernel graphs). ``wait_s``
    is time spent bringing the previous step's samples to the host (waiting for the device,
    then detokenizing and checking stops).
    """

    start_s: float  # time.perf_counter() at the step's start
    launch_s: float
    submit_s: float
    wait_s: float
    pipelined: bool  # launched while the step before was still running
    decodes: int  # sequences computing one token
    prefill_tokens: int  # tokens of sequences computing more than one
    prefill_chunks: list[tuple[int, int]]  # (tokens, context length) of each of those


class StepClock:
    """Times the parts of one engine step for its `StepRecord`."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.launch_s = self.submit_s = self.wait_s = 0.0
        self.pipelined = False

    def launching(self, *, pipelined: bool = False) -> AbstractContextManager[None]:
        self.pipelined = pipelined
        return self._adding("launch_s")

    def submitting(self) -> AbstractContextManager[None]:
        return self._adding("submit_s")

    def waiting(self) -> AbstractContextManager[None]:
        return self._adding("wait_s")

    @contextmanager
    def _adding(self, part: str) -> Iterator[None]:
        t = time.perf_counter()
        yield
        setattr(self, part, getattr(self, part) + time.perf_counter() - t)

    def record(self, schedule: Schedule) -> StepRecord:
        chunks = [(s.num_tokens, s.start + s.num_tokens) for s in schedule.seqs
                  if s.num_tokens > 1]
        return StepRecord(self.start, self.launch_s, self.submit_s, self.wait_s, self.pipelined,
                          decodes=len(schedule.seqs) - len(chunks),
                          prefill_tokens=sum(n for n, _ in chunks), prefill_chunks=chunks)


@dataclass
class EngineStats:
    running: int = 0
    waiting: int = 0
    kv_blocks_total: int = 0
    kv_blocks_used: int = 0
    kv_blocks_peak: int = 0
    preemptions: int = 0
    prefix_queries: int = 0
    prefix_hits: int = 0
    prompt_tokens: int = 0  # computed prompt tokens (cache hits excluded)
    generation_tokens: int = 0
    steps: int = 0
    step_records: list[StepRecord] | None = None  # recorded when a list is set here
    listeners: list[Listener] = field(default_factory=list, repr=False)

    @property
    def kv_usage(self) -> float:
        return self.kv_blocks_used / self.kv_blocks_total if self.kv_blocks_total else 0.0

    def reset_counters(self) -> None:
        """Zero what accumulates (the gauges stay live), so that what follows is counted
        alone: real requests after a warm-up, a benchmark's workload."""
        self.kv_blocks_peak = self.kv_blocks_used
        self.preemptions = self.prefix_queries = self.prefix_hits = 0
        self.prompt_tokens = self.generation_tokens = self.steps = 0

    def subscribe(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def observe(self, event: str, value: float = 1.0) -> None:
        for listener in self.listeners:
            listener(event, value)
