"""The engine keeps MLX's memory near what it holds (`vexel_core.memory`): on a GPU a prompt
step's activations no longer all stay alive until the GPU reaches them, and MLX's own limit
comes back when the engine stops."""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest

from tests.builders.models import LlamaShape, write_llama
from tests.builders.vocab import spm_vocab
from tests.helpers import engine_for, run_traced
from vexel_core.engine import GenerationRequest
from vexel_core.gguf.description import ModelDescription
from vexel_core.gguf.reader import GGUFFile
from vexel_core.memory import device_memory_bytes, step_working_set
from vexel_core.sampling.params import SamplingParams

# Wide enough that a step of 8192 prompt tokens computes ~300 MB a layer in float32, eight
# layers: left alone, MLX keeps ~2.5 GB of activations for the one CUDA graph of the step
WIDE = LlamaShape(hidden=512, layers=8, heads=8, kv_heads=4, ffn=2048, context=1024)
PROMPTS, PROMPT_LEN = 16, 512


def prompts(n: int = PROMPTS, length: int = PROMPT_LEN) -> list[GenerationRequest]:
    rng = np.random.default_rng()
    return [GenerationRequest(f"p{i}", [int(t) for t in rng.integers(260, 580, length)],
                              SamplingParams(temperature=0.0, logprobs=3), max_tokens=3,
                              ignore_eos=True)
            for i in range(n)]


def test_a_step_paced_layer_by_layer_computes_the_same(host, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Under a limit of one byte every layer's output is computed before the next is built
    # (`keep_within_memory_limit`): the tokens and log-probs must not move at all.
    path = write_llama(tmp_path / "m.gguf", spm_vocab(), LlamaShape(layers=3), seed=3)
    work = prompts(4, 40)
    free = run_traced(engine_for(path, host, max_batch_size=4), work)
    before = mx.set_memory_limit(1)
    try:
        paced = run_traced(engine_for(path, host, max_batch_size=4), work)
    finally:
        mx.set_memory_limit(before)
    assert paced == free


def test_the_cpu_keeps_mlx_memory_limit(host, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    if mx.default_device() != mx.cpu:
        pytest.skip("the CPU's behaviour")
    before = mx.get_memory_limit()
    engine = engine_for(write_llama(tmp_path / "m.gguf", spm_vocab(), seed=1), host)
    assert engine.memory_limit is None and mx.get_memory_limit() == before


@pytest.mark.gpu
def test_a_prompt_step_stays_within_the_engines_memory_bound(host, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_llama(tmp_path / "wide.gguf", spm_vocab(), WIDE, seed=2)
    engine = engine_for(path, host, max_batch_size=PROMPTS,
                        max_batched_tokens=PROMPTS * PROMPT_LEN, prefill_chunk=PROMPT_LEN,
                        context_len=WIDE.context, kv_cache_memory="256MiB")
    limit = engine.memory_limit
    assert limit is not None and limit < device_memory_bytes()
    assert mx.get_memory_limit() == limit
    mx.reset_peak_memory()
    for r in prompts():
        engine.add_request(r)
    while engine.has_work():
        engine.step()
    assert engine.blocks.num_free == engine.blocks.num_blocks
    # Past the limit the model computes each layer's output before building the next, so the
    # peak passes the limit by at most one layer's activations (half of `step_working_set`'s
    # two, no logits). Without that pacing this step peaked at limit + 0.78 GB (session 42;
    # one layer: ~0.32 GB).
    one_layer = step_working_set(ModelDescription.from_gguf(GGUFFile(path)),
                                 PROMPTS * PROMPT_LEN, 0) // 2
    assert mx.get_peak_memory() <= limit + one_layer
    engine.close()
    assert mx.get_memory_limit() == device_memory_bytes()
