"""Where the host's time goes when it builds one decode step's graph (GPU machine).

    python benchmarks/host_build.py --preset llama3-8b --dtype q4_0

One request decodes; then each piece of layer 0 is built many times without evaluation
(microseconds of host time per call), the whole step's build is timed and profiled
(cProfile, by own time), and the time `mx.async_eval` takes to submit a built step.
The CPU is no guide to these figures: there MLX's fused rope and norms are built from
several operations each, on a GPU they are one primitive.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

import mlx.core as mx

from vexel_core.bench.random_model import write_random_model
from vexel_core.config import EngineSettings
from vexel_core.engine import GenerationRequest, LLMEngine, load_model
from vexel_core.plugins import load_plugins
from vexel_core.sampling.params import SamplingParams


def per_call_us(fn, n: int = 500) -> float:  # type: ignore[no-untyped-def]
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def decoding(path: Path, host, settings: EngineSettings, prompt: int, steps: int):  # type: ignore[no-untyped-def]
    """An engine on *path* whose one request (*prompt* tokens) has decoded for *steps* steps
    and waits for the next, settled (the scheduler sees every token), and that next step's
    schedule."""
    engine = LLMEngine(load_model(path, host), settings, host)
    engine.add_request(GenerationRequest("r", list(range(5, 5 + prompt)),
                                         SamplingParams(temperature=0.0), 400, ignore_eos=True))
    for _ in range(steps):
        engine.step()
    if engine._inflight is not None:
        engine._resolve(engine._inflight)
        engine._inflight = None
    return engine, engine.scheduler.schedule()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="llama3-8b")
    ap.add_argument("--dtype", default="q4_0")
    ap.add_argument("--cache", default="/tmp/vx")
    a = ap.parse_args()
    host = load_plugins()
    path = write_random_model(Path(a.cache) / f"random-{a.preset}-{a.dtype}.gguf", a.preset,
                              a.dtype)
    engine, sched = decoding(path, host, EngineSettings(max_batch_size=1, kv_cache_memory="1GiB"),
                             128, 8)
    runner, model = engine.runner, engine.model
    tokens, batch, _ = runner.build_batch(sched)
    blk = model.blocks[0]
    at, o = blk.attn, blk.attn.opts
    x = mx.random.normal((1, model.embed.weight.shape[1])).astype(model.dtype)
    q, k, v, _ = at.project(x, batch.positions)
    q = q.reshape(1, o.n_heads, o.head_dim)
    k = k.reshape(1, o.n_kv_heads, o.head_dim)
    v = v.reshape(1, o.n_kv_heads, o.head_dim)
    g = mx.random.normal((1, blk.mlp.down.shape[1])).astype(model.dtype)
    mx.eval(x, q, k, v, g)
    pieces = {
        "build_batch": lambda: runner.build_batch(sched),
        "attn_norm": lambda: blk.attn_norm(x),
        "qkv product, rope": lambda: at.project(x, batch.positions),
        "rope (q)": lambda: at.rope(q, batch.positions),
        "attention backend": lambda: batch.backend(q, k, v, layer=0, batch=batch,
                                                   scale=at.scale),
        "pool.write": lambda: batch.pool.write(0, batch.slot_mapping, k, v),
        "out product": lambda: at.out(x),
        "mlp": lambda: blk.mlp(x),
        "down product": lambda: blk.mlp.down(g),
        "x + x": lambda: x + x,
        "block": lambda: blk((x, None), batch),
    }
    for name, fn in pieces.items():
        print(f"{name:18s} {per_call_us(fn):8.1f} us")
    n = 30
    t = time.perf_counter()
    built = [runner.launch(sched).logits for _ in range(n)]
    print(f"{'whole step build':18s} {(time.perf_counter() - t) / n * 1e6:8.1f} us "
          f"({len(model.blocks)} layers)")
    mx.synchronize()
    t = time.perf_counter()
    for logits in built[:10]:
        mx.async_eval(logits)
    submit = (time.perf_counter() - t) / 10
    mx.synchronize()
    print(f"{'async_eval submit':18s} {submit * 1e6:8.1f} us per step")
    del built
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(20):
        runner.launch(sched)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
