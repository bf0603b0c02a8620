"""The engine bounds MLX's memory at what it holds plus a step's working set while it runs
(`vexel_core.memory`), and gives MLX its limit back when it stops. What the bound does to a
real step's peak is measured by `vexel bench` (peak memory; notes/engine-gpu.md, session 42:
16 Q4_0 Llama-3-8B prompts of 512, 67.2 GiB before, 36.1 after, at the same speed)."""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import pytest

from tests.builders.models import LlamaShape, write_llama
from tests.builders.vocab import spm_vocab
from tests.helpers import engine_for
from vexel_core.config import EngineSettings
from vexel_core.engine import AsyncEngine, LLMEngine, load_model
from vexel_core.gguf.description import ModelDescription
from vexel_core.gguf.reader import GGUFFile
from vexel_core.memory import device_memory_bytes, step_working_set


def test_the_cpu_keeps_mlx_memory_limit(host, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    if mx.default_device() != mx.cpu:
        pytest.skip("the CPU's behaviour")
    before = mx.get_memory_limit()
    engine = engine_for(write_llama(tmp_path / "m.gguf", spm_vocab(), seed=1), host)
    assert engine.memory_limit is None and mx.get_memory_limit() == before


@pytest.mark.gpu
def test_an_engine_bounds_mlx_memory_while_it_runs(host, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_llama(tmp_path / "m.gguf", spm_vocab(), LlamaShape(layers=4), seed=3)
    settings = EngineSettings(kv_cache_memory="256MiB", max_batch_size=16,
                              max_batched_tokens=4096)
    work = step_working_set(ModelDescription.from_gguf(GGUFFile(path)), 4096, 16)
    engine = AsyncEngine(lambda: LLMEngine(load_model(path, host), settings, host))
    try:
        engine.wait_ready()
        limit = engine.engine.memory_limit
        assert limit is not None and limit == mx.get_memory_limit() < device_memory_bytes()
        # the weights and the pool below the bound, one step's working set above them
        assert limit - work >= engine.engine.pool.nbytes
    finally:
        engine.shutdown()
    assert mx.get_memory_limit() == device_memory_bytes()
