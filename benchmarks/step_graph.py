"""The operations of one built decode step, counted by primitive (GPU machine; the CPU builds
other graphs: its products and attention are plain MLX operations).

    python benchmarks/step_graph.py --preset llama3-8b --dtype q4_0

MLX's replay of a compiled step makes one array per operation of its tape, glue included
(reshapes, slices, type casts: no kernel, but host time), and its submit adds a CUDA graph
node per kernel (notes/mlx-cuda-host-cost.md). One request decodes a few steps; the next
step's graph (`ModelRunner.launch`, not evaluated) is written with `mx.export_to_dot` and its
operations counted: in all, per layer, and by primitive; and the arrays they make (a kernel
with several outputs makes several, each allocated and tracked by MLX's submit).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import mlx.core as mx

from vexel_core.bench.random_model import write_random_model
from vexel_core.config import EngineSettings
from vexel_core.plugins import load_plugins

sys.path.insert(0, str(Path(__file__).parent))
from host_build import decoding  # noqa: E402


def primitives(dot: str) -> Counter[str]:
    """Operations of an `mx.export_to_dot` graph by primitive: its rectangle nodes' labels."""
    return Counter(re.findall(r'\[label ="([^"]+)", shape=rectangle\]', dot))


def arrays_made(dot: str) -> int:
    """Arrays the operations of an `mx.export_to_dot` graph make: edges from an operation
    (a numeric node) to an array (a quoted one), one per output."""
    return len(re.findall(r'^\d+ -> "', dot, flags=re.MULTILINE))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="llama3-8b")
    ap.add_argument("--dtype", default="q4_0")
    ap.add_argument("--cache", default="/tmp/vx")
    ap.add_argument("--compiled-rows", type=int, default=None,
                    help="engine.compiled_decode_rows (default: the device's)")
    a = ap.parse_args()
    host = load_plugins()
    path = write_random_model(Path(a.cache) / f"random-{a.preset}-{a.dtype}.gguf", a.preset,
                              a.dtype)
    settings = EngineSettings(max_batch_size=1, kv_cache_memory="1GiB",
                              compiled_decode_rows=a.compiled_rows)
    engine, sched = decoding(path, host, settings, 128, 8)
    logits = engine.runner.launch(sched).logits
    with tempfile.TemporaryDirectory() as folder:
        dot = Path(folder) / "step.dot"
        mx.export_to_dot(str(dot), logits)
        text = dot.read_text()
        counts, made = primitives(text), arrays_made(text)
    layers = len(engine.model.blocks)
    total = sum(counts.values())
    print(f"{total} operations in one decode step, {total / layers:.1f} a layer ({layers} layers),"
          f" making {made} arrays ({made / layers:.1f} a layer)")
    for name, n in counts.most_common():
        print(f"{n:6d}  {n / layers:6.2f} a layer  {name}")


if __name__ == "__main__":
    main()
