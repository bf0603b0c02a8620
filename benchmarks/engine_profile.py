"""Where an engine step spends its time, at a real shape (GPU machine).

Times, each over many repetitions in one evaluation where possible: one decode step of the
whole engine at batch B, the model's matmuls alone (attention replaced by a no-op), the KV
writes, the KV gathers and the fused attention on gathered keys. Prints a table and JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import mlx.core as mx

from vexel_core.bench.random_model import write_random_model
from vexel_core.config import EngineSettings
from vexel_core.engine import GenerationRequest, LLMEngine, load_model
from vexel_core.plugins import load_plugins
from vexel_core.sampling.params import SamplingParams


def timed(fn, reps: int = 10) -> float:  # type: ignore[no-untyped-def]
    fn()
    mx.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    mx.synchronize()
    return (time.perf_counter() - t) / reps


def settle(engine: LLMEngine) -> None:
    """Finish the step in flight, so that the scheduler sees every pending token."""
    if engine._inflight is not None:
        engine._resolve(engine._inflight)
        engine._inflight = None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="llama3-8b")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--cache", default="/tmp/vx")
    ap.add_argument("--out", default=None)
    ap.add_argument("--backend", default="auto")
    a = ap.parse_args()
    host = load_plugins()
    name = f"random-{a.preset}-{a.dtype}.gguf"
    path = write_random_model(Path(a.cache) / name, a.preset, a.dtype)
    t = time.perf_counter()
    loaded = load_model(path, host)
    load_s = time.perf_counter() - t
    settings = EngineSettings(max_batch_size=a.batch, max_batched_tokens=8192,
                              kv_cache_memory="16GiB", attention_backend=a.backend)
    engine = LLMEngine(loaded, settings, host)
    for i in range(a.batch):
        prompt = [5 + (i + j) % 1000 for j in range(a.context)]
        engine.add_request(GenerationRequest(f"r{i}", prompt, SamplingParams(temperature=0.0),
                                             1000, ignore_eos=True))
    def prefilling() -> bool:
        return bool(engine.scheduler.waiting) or any(
            s.num_computed < s.num_tokens - 1 for s in engine.scheduler.running)

    t = time.perf_counter()
    first_step = None
    while prefilling():
        engine.step()
        first_step = first_step or time.perf_counter() - t
    prefill_s = time.perf_counter() - t
    res = {"load_s": load_s, "prefill_s": prefill_s, "first_prefill_step_s": first_step,
           "prefill_tok_per_s": a.batch * a.context / prefill_s}
    res["decode_step_s"] = timed(engine.step, 10)
    # Host time to build one decode step's graph (nothing evaluated), and the device time of
    # evaluating a built one: a step costs about the larger of the two once pipelined.
    settle(engine)
    sched = engine.scheduler.schedule()
    t = time.perf_counter()
    built = [engine.runner.launch(sched).logits for _ in range(10)]
    res["t_forward_build_s"] = (time.perf_counter() - t) / 10
    mx.eval(built[0])
    mx.synchronize()
    t = time.perf_counter()
    mx.eval(built[1:])
    mx.synchronize()
    res["t_forward_eval_s"] = (time.perf_counter() - t) / 9
    del built
    for s in sched.seqs:  # undo the allocation the probe schedule made
        engine.blocks.trim(s.seq.table, s.seq.num_computed)
    # Pieces, at the decode shape of layer 0, repeated for all layers.
    settle(engine)
    sched = engine.scheduler.schedule()
    tokens, batch, _ = engine.runner.build_batch(sched)
    res["t_build_batch_s"] = timed(lambda: engine.runner.build_batch(sched), 10)
    for s in sched.seqs:  # undo the allocation the probe schedule made
        engine.blocks.trim(s.seq.table, s.seq.num_computed)
    model = engine.model
    layers = len(model.blocks)
    spec = model.kv_spec
    B = a.batch
    q = mx.random.normal((B, 32, spec.head_dim)).astype(model.dtype)
    k = mx.random.normal((B, spec.n_kv_heads, spec.head_dim)).astype(model.dtype)
    plan = batch.plan()
    pool = engine.pool

    def writes() -> None:
        for layer in range(layers):
            pool.write(layer, batch.slot_mapping, k, k)
        mx.eval(pool.all_written())

    def gathers() -> None:
        outs = [pool.gather(layer, plan.decode_tables) for layer in range(layers)]
        mx.eval(outs)

    keys, values = pool.gather(0, plan.decode_tables)
    kt, vt = keys.swapaxes(1, 2), values.swapaxes(1, 2)
    L = keys.shape[1]
    mask = (mx.arange(L)[None, :] < plan.decode_ctx[:, None])[:, None, None, :]
    mx.eval(kt, vt, mask)

    def sdpa() -> None:
        outs = [mx.fast.scaled_dot_product_attention(q[:, :, None, :], kt, vt, scale=0.088,
                                                     mask=mask) for _ in range(layers)]
        mx.eval(outs)

    x = mx.random.normal((B, model.embed.weight.shape[1])).astype(model.dtype)
    positions = mx.arange(B, dtype=mx.int32)

    def matmuls() -> None:
        h = x
        outs = []
        for blk in model.blocks:
            at = blk.attn
            outs += [*at.project(h, positions)[:3], at.out(h), blk.mlp(h)]
        outs.append(model.head(h))
        mx.eval(outs)

    res["kv_write_s"] = timed(writes)
    res["kv_gather_s"] = timed(gathers)
    res["sdpa_on_gathered_s"] = timed(sdpa)
    res["matmuls_s"] = timed(matmuls)
    weight_bytes = sum(getattr(m.weight, "nbytes", 0) for m in _linears(model))
    res["weight_gb"] = weight_bytes / 1e9
    res["matmul_gb_per_s"] = weight_bytes / res["matmuls_s"] / 1e9
    res["pool_gb"] = pool.nbytes / 1e9
    res["gathered_gb_per_layer"] = 2 * keys.nbytes / 1e9
    for key, v in res.items():
        print(f"{key:24s} {v:.4f}")
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=2))


def _linears(model):  # type: ignore[no-untyped-def]
    from vexel_core.model.linear import Linear

    return [m for _, m in model.named_modules() if isinstance(m, Linear)]


if __name__ == "__main__":
    main()
