"""`vexel bench` with each block's MLP half compiled by `mx.compile` (an experiment, GPU machine).

    python benchmarks/compile_ab.py --compile-mlp bench --random llama3-8b --dtype q4_0 -n 1 ...
    python benchmarks/compile_ab.py bench --random llama3-8b --dtype q4_0 -n 1 ...

One request's token is host-bound: ~3.6 ms of Python building 32 layers' graphs (half of a
layer's in the quantized products, each a `mx.fast.cuda_kernel` call) and ~2.7 ms submitting
them. A compiled function replays its traced graph in C++, without the Python layers or the
custom kernels' per-call source building. With ``--compile-mlp`` the pre-norm blocks compute
``h + mlp(mlp_norm(h))`` through one compiled function per block for steps of at most
``MAX_ROWS`` tokens (each new row count traces once; prefill steps stay eager). Attention
stays eager: it reads the KV pools, which a trace would capture as constants. Everything
after the flag is `vexel`'s command line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import mlx.core as mx

MAX_ROWS = 64


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


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--compile-mlp":
        args = args[1:]
        compile_mlp_halves()
        print("MLP halves compiled", file=sys.stderr)
    from vexel_core.cli import console_main

    sys.argv = ["vexel", *args]
    console_main()


if __name__ == "__main__":
    main()
