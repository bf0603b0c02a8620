"""Continuous batching: which sequences run in the next step, and with how many tokens.

Each step first serves every running sequence (decodes cost one token; unfinished prompts a
chunk), then admits waiting sequences first come, first served, while the token budget
(``max_batched_tokens``), the sequence cap (``max_batch_size``) and the KV pool allow. When
the pool runs dry the most recently admitted sequence is preempted: its blocks are freed and
it returns to the head of the queue, to be recomputed later (its full blocks usually come
back from the prefix cache). A lone sequence always fits, because requests that could not
fit in the whole pool are refused when they arrive; so nothing deadlocks, and FCFS admission
means nothing starves.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from vexel_core.engine.request import SeqStatus, Sequence
from vexel_core.kvcache.blocks import BlockManager, OutOfBlocks


@dataclass
class ScheduledSeq:
    seq: Sequence
    start: int  # first token position computed this step
    num_tokens: int
    ahead: bool = False  # its input is the token the step before sampled, not yet on the host

    @property
    def samples(self) -> bool:
        """Whether this step reaches the sequence's last token (so it samples the next)."""
        return self.ahead or self.start + self.num_tokens == self.seq.num_tokens


@dataclass
class Schedule:
    seqs: list[ScheduledSeq] = field(default_factory=list)
    copies: list[tuple[int, int]] = field(default_factory=list)  # copy-on-write block pairs
    preempted: list[Sequence] = field(default_factory=list)

    @property
    def num_tokens(self) -> int:
        return sum(s.num_tokens for s in self.seqs)


class Scheduler:
    def __init__(
        self,
        blocks: BlockManager,
        *,
        max_batch_size: int,
        max_batched_tokens: int,
        prefill_chunk: int,
    ) -> None:
        self.blocks = blocks
        self.max_batch_size = max_batch_size
        self.max_batched_tokens = max_batched_tokens
        self.prefill_chunk = prefill_chunk
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []  # in admission order
        self.num_preemptions = 0
        self._admissions = 0

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self) -> Schedule:
        out = Schedule()
        budget = self.max_batched_tokens
        for seq in list(self.running):
            if seq.status is not SeqStatus.RUNNING or budget == 0:
                continue  # preempted earlier in this loop, or no budget left
            n = self.chunk(seq, budget)
            if not self._allocate_or_preempt(seq, n, out):
                continue
            out.seqs.append(ScheduledSeq(seq, seq.num_computed, n))
            budget -= n
        if out.preempted:  # the pool is under pressure: admit nobody this step
            return out
        self.admit(out, budget)
        return out

    def admit(self, out: Schedule, budget: int) -> None:
        """Admit waiting sequences into *out*, first come first served, while *budget* tokens,
        the sequence cap and the pool allow (no preemption for an admission)."""
        while self.waiting and budget > 0:
            seq = self.waiting[0]
            if self.seats_taken() + 1 + seq.unforked > self.max_batch_size:
                break
            if not seq.table.blocks:
                seq.table = self.blocks.match_prefix(seq.token_ids())
                seq.num_computed = seq.table.num_tokens
                seq.num_cached_tokens = max(seq.num_cached_tokens, seq.num_computed)
            n = self.chunk(seq, budget)
            try:
                out.copies += self.blocks.allocate(seq.table, n)
            except OutOfBlocks:
                self.blocks.free(seq.table)  # give back the prefix blocks while it waits
                seq.num_computed = 0
                break
            self.waiting.popleft()
            seq.status = SeqStatus.RUNNING
            seq.admitted_order = self._admissions
            self._admissions += 1
            self.running.append(seq)
            out.seqs.append(ScheduledSeq(seq, seq.num_computed, n))
            budget -= n

    def seats_taken(self) -> int:
        """Sequences running, and the siblings their ``n > 1`` requests will fork."""
        return len(self.running) + sum(seq.unforked for seq in self.running)

    def chunk(self, seq: Sequence, budget: int) -> int:
        """Tokens *seq* computes next: the rest of its prompt up to a chunk, else one."""
        remaining = seq.num_tokens - seq.num_computed
        return min(remaining, budget, max(1, self.prefill_chunk) if remaining > 1 else 1)

    def _allocate_or_preempt(self, seq: Sequence, n: int, out: Schedule) -> bool:
        while True:
            try:
                out.copies += self.blocks.allocate(seq.table, n)
                return True
            except OutOfBlocks:
                victim = max(self.running, key=lambda s: s.admitted_order)
                given_back = set(victim.table.blocks)
                self.preempt(victim)
                out.preempted.append(victim)
                out.seqs = [s for s in out.seqs if s.seq is not victim]
                # its copy-on-write copies, if it was scheduled already, write blocks it no
                # longer holds
                out.copies = [c for c in out.copies if c[1] not in given_back]
                if victim is seq:
                    return False

    def preempt(self, seq: Sequence) -> None:
        """Free *seq*'s blocks and put it back at the head of the queue (recompute later)."""
        self.blocks.free(seq.table)
        seq.num_computed = 0
        seq.status = SeqStatus.WAITING
        self.running.remove(seq)
        self.waiting.appendleft(seq)
        self.num_preemptions += 1

    def finish(self, seq: Sequence) -> None:
        """Remove a finished or aborted sequence and free its blocks at once."""
        self.blocks.free(seq.table)
        seq.status = SeqStatus.FINISHED
        if seq in self.running:
            self.running.remove(seq)
        elif seq in self.waiting:
            self.waiting.remove(seq)

    def fork(self, parent: Sequence, index: int) -> Sequence:
        """A sibling sharing the parent's blocks (``n > 1``), running right away in a seat
        kept for it since the parent's admission."""
        parent.unforked -= 1
        child = Sequence(parent.request, index, list(parent.output_ids),
                         self.blocks.fork(parent.table), parent.num_computed,
                         SeqStatus.RUNNING, admitted_order=self._admissions,
                         num_cached_tokens=parent.num_cached_tokens)
        self._admissions += 1
        self.running.append(child)
        return child
