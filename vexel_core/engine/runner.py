"""The model runner: turns a `Schedule` into one batched forward pass.

It flattens the scheduled tokens of every sequence into ``tokens[T]``, builds the step's
`AttentionBatch` (positions, cache slots, block tables, which rows need logits), performs
pending copy-on-write block copies, and returns the logits of the rows that sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import mlx.core as mx

from vexel_core.attention.base import AttentionBackend, AttentionBatch, table_width
from vexel_core.engine.scheduler import Schedule
from vexel_core.gpu import on_cuda
from vexel_core.kvcache.blocks import BlockManager
from vexel_core.kvcache.pool import KVPool
from vexel_core.model.architecture import CausalLM


@dataclass
class StepResult:
    logits: mx.array  # [R, V] float32, one row per sampling sequence (not evaluated yet)
    rows: list[int]  # index into schedule.seqs for each logits row


class StepArrays(NamedTuple):
    positions: mx.array  # [T]
    slots: mx.array  # [T]
    context_lens: mx.array | None  # [B]; None: the attention's step plan makes its own
    tables: mx.array  # [B, width]


def step_arrays(positions: list[int], slots: list[int], context_lens: list[int],
                tables: list[int], width: int) -> StepArrays:
    """A step's int32 arrays (*tables* flat, *width* blocks a sequence) as views of one
    host-made array. On CUDA, MLX keeps an array made on the host in managed memory, whose
    first reader on the GPU takes a page fault; made separately, one request's positions,
    slots and lengths were three 4-byte arrays, which MLX places in a pool of tiny buffers
    that the kernels' own tiny outputs share: the first attention launch of every step took up
    to 383 us (median 14.1, mean 18.1; session 19). One array of at least 16 bytes is one
    buffer of its own: the paged decode's mean fell to 11.7 us (max 68), and the step's one
    fault (~100 us) is paid by the array's first reader, layer 0's rope (session 20)."""
    return _views(_host_array(positions, slots, context_lens, tables), len(positions),
                  len(context_lens), width)


def _host_array(positions: list[int], slots: list[int], context_lens: list[int],
                tables: list[int]) -> mx.array:
    return mx.array(positions + slots + context_lens + tables, dtype=mx.int32)


def _views(step: mx.array, T: int, B: int, width: int) -> StepArrays:
    return StepArrays(step[:T], step[T:2 * T], step[2 * T:2 * T + B],
                      step[2 * T + B:].reshape(B, width))


class _Step(NamedTuple):
    layout: tuple[int, int, int]  # T, B, width
    positions: list[int]
    slots: list[int]
    context_lens: list[int]
    tables: list[int]
    array: mx.array


class StepArrayMaker:
    """A step's arrays, as `step_arrays` makes them, or (*on_device*) made on the device where
    they can be: when every sequence decodes one token, and each one's next token is the slot
    after its last one in the same blocks, the step's array is the last step's plus a constant
    (one add on the GPU). The host-made array costs its first reader on the GPU a page fault
    on CUDA, ~100 us a step (session 20; one request's step 2.329 ms against 2.232 made here,
    H200, session 31); a sequence entering a new block changes its table and takes the host's
    array again, one step in 16 at one request. The values are the host's either way: the
    last array's plus one."""

    def __init__(self, on_device: bool) -> None:
        self.on_device = on_device
        self.advanced = 0  # steps whose array the device made (tests, benchmarks)
        self._last: _Step | None = None
        self._steps: dict[tuple[int, int, int], mx.array] = {}

    def __call__(self, positions: list[int], slots: list[int], context_lens: list[int],
                 tables: list[int], width: int) -> StepArrays:
        layout = (len(positions), len(context_lens), width)
        step = self._advanced(layout, positions, slots, context_lens, tables)
        if step is None:
            step = _host_array(positions, slots, context_lens, tables)
        else:
            self.advanced += 1
        self._last = _Step(layout, positions, slots, context_lens, tables, step)
        return _views(step, *layout)

    def _advanced(self, layout: tuple[int, int, int], positions: list[int], slots: list[int],
                  context_lens: list[int], tables: list[int]) -> mx.array | None:
        last = self._last
        if (not self.on_device or last is None or last.layout != layout
                or layout[0] != layout[1] or last.tables != tables
                or positions != [p + 1 for p in last.positions]
                or slots != [s + 1 for s in last.slots]
                or context_lens != [n + 1 for n in last.context_lens]):
            return None
        return last.array + self._step(layout)

    def _step(self, layout: tuple[int, int, int]) -> mx.array:
        """One more for every position, slot and length, none for the tables (made once)."""
        if layout not in self._steps:
            T, B, width = layout
            self._steps[layout] = mx.array([1] * (2 * T + B) + [0] * (B * width), mx.int32)
            mx.eval(self._steps[layout])
        return self._steps[layout]


class ModelRunner:
    def __init__(self, model: CausalLM, pool: KVPool, blocks: BlockManager,
                 backend: AttentionBackend) -> None:
        self.model = model
        self.pool = pool
        self.blocks = blocks
        self.backend = backend
        self.step_arrays = StepArrayMaker(on_device=on_cuda())

    def build_batch(
        self, schedule: Schedule, device_tokens: mx.array | None = None
    ) -> tuple[mx.array, AttentionBatch, list[int]]:
        """The flat batch. *device_tokens* are the inputs of the sequences scheduled
        ``ahead`` (which come first): sampled by the previous step, still on the device."""
        tokens: list[int] = []
        positions: list[int] = []
        slots: list[int] = []
        query_lens, context_lens, logits_rows, sampled = [], [], [], []
        total = 0
        for i, s in enumerate(schedule.seqs):
            if not s.ahead:
                tokens += s.seq.tokens(s.start, s.num_tokens)
            positions += range(s.start, s.start + s.num_tokens)
            slots += self.blocks.slots(s.seq.table, s.start, s.num_tokens)
            query_lens.append(s.num_tokens)
            context_lens.append(s.start + s.num_tokens)
            total += s.num_tokens
            if s.samples:
                logits_rows.append(total - 1)
                sampled.append(i)
        width = table_width(max(len(s.seq.table.blocks) for s in schedule.seqs))
        tables = [b for s in schedule.seqs
                  for b in s.seq.table.blocks + [0] * (width - len(s.seq.table.blocks))]
        arrays = self.step_arrays(positions, slots, context_lens, tables, width)
        batch = AttentionBatch(
            pool=self.pool,
            backend=self.backend,
            positions=arrays.positions,
            slot_mapping=arrays.slots,
            block_tables=arrays.tables,
            query_lens=query_lens,
            context_lens=context_lens,
            context_array=arrays.context_lens,
            # every row samples when each sequence computes one token: no gather, and one
            # host-made array fewer (its first GPU reader pays a page fault on CUDA)
            logits_rows=(None if len(logits_rows) == total
                         else mx.array(logits_rows, dtype=mx.int32)),
        )
        if device_tokens is None:
            ids = mx.array(tokens, dtype=mx.int32)
        elif tokens:
            ids = mx.concatenate([device_tokens, mx.array(tokens, dtype=device_tokens.dtype)])
        else:
            ids = device_tokens
        return ids, batch, sampled

    def launch(self, schedule: Schedule, device_tokens: mx.array | None = None) -> StepResult:
        """Build the step's graph (block copies, forward pass); nothing is evaluated yet."""
        self.pool.copy_blocks(schedule.copies)
        tokens, batch, sampled = self.build_batch(schedule, device_tokens)
        return StepResult(self.model(tokens, batch), sampled)
