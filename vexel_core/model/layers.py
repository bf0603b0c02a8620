"""Layers shared by every architecture: norms, rotary embeddings, attention, MLPs.

Architectures differ in which of these they stack and with what options, never in copies of
them. Everything works on flat token batches ``[T, hidden]``; positions and the KV cache come
from the step's `AttentionBatch`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import mlx.core as mx
import mlx.nn as nn

from vexel_core.attention.base import AttentionBatch, Rotation, Unrotated
from vexel_core.gpu import kernel_backend, on_cuda
from vexel_core.model import kernels
from vexel_core.model.linear import Linear
from vexel_core.quant.base import Activation, gated
from vexel_core.quant.kernels import GatedAct


@dataclass(frozen=True)
class Product:
    """``linear(x)``, not computed yet: a block's last product, handed on to the residual add
    and the norm after it (`Norm.add`), which may take both into the product's kernel."""

    linear: Linear
    x: mx.array

    def value(self) -> mx.array:
        return self.linear(self.x)

    def add_norm(self, residual: mx.array, norm: RMSNorm) -> tuple[mx.array, mx.array] | None:
        """``(residual + value, norm(residual + value))`` in the product's own kernel where it
        has one (one row on CUDA: gemv_int8's AddNorm epilogue); None elsewhere."""
        return self.linear.add_norm(self.x, residual, norm.weight, norm.eps)


@dataclass(frozen=True)
class GatedProduct(Product):
    """``down(act(g) * u)`` for ``[g, u] = gate_up(x)``, not computed yet: a gated MLP's
    whole product (``linear`` is down), which the norm after it may take into one kernel."""

    gate_up: Linear
    act: Activation

    @cached_property
    def hidden(self) -> mx.array:
        """``act(g) * u``: the down projection's input (one array, however often asked)."""
        return self.gate_up.gated_matmul(self.x, self.act, KERNEL_ACTIVATIONS.get(self.act))

    def value(self) -> mx.array:
        return self.linear(self.hidden)

    def add_norm(self, residual: mx.array, norm: RMSNorm) -> tuple[mx.array, mx.array] | None:
        """One launch for the gate/up and down products, the add and the norm where the
        weights have it (packed Q4_0, one row on CUDA: cuda/feed_forward.cuh); else the
        gated product, then the down product's own `Product.add_norm`."""
        kernel_act = KERNEL_ACTIVATIONS.get(self.act)
        if kernel_act is not None:
            fused = self.linear.feed_forward_add_norm(self.gate_up, self.x, kernel_act,
                                                      residual, norm.weight, norm.eps)
            if fused is not None:
                return fused
        return Product(self.linear, self.hidden).add_norm(residual, norm)


Delta = mx.array | Product | None
"""What a residual add adds: an array, a `Product` not computed yet, or nothing."""


class Norm(nn.Module):
    """A normalisation over the last axis; `add` also takes the residual add before it."""

    def add(self, x: mx.array, delta: Delta) -> tuple[mx.array, mx.array]:
        """``(x + delta, norm(x + delta))``: the residual stream's next value and its norm
        (*delta* None: ``(x, norm(x))``)."""
        if isinstance(delta, Product):
            delta = delta.value()
        h = x if delta is None else x + delta
        return h, self(h)


class RMSNorm(Norm):
    """``x / rms(x) * w``. Gemma's "1 + w" convention is already folded into GGUF weights."""

    def __init__(self, weight: mx.array, eps: float) -> None:
        super().__init__()
        self.weight = weight
        self.eps = eps

    def __call__(self, x: mx.array) -> mx.array:
        return mx.fast.rms_norm(x, self.weight.astype(x.dtype), self.eps)

    def add(self, x: mx.array, delta: Delta) -> tuple[mx.array, mx.array]:
        if isinstance(delta, Product):
            # one launch for the product, the add and the norm (one row on CUDA)
            fused = delta.add_norm(x, self)
            if fused is not None:
                return fused
            delta = delta.value()
        backend = kernel_backend()
        if (backend is None or delta is None or x.ndim != 2 or delta.shape != x.shape
                or delta.dtype != x.dtype or not kernels.fits(x.shape[1], x.dtype)):
            return super().add(x, delta)
        # one launch instead of two, twice per layer (model/kernels)
        return kernels.add_rms_norm(x, delta, self.weight, self.eps, backend=backend)


class LayerNorm(Norm):
    def __init__(self, weight: mx.array, bias: mx.array | None, eps: float) -> None:
        super().__init__()
        self.weight = weight
        self.bias = bias
        self.eps = eps

    def __call__(self, x: mx.array) -> mx.array:
        bias = None if self.bias is None else self.bias.astype(x.dtype)
        return mx.fast.layer_norm(x, self.weight.astype(x.dtype), bias, self.eps)


@dataclass(frozen=True)
class RoPE:
    """Rotary position embedding over the first ``dims`` features of each head.

    ``interleaved`` rotates adjacent pairs (llama.cpp's "normal" rope, used with GGUF's
    permuted LLaMA Q/K weights); otherwise the two halves (NeoX style: Phi, Gemma).
    ``freqs`` (optional) are per-pair wavelengths ``base**(2i/dims) * factor_i``: llama.cpp's
    ``rope_freqs`` / LongRoPE factors fold in here. ``scale`` multiplies positions (linear
    scaling uses ``1/factor``). ``attn_factor`` multiplies the rotated features, as llama.cpp's
    ``attn_factor`` (its "mscale") does: applied to q and k, it scales scores by its square.
    """

    dims: int
    base: float = 10000.0
    interleaved: bool = True
    scale: float = 1.0
    freqs: mx.array | None = None
    attn_factor: float = 1.0

    @classmethod
    def with_factors(cls, dims: int, base: float, factors: mx.array, **kw: object) -> RoPE:
        """Frequencies divided by per-pair factors (llama.cpp's ``freq_factors``)."""
        wavelengths = base ** (mx.arange(0, dims, 2, dtype=mx.float32) / dims)
        return cls(dims=dims, base=base, freqs=wavelengths * factors.astype(mx.float32),
                   **kw)  # type: ignore[arg-type]

    def __call__(self, x: mx.array, positions: mx.array) -> mx.array:
        """``x[T, H, D]`` at ``positions[T]`` (any order: one offset per token)."""
        if self.dims < 32 and x.shape[0] * -(-x.shape[1] // 4) >= 128 and on_cuda():
            # MLX 0.32's CUDA rope asks for more than 64 threads along a block's z axis
            # when dims / 2 < 16 and tokens x ceil(heads / 4) >= 128 ("invalid argument"):
            # only small test models rotate so few features
            out = self.by_hand(x, positions)
        else:
            out = mx.fast.rope(
                x[:, :, None, :],  # rope's (B, *, L, D) with one "sequence" per token
                self.dims,
                traditional=self.interleaved,
                base=None if self.freqs is not None else self.base,
                scale=self.scale,
                offset=positions,
                freqs=self.freqs,
            )[:, :, 0, :]
        if self.attn_factor == 1.0:
            return out
        if self.dims == x.shape[-1]:
            return out * self.attn_factor
        # partial rotary: llama.cpp copies the features past `dims` unscaled
        rotated, rest = out[..., : self.dims], out[..., self.dims :]
        return mx.concatenate([rotated * self.attn_factor, rest], axis=-1)

    def rotation(self) -> Rotation:
        """This rotation for an attention kernel (`Rotation`), made once."""
        return self._rotation

    @cached_property
    def _rotation(self) -> Rotation:
        inv_freq = 1.0 / self.wavelengths()
        mx.eval(inv_freq)
        return Rotation(self.dims, self.interleaved, self.scale, self.attn_factor, inv_freq)

    def wavelengths(self) -> mx.array:
        """Each pair's wavelength ``[dims / 2]``, float32."""
        if self.freqs is not None:
            return self.freqs
        return self.base ** (mx.arange(0, self.dims, 2, dtype=mx.float32) / self.dims)

    def by_hand(self, x: mx.array, positions: mx.array) -> mx.array:
        """The same rotation in plain MLX operations, in float32 (as the fused kernel)."""
        wavelengths = self.wavelengths()
        theta = (positions.astype(mx.float32) * self.scale)[:, None] / wavelengths[None, :]
        cos, sin = mx.cos(theta)[:, None, :], mx.sin(theta)[:, None, :]  # [T, 1, dims/2]
        xr = x[..., : self.dims].astype(mx.float32)
        half = self.dims // 2
        a, b = (xr[..., 0::2], xr[..., 1::2]) if self.interleaved else (xr[..., :half],
                                                                        xr[..., half:])
        ra, rb = a * cos - b * sin, a * sin + b * cos
        rot = (mx.stack([ra, rb], axis=-1).reshape(xr.shape) if self.interleaved
               else mx.concatenate([ra, rb], axis=-1)).astype(x.dtype)
        if self.dims == x.shape[-1]:
            return rot
        return mx.concatenate([rot, x[..., self.dims :]], axis=-1)


class LongRoPE:
    """LongRoPE (Phi-3 "su"/"longrope"): one `RoPE` for short contexts, one for long ones.

    llama.cpp picks the long factors when the context it runs with (``n_ctx_seq``) exceeds
    the original training context (``rope.scaling.original_context_length``), and then uses
    them for every position, short prompts included. The engine states its context length
    through `set_context_len`; until then the model's trained context is assumed.
    """

    def __init__(self, short: RoPE, long: RoPE, original_context: int, context_len: int) -> None:
        self.short, self.long = short, long
        self.original_context = original_context
        self.active = short
        self.set_context_len(context_len)

    def set_context_len(self, n: int) -> None:
        self.active = self.long if n > self.original_context else self.short

    def __call__(self, x: mx.array, positions: mx.array) -> mx.array:
        return self.active(x, positions)

    def rotation(self) -> Rotation:
        return self.active.rotation()


class QKV(NamedTuple):
    """An attention's inputs: ``q[T, Hq, D]``, ``k``/``v`` ``[T, Hkv, D]``, q and k rotated;
    and q and k before it with the rotation (`Unrotated`), for a backend whose kernel rotates
    as it reads them."""

    q: mx.array
    k: mx.array
    v: mx.array
    unrotated: Unrotated | None = None


@dataclass(frozen=True)
class AttentionOptions:
    n_heads: int
    n_kv_heads: int
    head_dim: int
    scale: float | None = None  # default 1/sqrt(head_dim)
    softcap: float | None = None
    window: int | None = None


class Attention(nn.Module):
    """Multi-head / grouped-query attention over the paged cache.

    Projections come separate (``q``, ``k``, ``v``), fused (``qkv``: rows of q, then k, then
    v, as GGUF stores Phi's ``attn_qkv``), or q and k fused (``qk``) with ``v`` apart, where
    v's format differs; biases live in the `Linear` layers.
    """

    def __init__(
        self,
        layer: int,
        opts: AttentionOptions,
        rope: RoPE | LongRoPE | None,
        out: Linear,
        *,
        q: Linear | None = None,
        k: Linear | None = None,
        v: Linear | None = None,
        qkv: Linear | None = None,
        qk: Linear | None = None,
    ) -> None:
        super().__init__()
        separate = q is not None and k is not None and v is not None
        if qkv is None and not separate and (qk is None or v is None):
            raise ValueError("Attention needs q, k and v projections, a fused qkv, or a fused "
                             "qk and v")
        self.layer = layer
        self.opts = opts
        self.rope = rope
        self.q, self.k, self.v, self.qkv, self.qk, self.out = q, k, v, qkv, qk, out
        self.scale = opts.scale if opts.scale is not None else 1.0 / math.sqrt(opts.head_dim)

    # Three parts, called in turn by a block (`model.decoder.Block`), which may compile the
    # first and last apart from the attention: only `attend` touches the KV cache.
    def project(self, x: mx.array, positions: mx.array) -> QKV:
        """q, k, v for *x*, q and k rotated at *positions*. MLX builds arrays lazily: the
        rotated q and k cost nothing where the backend takes `QKV.unrotated` instead."""
        o = self.opts
        T, hq, hkv = x.shape[0], o.n_heads, o.n_kv_heads
        if self.qkv is not None:
            heads = self.qkv(x).reshape(T, hq + 2 * hkv, o.head_dim)
            q, k, v = heads[:, :hq], heads[:, hq : hq + hkv], heads[:, hq + hkv :]
            if self.rope is None:
                return QKV(q, k, v)
            # q's and k's heads sit side by side: one rope call rotates both (a decode step
            # is mostly per-launch cost; notes/engine-gpu.md, session 9)
            rotated = self.rope(heads[:, : hq + hkv], positions)
            return QKV(rotated[:, :hq], rotated[:, hq:], v,
                       Unrotated(q, k, self.rope.rotation(), heads))
        assert self.v is not None
        v = self.v(x).reshape(T, hkv, o.head_dim)
        if self.qk is not None:
            heads = self.qk(x).reshape(T, hq + hkv, o.head_dim)
            q, k = heads[:, :hq], heads[:, hq:]
            if self.rope is None:
                return QKV(q, k, v)
            rotated = self.rope(heads, positions)  # q and k in one call, as above
            return QKV(rotated[:, :hq], rotated[:, hq:], v, Unrotated(q, k, self.rope.rotation()))
        assert self.q is not None and self.k is not None
        q = self.q(x).reshape(T, hq, o.head_dim)
        k = self.k(x).reshape(T, hkv, o.head_dim)
        if self.rope is None:
            return QKV(q, k, v)
        return QKV(self.rope(q, positions), self.rope(k, positions), v,
                   Unrotated(q, k, self.rope.rotation()))

    def attend(self, qkv: QKV, batch: AttentionBatch) -> mx.array:
        """The backend's cache write and attention: ``[T, Hq, D]``."""
        o = self.opts
        return batch.backend(qkv.q, qkv.k, qkv.v, layer=self.layer, batch=batch,
                             scale=self.scale, softcap=o.softcap, window=o.window,
                             unrotated=qkv.unrotated)

    def output(self, attn: mx.array) -> Product:
        """The output projection of *attn* ``[T, Hq, D]``, left to the residual add after it."""
        return Product(self.out, attn.reshape(attn.shape[0], -1))


def gelu_tanh(x: mx.array) -> mx.array:
    return nn.gelu_approx(x)


# The activations a quantized kernel can fuse into the gate/up product, by the kernel's name
# for them (`KernelLibrary.gemv`'s act); any other takes the product, then `gated`.
KERNEL_ACTIVATIONS: dict[Activation, GatedAct] = {nn.silu: "silu", gelu_tanh: "gelu_tanh"}


class GatedMLP(nn.Module):
    """``down(act(gate(x)) * up(x))``: SwiGLU with silu (LLaMA, Phi-3), GeGLU with gelu (Gemma).

    ``gate_up`` is the fused form (Phi-3's ``ffn_up`` holds gate rows then up rows); its
    weight may fuse the activation into the product too (`Linear.gated_matmul`: one kernel
    instead of the product, a split and ``act(g) * u`` when decoding one request on CUDA),
    and with the down product, the residual add and the next norm (`GatedProduct`: one kernel
    for the whole part, packed Q4_0 on CUDA).
    """

    def __init__(
        self,
        down: Linear,
        *,
        gate: Linear | None = None,
        up: Linear | None = None,
        gate_up: Linear | None = None,
        act: Activation = nn.silu,
    ) -> None:
        super().__init__()
        self.gate, self.up, self.gate_up, self.down = gate, up, gate_up, down
        self.act = act

    def __call__(self, x: mx.array) -> mx.array:
        return self.product(x).value()

    def product(self, x: mx.array) -> Product:
        """The MLP of *x* up to its down product, left to the residual add after it."""
        if self.gate_up is not None:
            return GatedProduct(self.down, x, self.gate_up, self.act)
        assert self.gate is not None and self.up is not None
        return Product(self.down, gated(self.act)(self.gate(x), self.up(x)))


class MLP(nn.Module):
    """``down(act(up(x)))`` (Phi-2: GELU)."""

    def __init__(self, up: Linear, down: Linear, act: Activation = nn.gelu_approx) -> None:
        super().__init__()
        self.up, self.down, self.act = up, down, act

    def __call__(self, x: mx.array) -> mx.array:
        return self.product(x).value()

    def product(self, x: mx.array) -> Product:
        return Product(self.down, self.act(self.up(x)))


def softcap(x: mx.array, cap: float) -> mx.array:
    return cap * mx.tanh(x / cap)
