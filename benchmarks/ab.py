"""`vexel` with one engine change undone or one experiment done, for A/B timing in one call
(GPU machine). Flags first, then `vexel`'s command line:

    python benchmarks/ab.py [--inline-headers] [--float-one-row] [--one-rope] \
        bench --random llama3-8b --dtype q4_0 -n 1 ...

* ``--inline-headers``: the CUDA kernels' headers as text again, as before session 6 (they are
  included by path, `vexel_core.gpu.cuda_header`, because MLX copies and hashes a kernel's
  whole source on every call and launch).
* ``--float-one-row``: one activation row of Q4_0/Q8_0 through the float matrix-vector kernel,
  as before session 7, instead of ``gemv_int8``.
* ``--one-rope``: a fused q/k/v projection rotates q and k in one rope call (one launch per
  layer fewer) for one-token steps, where q and k are adjacent in the projection's single row.
  One request's token is now mostly MLX's per-kernel cost (session 8: ~2.5 ms inside
  ``mx.async_eval`` against ~1.4 ms of Python and 0.05 ms of GPU wait). An experiment:
  identical output on the CPU.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

import mlx.core as mx


def inline_headers() -> None:
    def inline_header(files: Sequence[Path]) -> str:
        return "\n".join(Path(f).read_text() for f in files) + "\n"

    for name in ("vexel_core.attention.kernels", "vexel_core.kvcache.kernels",
                 "vexel_core.quant.kernels.library"):
        importlib.import_module(name).cuda_header = inline_header


def float_one_row() -> None:
    importlib.import_module("vexel_core.quant.kernels.library").int8_applies = (
        lambda *args: False)


def one_rope() -> None:
    from vexel_core.model.layers import QKV, Attention

    plain = Attention.project

    def project(self: Attention, x: mx.array, positions: mx.array) -> QKV:
        o = self.opts
        if self.qkv is None or self.rope is None or x.shape[0] != 1:
            return plain(self, x, positions)
        fused = self.qkv(x)
        nq, nk = o.n_heads * o.head_dim, o.n_kv_heads * o.head_dim
        qk = self.rope(fused[:, : nq + nk].reshape(1, o.n_heads + o.n_kv_heads, o.head_dim),
                       positions)
        v = fused[:, nq + nk :].reshape(1, o.n_kv_heads, o.head_dim)
        return qk[:, : o.n_heads], qk[:, o.n_heads :], v

    Attention.project = project  # type: ignore[method-assign]


CHANGES = {"--inline-headers": inline_headers, "--float-one-row": float_one_row,
           "--one-rope": one_rope}


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
