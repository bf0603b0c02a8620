"""The LLaMA-architecture model that vexel-tiny trains: RMSNorm, RoPE, GQA attention, SwiGLU.

Standard (HF-order, ``traditional=False``) rotary embedding, untied output matrix, no biases.
Parameters stay float32; with ``compute_dtype=bfloat16`` the matrix products run in bf16
(mixed precision for the GPU) while the optimizer updates float32 weights.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import cast

import mlx.core as mx
import mlx.nn as nn

from vexel_core.errors import ConfigError


@dataclass(frozen=True)
class LlamaConfig:
    vocab_size: int
    hidden_size: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    ffn_size: int
    context_length: int
    rope_base: float = 10000.0
    rms_eps: float = 1e-5

    def __post_init__(self) -> None:
        if self.hidden_size % self.n_heads:
            raise ConfigError(f"hidden_size {self.hidden_size} is not a multiple of n_heads")
        if self.n_heads % self.n_kv_heads:
            raise ConfigError(f"n_heads {self.n_heads} is not a multiple of n_kv_heads")
        # Q8_0 blocks hold 32 values of a row: every row length must be a multiple of 32.
        for name in ("hidden_size", "ffn_size"):
            if getattr(self, name) % 32:
                raise ConfigError(f"{name} must be a multiple of 32 (Q8_0 blocks)")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.n_heads

    def to_dict(self) -> dict[str, int | float]:
        return asdict(self)


def target_config(vocab_size: int, context_length: int) -> LlamaConfig:
    """vexel-tiny: about 14.5M parameters with a 4096 vocabulary (Q8_0 file ~15.5 MB)."""
    return LlamaConfig(vocab_size, hidden_size=384, n_layers=8, n_heads=6, n_kv_heads=2,
                       ffn_size=896, context_length=context_length)


def draft_config(vocab_size: int, context_length: int) -> LlamaConfig:
    """vexel-tiny-draft: about 1.6M parameters, under 1/8 of the target."""
    return LlamaConfig(vocab_size, hidden_size=128, n_layers=3, n_heads=4, n_kv_heads=2,
                       ffn_size=384, context_length=context_length)


class CastLinear(nn.Linear):
    """A bias-free linear layer that multiplies in the input's dtype (float32 weights kept)."""

    def __init__(self, in_dims: int, out_dims: int) -> None:
        super().__init__(in_dims, out_dims, bias=False)

    def __call__(self, x: mx.array) -> mx.array:
        return x @ self.weight.astype(x.dtype).T


class RMSNorm(nn.Module):
    def __init__(self, dims: int, eps: float) -> None:
        super().__init__()
        self.weight = mx.ones((dims,))
        self.eps = eps

    def __call__(self, x: mx.array) -> mx.array:
        return mx.fast.rms_norm(x, self.weight.astype(x.dtype), self.eps)


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        self.wq = CastLinear(cfg.hidden_size, cfg.n_heads * cfg.head_dim)
        self.wk = CastLinear(cfg.hidden_size, cfg.n_kv_heads * cfg.head_dim)
        self.wv = CastLinear(cfg.hidden_size, cfg.n_kv_heads * cfg.head_dim)
        self.wo = CastLinear(cfg.n_heads * cfg.head_dim, cfg.hidden_size)
        self.rope = nn.RoPE(cfg.head_dim, traditional=False, base=cfg.rope_base)

    def __call__(self, x: mx.array) -> mx.array:
        b, t, _ = x.shape

        def heads(y: mx.array, n: int) -> mx.array:
            return y.reshape(b, t, n, self.head_dim).transpose(0, 2, 1, 3)

        q = self.rope(heads(self.wq(x), self.n_heads))
        k = self.rope(heads(self.wk(x), self.n_kv_heads))
        v = heads(self.wv(x), self.n_kv_heads)
        out = mx.fast.scaled_dot_product_attention(
            q, k, v, scale=self.head_dim**-0.5, mask="causal"
        )
        return self.wo(out.transpose(0, 2, 1, 3).reshape(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.w_gate = CastLinear(cfg.hidden_size, cfg.ffn_size)
        self.w_up = CastLinear(cfg.hidden_size, cfg.ffn_size)
        self.w_down = CastLinear(cfg.ffn_size, cfg.hidden_size)

    def __call__(self, x: mx.array) -> mx.array:
        return self.w_down(nn.silu(self.w_gate(x)) * self.w_up(x))


class Block(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.attn = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.ffn = FeedForward(cfg)

    def __call__(self, x: mx.array) -> mx.array:
        x = x + self.attn(self.attn_norm(x))
        return x + self.ffn(self.ffn_norm(x))


class TinyLlama(nn.Module):
    """``tokens[B, T]`` -> float32 ``logits[B, T, vocab]`` (full causal attention, no cache)."""

    def __init__(self, cfg: LlamaConfig, compute_dtype: mx.Dtype = mx.float32) -> None:
        super().__init__()
        self.config = cfg
        self.compute_dtype = compute_dtype
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = [Block(cfg) for _ in range(cfg.n_layers)]
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.output = CastLinear(cfg.hidden_size, cfg.vocab_size)

    def __call__(self, tokens: mx.array) -> mx.array:
        x = self.embed(tokens).astype(self.compute_dtype)
        for layer in self.layers:
            x = layer(x)
        return self.output(self.norm(x)).astype(mx.float32)

    def named_parameters(self) -> list[tuple[str, mx.array]]:
        """``("layers.0.attn.wq.weight", array)`` pairs, in a stable order."""
        return cast(list[tuple[str, mx.array]], nn.utils.tree_flatten(self.parameters()))

    def num_params(self) -> int:
        return sum(p.size for _, p in self.named_parameters())
