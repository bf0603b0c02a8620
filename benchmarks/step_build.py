"""Host time to build one decode step's graph (nothing evaluated), with any of `ab.py`'s
changes applied first, on whatever device MLX runs:

    python benchmarks/step_build.py [--segment-compile ...] [--preset narrow32] [--builds 300]

One request decodes a few steps; then the same step is built *builds* times (its pool writes
undone after each, so the pool never changes), and the median and p10 of the model call's
time are printed. ``narrow32`` is 32 LLaMA layers of width 256: the per-layer host cost of
Llama-3-8B's depth, small enough for the CPU. Session 22 (the development machine's two-core
CPU, two alternated runs each): the whole step compiled 1.39-1.47 ms median, 33 segments
(``--segment-compile``) 2.15-2.21.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ab  # noqa: E402
import mlx.core as mx  # noqa: E402

from vexel_core.bench import random_model  # noqa: E402

random_model.PRESETS["narrow32"] = random_model.Preset(256, 32, 512, 4, 2, 1024, context=1024)


def main() -> None:
    changes = [a for a in sys.argv[1:] if a in ab.CHANGES]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="narrow32", choices=list(random_model.PRESETS))
    ap.add_argument("--builds", type=int, default=300)
    ap.add_argument("--cache", default="/tmp/vx")
    args = ap.parse_args([a for a in sys.argv[1:] if a not in ab.CHANGES])
    for change in changes:
        ab.CHANGES[change]()

    from host_build import decoding  # noqa: PLC0415

    from vexel_core.config import EngineSettings  # noqa: PLC0415
    from vexel_core.plugins import load_plugins  # noqa: PLC0415

    path = random_model.write_random_model(
        Path(args.cache) / f"random-{args.preset}-q4_0.gguf", args.preset, "q4_0")
    engine, schedule = decoding(path, load_plugins(), EngineSettings(
        max_batch_size=1, kv_cache_memory="256MiB", compiled_decode_rows=1), 35, 6)
    runner, pool = engine.runner, engine.runner.pool
    times = []
    for _ in range(args.builds):
        tokens, batch, _ = runner.build_batch(schedule)
        # (copies of the arrays' handles: a scatter write rebinds the handle it writes to)
        before = ([mx.array(a) for a in pool._tokens], [mx.array(a) for a in pool.k],
                  [mx.array(a) for a in pool.v])
        start = time.perf_counter()
        engine.model(tokens, batch)
        times.append(time.perf_counter() - start)
        pool._tokens, pool.k, pool.v = before  # the step's writes undone: never evaluated
    times.sort()
    print(f"{' '.join(changes) or 'as is'}: build median {statistics.median(times) * 1e3:.3f} ms,"
          f" p10 {times[len(times) // 10] * 1e3:.3f} ms ({args.builds} builds)")


if __name__ == "__main__":
    main()
