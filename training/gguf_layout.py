"""How a `TinyLlama` maps onto GGUF's llama layout: tensor names, Q/K row order, metadata.

llama.cpp applies rotary embedding to interleaved pairs (0,1), (2,3), ... for ``llama``,
whereas our model (like HF) rotates the two halves of each head. convert_hf_to_gguf.py
bridges the two by permuting the rows of the Q and K projections; `permute_qk` does the same
and `unpermute_qk` undoes it, so both files compute the same function.
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np
from gguf import Keys

from training.model import LlamaConfig, TinyLlama
from training.tokenizer import GGUFVocab
from vexel_core.errors import GGUFError, VexelError
from vexel_core.gguf.reader import GGUFFile

ARCH = "llama"

# Our parameter name -> GGUF tensor name ({i} is the block index).
_BLOCK_NAMES = {
    "attn_norm.weight": "attn_norm.weight",
    "attn.wq.weight": "attn_q.weight",
    "attn.wk.weight": "attn_k.weight",
    "attn.wv.weight": "attn_v.weight",
    "attn.wo.weight": "attn_output.weight",
    "ffn_norm.weight": "ffn_norm.weight",
    "ffn.w_gate.weight": "ffn_gate.weight",
    "ffn.w_up.weight": "ffn_up.weight",
    "ffn.w_down.weight": "ffn_down.weight",
}
_TOP_NAMES = {
    "embed.weight": "token_embd.weight",
    "norm.weight": "output_norm.weight",
    "output.weight": "output.weight",
}

def gguf_name(param: str) -> str:
    if param in _TOP_NAMES:
        return _TOP_NAMES[param]
    _, index, rest = param.split(".", 2)  # "layers.3.attn.wq.weight"
    return f"blk.{index}.{_BLOCK_NAMES[rest]}"


def param_name(tensor: str) -> str:
    for ours, theirs in _TOP_NAMES.items():
        if tensor == theirs:
            return ours
    _, index, rest = tensor.split(".", 2)  # "blk.3.attn_q.weight"
    for ours, theirs in _BLOCK_NAMES.items():
        if rest == theirs:
            return f"layers.{index}.{ours}"
    raise VexelError(f"tensor {tensor!r} is not part of the llama layout")


def permute_qk(w: np.ndarray, n_heads: int) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.permute: halves-order rows -> interleaved order."""
    return w.reshape(n_heads, 2, w.shape[0] // n_heads // 2, *w.shape[1:]).swapaxes(1, 2) \
        .reshape(w.shape)


def unpermute_qk(w: np.ndarray, n_heads: int) -> np.ndarray:
    return w.reshape(n_heads, w.shape[0] // n_heads // 2, 2, *w.shape[1:]).swapaxes(1, 2) \
        .reshape(w.shape)


def _qk_heads(tensor: str, cfg: LlamaConfig) -> int | None:
    if tensor.endswith("attn_q.weight"):
        return cfg.n_heads
    if tensor.endswith("attn_k.weight"):
        return cfg.n_kv_heads
    return None


def gguf_tensors(model: TinyLlama) -> dict[str, np.ndarray]:
    """Every parameter as float32 numpy under its GGUF name, Q/K rows permuted."""
    out = {}
    for name, param in model.named_parameters():
        tensor = gguf_name(name)
        w = np.array(param.astype(mx.float32))
        heads = _qk_heads(tensor, model.config)
        out[tensor] = permute_qk(w, heads) if heads else w
    return out


def model_from_gguf_tensors(cfg: LlamaConfig, tensors: dict[str, np.ndarray]) -> TinyLlama:
    """The inverse of `gguf_tensors` (float arrays in, a float32 model out)."""
    weights = []
    for tensor, w in tensors.items():
        heads = _qk_heads(tensor, cfg)
        w = unpermute_qk(w, heads) if heads else w
        weights.append((param_name(tensor), mx.array(w.astype(np.float32))))
    model = TinyLlama(cfg)
    model.load_weights(weights, strict=True)
    return model


def llama_metadata(cfg: LlamaConfig, vocab: GGUFVocab, name: str) -> dict[str, Any]:
    """Every key llama.cpp needs to run the model and tokenize for it (full key names).

    ``general.file_type`` is added by the writer from the tensor types.
    """
    a = ARCH
    return {
        Keys.General.NAME: name,
        Keys.LLM.CONTEXT_LENGTH.format(arch=a): cfg.context_length,
        Keys.LLM.EMBEDDING_LENGTH.format(arch=a): cfg.hidden_size,
        Keys.LLM.BLOCK_COUNT.format(arch=a): cfg.n_layers,
        Keys.LLM.FEED_FORWARD_LENGTH.format(arch=a): cfg.ffn_size,
        Keys.LLM.VOCAB_SIZE.format(arch=a): cfg.vocab_size,
        Keys.Attention.HEAD_COUNT.format(arch=a): cfg.n_heads,
        Keys.Attention.HEAD_COUNT_KV.format(arch=a): cfg.n_kv_heads,
        Keys.Attention.LAYERNORM_RMS_EPS.format(arch=a): float(cfg.rms_eps),
        Keys.Rope.FREQ_BASE.format(arch=a): float(cfg.rope_base),
        Keys.Rope.DIMENSION_COUNT.format(arch=a): cfg.head_dim,
        Keys.Tokenizer.MODEL: "gpt2",
        Keys.Tokenizer.PRE: "gpt-2",
        Keys.Tokenizer.LIST: vocab.tokens,
        Keys.Tokenizer.TOKEN_TYPE: vocab.token_types,
        Keys.Tokenizer.MERGES: vocab.merges,
        Keys.Tokenizer.BOS_ID: vocab.eos_id,
        Keys.Tokenizer.EOS_ID: vocab.eos_id,
        Keys.Tokenizer.ADD_BOS: False,
        Keys.Tokenizer.ADD_EOS: False,
    }


def config_from_gguf(gguf: GGUFFile) -> LlamaConfig:
    if gguf.architecture != ARCH:
        raise GGUFError(gguf.path, "key general.architecture",
                        f"expected {ARCH!r}, found {gguf.architecture!r}")
    return LlamaConfig(
        vocab_size=gguf.require_arch("vocab_size", int),
        hidden_size=gguf.require_arch("embedding_length", int),
        n_layers=gguf.require_arch("block_count", int),
        n_heads=gguf.require_arch("attention.head_count", int),
        n_kv_heads=gguf.require_arch("attention.head_count_kv", int),
        ffn_size=gguf.require_arch("feed_forward_length", int),
        context_length=gguf.require_arch("context_length", int),
        rope_base=gguf.require_arch("rope.freq_base", float),
        rms_eps=gguf.require_arch("attention.layer_norm_rms_epsilon", float),
    )
