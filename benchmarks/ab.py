"""`vexel` with one engine change undone or one experiment done, for A/B timing in one call
(GPU machine). Flags first, then `vexel`'s command line:

    python benchmarks/ab.py [--inline-headers] [--compile-mlp] [--float-one-row] \
        bench --random llama3-8b --dtype q4_0 -n 1 ...

* ``--inline-headers``: the CUDA kernels' headers as text again, as before session 6 (they are
  included by path, `vexel_core.gpu.cuda_header`, because MLX copies and hashes a kernel's
  whole source on every call and launch).
* ``--compile-mlp``: each pre-norm block computes ``h + mlp(mlp_norm(h))`` through one
  `mx.compile`d function for steps of at most ``MAX_ROWS`` tokens (each new row count traces
  once; prefill steps stay eager). One request's token is host-bound (~3.6 ms of Python
  building 32 layers' graphs, ~2.7 ms submitting them); a compiled function replays its traced
  graph in C++. Attention stays eager: it reads the KV pools, which a trace would capture as
  constants. An experiment: identical output on the CPU.
* ``--float-one-row``: one activation row of Q4_0/Q8_0 through the float matrix-vector kernel,
  as before session 7, instead of ``gemv_int8``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import mlx.core as mx

MAX_ROWS = 64


def inline_headers() -> None:
    def inline_header(files: Sequence[Path]) -> str:
        return "\n".join(Path(f).read_text() for f in files) + "\n"

    for name in ("vexel_core.attention.kernels", "vexel_core.kvcache.kernels",
                 "vexel_core.quant.kernels.library"):
        importlib.import_module(name).cuda_header = inline_header


def compile_mlp_halves() -> None:
    from vexel_core.model.decoder import PreNormBlock

    compiled: dict[int, Callable[[mx.array], mx.array]] = {}

    def mlp_half(block: Any) -> Callable[[mx.array], mx.array]:
        if id(block) not in compiled:
            def half(h: mx.array) -> mx.array:
                m = block.mlp(block.mlp_norm(h))
                if block.post_mlp_norm is not None:
                    m = block.post_mlp_norm(m)
                return h + m
            compiled[id(block)] = mx.compile(half)
        return compiled[id(block)]

    def call(self: Any, x: mx.array, batch: Any) -> mx.array:
        a = self.attn(self.attn_norm(x), batch)
        if self.post_attn_norm is not None:
            a = self.post_attn_norm(a)
        h = x + a
        if h.shape[0] <= MAX_ROWS:
            return mlp_half(self)(h)
        m = self.mlp(self.mlp_norm(h))
        if self.post_mlp_norm is not None:
            m = self.post_mlp_norm(m)
        return h + m

    PreNormBlock.__call__ = call  # type: ignore[method-assign]


def float_one_row() -> None:
    importlib.import_module("vexel_core.quant.kernels.library").int8_applies = (
        lambda *args: False)


CHANGES = {"--inline-headers": inline_headers, "--compile-mlp": compile_mlp_halves,
           "--float-one-row": float_one_row}


def main() -> None:
    args = sys.argv[1:]
    while args and args[0] in CHANGES:
        CHANGES[args[0]]()
        print(f"ab.py: {args.pop(0)}", file=sys.stderr)
    from vexel_core.cli import console_main

    sys.argv = ["vexel", *args]
    console_main()


if __name__ == "__main__":
    main()
