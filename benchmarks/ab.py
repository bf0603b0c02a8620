"""`vexel` with one engine change undone or one experiment done, for A/B timing in one call
(GPU machine). Flags first, then `vexel`'s command line:

    python benchmarks/ab.py [--inline-headers] [--float-one-row] [--plain-norm-add] \
        [--unfused-glu] [--separate-cache-write] [--long-bodies] [--separate-step-arrays] \
        [--host-step-arrays] \
        [--tiny-tokens] [--separate-add-norm] [--segment-compile] [--separate-rope] \
        [--sliced-heads] [--long-spans] [--separate-feed-forward] [--old-attention] \
        [--no-gemm] [--no-gemm-blocks] \
        bench --random llama3-8b --dtype q4_0 -n 1 ...

* ``--inline-headers``: the CUDA kernels' headers as text again, as before session 6 (they are
  included by path, `vexel_core.gpu.cuda_header`, because MLX copies and hashes a kernel's
  whole source on every call and launch).
* ``--float-one-row``: one activation row of Q4_0/Q8_0 through the float matrix-vector kernel,
  as before session 7, instead of ``gemv_int8``.
* ``--plain-norm-add``: the residual add and the RMS norm after it as two operations, as
  before session 9, instead of one ``add_rms_norm`` kernel.
* ``--unfused-glu``: a fused gate/up product, then a split and MLX's compiled ``act(g) * u``,
  as before ``gemv_int8``'s gated mode, instead of one kernel for all three.
* ``--separate-cache-write``: a decode step's cache write as its own launch
  (``cache_write``), as before the paged decode kernel took it in.
* ``--long-bodies``: the paged decode's and add_rms_norm's kernel bodies as long as before
  their algorithms moved into headers (a comment of the bytes that moved), since MLX copies a
  custom kernel's body text on every launch; the same machine code.
* ``--separate-step-arrays``: a step's positions, slots, block tables and context lengths as
  four host-made arrays, as before session 19, instead of views of one
  (`vexel_core.engine.runner.step_arrays`).
* ``--host-step-arrays``: every step's array made on the host, as before session 30,
  instead of the last one's plus one on the device where every sequence decodes within its
  blocks (`vexel_core.engine.runner.StepArrayMaker`).
* ``--tiny-tokens``: the kernels' ordering tokens and unused outputs of shape (1,), as before
  session 19, instead of `vexel_core.gpu.TOKEN_SHAPE`.
* ``--separate-add-norm``: the output and down products, then ``add_rms_norm``, as before
  session 20, instead of the products' AddNorm epilogue (``Linear.add_norm``).
* ``--segment-compile``: a decode step as 33 compiled segments (tokens to block 0's q, k, v;
  each block's attention output to the next one's; the last to the logits) with the
  attention built operation by operation between them, and block tables as wide as the
  longest sequence's, as before session 22, instead of one compiled step.
* ``--separate-rope``: q and k rotated by MLX's rope (one call for both heads of a fused
  q/k/v product) before the attention kernel, as before session 23, instead of by the
  kernel as it reads them.
* ``--sliced-heads``: the attention kernel given q, k and v as slices of the fused q/k/v
  product, as before session 24, instead of the product's heads as one array (five arrays
  a layer fewer for MLX to build and submit).
* ``--long-spans``: the paged decode's launch shapes on CUDA as on main before the merge
  inside the kernel (one span up to 512 tokens, spans of at least 256 beyond; 4 warps,
  doubled while the span has more 32-token chunks than warps), instead of one 8-warp span up
  to 256 tokens and 16-warp spans of 128 beyond.
* ``--separate-feed-forward``: a gated MLP's gate/up product, then its down product with the
  AddNorm epilogue, as before session 27, instead of one launch for the whole part
  (cuda/feed_forward.cuh).
* ``--old-attention``: the paged decode kernel built from the CUDA sources in
  ``.ab_old/attention/cuda`` (a commit's, copied there before a kernel change: the same
  five files as ``vexel_core/attention/kernels/cuda``), instead of the package's: a kernel
  change timed in the engine within one process (`benchmarks/alternate.py`).
* ``--no-gemm``: 3 to 15 rows of packed Q4_0 through the float matrix-vector kernel and 16
  through the dequantized matrix and MLX's matmul, as before session 39, instead of
  ``gemm_packed`` on the tensor cores.
* ``--no-gemm-blocks``: the few rows of the file's blocks (Q8_0, the K formats ...) that
  ``blocks_applies`` gives ``gemm_blocks`` through the float matrix-vector kernel, and 16
  through the dequantized matrix, as before session 41.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path


def inline_headers() -> None:
    def inline_header(files: Sequence[Path]) -> str:
        return "\n".join(Path(f).read_text() for f in files) + "\n"

    for name in ("vexel_core.gpu", "vexel_core.quant.kernels.library"):
        importlib.import_module(name).cuda_header = inline_header


def float_one_row() -> None:
    importlib.import_module("vexel_core.quant.kernels.library").int8_applies = (
        lambda *args: False)


def plain_norm_add() -> None:
    from vexel_core.model.layers import Norm, RMSNorm

    RMSNorm.add = Norm.add  # type: ignore[method-assign]


def unfused_glu() -> None:
    # no activation has a kernel name: every weight takes the fallback, the graph of before
    importlib.import_module("vexel_core.model.layers").KERNEL_ACTIVATIONS.clear()


def separate_cache_write() -> None:
    from vexel_core.attention.backends import PagedBackend, _PagedAttention

    PagedBackend._decode_writing = _PagedAttention._decode_writing  # type: ignore[method-assign]


# The bodies' sizes before session 14 moved their algorithms into headers (bytes)
_LONG_BODIES = {"vx_paged_decode": 10419, "vx_add_rms_norm": 2763}


def long_bodies() -> None:
    import mlx.core as mx

    real = mx.fast.cuda_kernel

    def padded(name: str, input_names: list[str], output_names: list[str], source: str,
               header: str = "", **kwargs: object) -> object:
        pad = _LONG_BODIES.get(name, 0) - len(source)
        if pad > 0:
            source += "\n" + "\n".join("// " + "-" * 96 for _ in range(pad // 100 + 1))
        return real(name, input_names, output_names, source, header, **kwargs)

    mx.fast.cuda_kernel = padded


def separate_step_arrays() -> None:
    import mlx.core as mx

    runner = importlib.import_module("vexel_core.engine.runner")

    def separate(self: object, positions: list[int], slots: list[int],
                 context_lens: list[int], tables: list[int], width: int) -> object:
        # the lengths left to the attention's step plan, which made them as before
        return runner.StepArrays(
            mx.array(positions, dtype=mx.int32), mx.array(slots, dtype=mx.int32), None,
            mx.array(tables, dtype=mx.int32).reshape(len(context_lens), width))

    runner.StepArrayMaker.__call__ = separate


def host_step_arrays() -> None:
    runner = importlib.import_module("vexel_core.engine.runner")
    runner.StepArrayMaker._advanced = lambda self, *args: None


def tiny_tokens() -> None:
    importlib.import_module("vexel_core.gpu").TOKEN_SHAPE = (1,)


def separate_add_norm() -> None:
    from vexel_core.model.linear import Linear

    Linear.add_norm = lambda *args: None  # type: ignore[method-assign,assignment]


def separate_feed_forward() -> None:
    from vexel_core.model.linear import Linear

    Linear.feed_forward_add_norm = lambda *args: None  # type: ignore[method-assign,assignment]


def segment_compile() -> None:
    import mlx.core as mx

    from vexel_core.model.decoder import DecoderLM

    importlib.import_module("vexel_core.engine.runner").table_width = lambda blocks: blocks

    def decode(self, tokens, batch):  # type: ignore[no-untyped-def]
        if not self._steps:  # (cleared where the traces go stale)
            blocks = self.blocks

            def first(tokens, positions):  # type: ignore[no-untyped-def]
                return blocks[0].enter((self._embed(tokens), None), positions)

            def between(i):  # type: ignore[no-untyped-def]
                return lambda carry, attn, positions: blocks[i + 1].enter(
                    blocks[i].leave(carry, attn), positions)

            def last(carry, attn):  # type: ignore[no-untyped-def]
                return self._logits(blocks[-1].leave(carry, attn))

            functions = [first, *(between(i) for i in range(len(blocks) - 1)), last]
            self._steps["segments"] = [mx.compile(f) for f in functions]
        first, *between, last = self._steps["segments"]
        qkv, carry = first(tokens, batch.positions)
        for block, segment in zip(self.blocks[:-1], between, strict=True):
            qkv, carry = segment(carry, block.attn.attend(qkv, batch), batch.positions)
        return last(carry, self.blocks[-1].attn.attend(qkv, batch))

    DecoderLM._decode_compiled = decode  # type: ignore[method-assign]


def attend_given(change):  # type: ignore[no-untyped-def]
    """`Attention.attend` handing the backend ``change(qkv)`` instead of the projection's."""
    from vexel_core.model.layers import Attention

    def attend(self, qkv, batch):  # type: ignore[no-untyped-def]
        return attend_as_is(self, change(qkv), batch)

    attend_as_is = Attention.attend
    Attention.attend = attend  # type: ignore[method-assign]


def separate_rope() -> None:
    attend_given(lambda qkv: qkv._replace(unrotated=None))


def sliced_heads() -> None:
    attend_given(lambda qkv: qkv._replace(
        unrotated=qkv.unrotated and qkv.unrotated._replace(heads=None)))


def long_spans() -> None:
    from vexel_core.attention import kernels

    def launch_shape(batch, n_kv_heads, max_context, head_dim, rep, dtype,  # type: ignore[no-untyped-def]
                     backend="cuda", splits=None):
        splits = splits or kernels.split_count(batch, n_kv_heads, max_context, "metal")
        span, warps = -(-max_context // splits), kernels.WARP_COUNTS[0]
        for more in kernels.WARP_COUNTS[1:]:
            if (span <= warps * 32 or batch * n_kv_heads * splits * more > kernels.WARP_BUDGET
                    or not kernels.supports(head_dim, rep, dtype, more, backend)):
                break
            warps = more
        return warps, splits

    kernels.launch_shape = launch_shape


def old_attention() -> None:
    from functools import partial

    from vexel_core.attention import kernels

    old = Path(".ab_old/attention")
    if not (old / "cuda" / "paged_decode.cu").is_file():
        raise SystemExit(f"--old-attention: no kernel sources in {old / 'cuda'}")
    kernels._kernel = partial(kernels._kernel, folder=old)  # type: ignore[assignment]


def no_gemm() -> None:
    importlib.import_module("vexel_core.quant.kernels").gemm_applies = lambda *args: False


def no_gemm_blocks() -> None:
    importlib.import_module("vexel_core.quant.kernels").blocks_applies = lambda *args: False


CHANGES = {"--inline-headers": inline_headers, "--float-one-row": float_one_row,
           "--plain-norm-add": plain_norm_add, "--unfused-glu": unfused_glu,
           "--separate-cache-write": separate_cache_write, "--long-bodies": long_bodies,
           "--separate-step-arrays": separate_step_arrays, "--tiny-tokens": tiny_tokens,
           "--host-step-arrays": host_step_arrays,
           "--separate-add-norm": separate_add_norm, "--segment-compile": segment_compile,
           "--separate-rope": separate_rope, "--sliced-heads": sliced_heads,
           "--long-spans": long_spans, "--separate-feed-forward": separate_feed_forward,
           "--old-attention": old_attention, "--no-gemm": no_gemm,
           "--no-gemm-blocks": no_gemm_blocks}


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
