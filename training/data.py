"""Token streams: documents joined by EOS, cut into training batches and held-out windows."""

from __future__ import annotations

from collections.abc import Sequence

import mlx.core as mx
import numpy as np

from vexel_core.errors import VexelError


def join_documents(docs: Sequence[Sequence[int]], eos_id: int) -> np.ndarray:
    """One int32 stream: each document followed by EOS (so a model learns where files end)."""
    parts = []
    for doc in docs:
        parts.append(np.asarray(doc, dtype=np.int32))
        parts.append(np.asarray([eos_id], dtype=np.int32))
    return np.concatenate(parts) if parts else np.zeros(0, np.int32)


class BatchSampler:
    """Random windows of ``seq_len + 1`` tokens from a stream held on the device.

    Offsets come from a numpy generator seeded once, so a seed fixes the whole sequence of
    batches on every machine.
    """

    def __init__(self, stream: np.ndarray, seq_len: int, batch_size: int, seed: int) -> None:
        if len(stream) < seq_len + 2:
            raise VexelError(
                f"the training stream has {len(stream)} tokens; seq_len {seq_len} needs more"
            )
        self.tokens = mx.array(stream)
        self.seq_len, self.batch_size = seq_len, batch_size
        self.rng = np.random.default_rng(seed)
        self.window = mx.arange(seq_len + 1)

    def next(self) -> tuple[mx.array, mx.array]:
        high = self.tokens.size - self.seq_len - 1
        offsets = mx.array(self.rng.integers(0, high + 1, size=self.batch_size, dtype=np.int64))
        rows = self.tokens[offsets[:, None].astype(mx.int32) + self.window]
        return rows[:, :-1], rows[:, 1:]


def heldout_windows(stream: np.ndarray, seq_len: int, max_windows: int) -> np.ndarray:
    """Consecutive, non-overlapping ``[n, seq_len + 1]`` windows from the start of *stream*.

    Spread over the stream (evenly spaced) when it holds more than *max_windows*, so the
    sample covers many held-out files rather than the first few.
    """
    n = len(stream) // (seq_len + 1)
    if n == 0:
        raise VexelError(
            f"the held-out stream has {len(stream)} tokens; a window needs {seq_len + 1}"
        )
    windows = stream[: n * (seq_len + 1)].reshape(n, seq_len + 1)
    if n > max_windows:
        windows = windows[np.linspace(0, n - 1, max_windows).round().astype(int)]
    return windows
