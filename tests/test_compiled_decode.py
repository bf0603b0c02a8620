"""Decode steps replayed through compiled graphs (`DecoderLM.compile_decode`) give the tokens
and log-probabilities of the same steps built operation by operation, for every block kind:
LLaMA (pre-norm), Phi-2 (parallel), Phi-3 (LongRoPE, fused qkv and gate/up), Gemma 2 (sandwich
norms, soft-caps, sliding window)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.builders.models import LlamaShape, write_llama
from tests.builders.phi_gemma import GEMMA2, PHI2, Phi3Shape, write_gemma2, write_phi2, write_phi3
from tests.builders.vocab import spm_vocab
from tests.helpers import NEAR_TIE, Traced, assert_same_runs, engine_for, run_traced
from vexel_core.engine import GenerationRequest
from vexel_core.model.decoder import DecoderLM
from vexel_core.sampling.params import SamplingParams

TRACED = SamplingParams(temperature=0.0, logprobs=5)

WRITERS = {
    "llama": lambda p: write_llama(p, spm_vocab(), LlamaShape(hidden=64, layers=2, heads=4,
                                                                 kv_heads=2, ffn=128), seed=5),
    "phi2": lambda p: write_phi2(p, PHI2, seed=6),
    # a context past the original one: the long rotary factors are the ones traced
    "phi3": lambda p: write_phi3(p, Phi3Shape(sliding_window=8), seed=7),
    "gemma2": lambda p: write_gemma2(p, GEMMA2, seed=8),
}


def requests(n: int) -> list[GenerationRequest]:
    """Prompts of different lengths and lengths of output, so that the decode steps' row
    count changes (each count traces anew) and sequences leave the batch mid-way."""
    rng = np.random.default_rng(11)
    return [GenerationRequest(f"r{i}", [1] + [int(t) for t in rng.integers(260, 400, 5 + 7 * i)],
                              TRACED, max_tokens=6 + 3 * i, ignore_eos=True) for i in range(n)]


@pytest.mark.parametrize("arch", list(WRITERS))
def test_compiled_decode_equals_eager(arch: str, host, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = WRITERS[arch](tmp_path / f"{arch}.gguf")
    replays: list[int] = []
    real = DecoderLM._decode_compiled

    def counting(self, tokens, batch):  # type: ignore[no-untyped-def]
        replays.append(tokens.shape[0])
        return real(self, tokens, batch)

    monkeypatch.setattr(DecoderLM, "_decode_compiled", counting)
    runs: dict[int, Traced] = {}
    for rows in (0, 4):
        engine = engine_for(path, host, max_batch_size=4, compiled_decode_rows=rows,
                            context_len=512)
        runs[rows] = run_traced(engine, requests(4))
        assert engine.blocks.num_free == engine.blocks.num_blocks
        assert bool(replays) == (rows > 0)
    assert {1, 2, 3, 4} <= set(replays)  # every row count was replayed

    assert_same_as_eager(runs[4], runs[0], engine.model.dtype)


def test_a_step_traces_once_per_row_count_and_table_width(host, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                          monkeypatch) -> None:
    # One request whose context grows from 7 to 70 tokens in blocks of 16: it needs 1 to 5
    # blocks, which `table_width` rounds to tables 1, 2, 4 and 8 blocks wide. One trace each,
    # in that order (not one per block, nor one per step), and the eager run's tokens and
    # log-probabilities, the tables' padding (block 0, past every context) never read.
    path = WRITERS["llama"](tmp_path / "llama.gguf")
    traces: list[tuple[int, int]] = []
    real = DecoderLM._compiled_step

    def counting(self, batch):  # type: ignore[no-untyped-def]
        traces.append((batch.num_seqs, batch.block_tables.shape[1]))
        return real(self, batch)

    monkeypatch.setattr(DecoderLM, "_compiled_step", counting)
    request = GenerationRequest("long", [1, *range(260, 265)], TRACED, max_tokens=64,
                                ignore_eos=True)
    runs: dict[int, Traced] = {}
    for rows in (0, 1):
        engine = engine_for(path, host, compiled_decode_rows=rows, context_len=512,
                            kv_block_size=16)
        runs[rows] = run_traced(engine, [request])
    assert traces == [(1, 1), (1, 2), (1, 4), (1, 8)]
    assert_same_as_eager(runs[1], runs[0], engine.model.dtype)


def assert_same_as_eager(compiled: Traced, eager_runs: Traced, dtype) -> None:  # type: ignore[no-untyped-def]
    """The compiled run's tokens and log-probabilities are the eager run's.

    Compiling fuses elementwise operations but keeps each one's dtype: in float32 (the CPU)
    the same tokens and log-probabilities within float32 rounding of logits of magnitude ~10
    (1e-4; the eager run against itself differs by 0). In bfloat16 (GPUs) a fused kernel's
    tanh or exp may round a value one unit differently, which the following layers carry on:
    on the H200, Gemma 2's log-probabilities moved by up to 0.07 (llama, Phi: under 1e-4),
    within `NEAR_TIE`'s two units of a bfloat16 logit; a sequence may then part at a tie."""
    tie = NEAR_TIE[dtype]
    assert_same_runs(compiled, eager_runs, dtype)
    for rid, eager in eager_runs.items():
        for (tc, top_c), (te, top_e) in zip(compiled[rid], eager, strict=True):
            if tc != te:
                break  # parted at a near-tie (checked above): the rest legitimately differs
            common = top_c.keys() & top_e.keys()
            assert max(abs(top_c[t] - top_e[t]) for t in common) <= tie, (rid, top_c, top_e)


def test_a_block_without_halves_is_refused_by_name() -> None:
    import mlx.core as mx
    import mlx.nn as nn

    with pytest.raises(TypeError, match=r"block 0 is a Linear: expected a .*Block"):
        DecoderLM(embed=None, blocks=[nn.Linear(2, 2)], norm=None, head=None,  # type: ignore[arg-type]
                  kv_spec=None, vocab_size=1, dtype=mx.float32)  # type: ignore[arg-type]
