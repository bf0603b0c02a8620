"""What a GGUF file says about its model, as typed facts checked against its tensors.

`ModelDescription.from_gguf` reads the standard keys (``<arch>.embedding_length``,
``<arch>.attention.head_count``, ...) with llama.cpp's defaults where a key may be absent, and
checks the shapes that those facts imply: the token table is ``[vocab, hidden]``, the
``blk.N`` tensors cover exactly ``block_count`` blocks, the attention projections have
``heads × head_dim`` rows. A file that disagrees with itself ends in `GGUFError` naming the
key or tensor, the expected and the found shape.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from gguf import LlamaFileType

from vexel_core.errors import GGUFError
from vexel_core.gguf.reader import GGUFFile

DEFAULT_ROPE_FREQ_BASE = 10000.0  # llama.cpp's default when the key is absent
_BLOCK_TENSOR = re.compile(r"blk\.(\d+)\.")
Shape = tuple[tuple[int, ...], str]  # an allowed shape and the formula that gives it


@dataclass(frozen=True)
class ModelDescription:
    path: Path
    file_size: int  # bytes
    architecture: str  # general.architecture
    name: str | None  # general.name
    file_type: int | None  # general.file_type (llama.cpp's LLAMA_FTYPE_*)
    context_length: int  # trained context, in tokens
    embedding_length: int  # hidden size
    block_count: int  # layers
    feed_forward_length: int | None
    head_count: int
    head_count_kv: int  # defaults to head_count
    head_dim: int  # attention.key_length, else embedding_length / head_count
    value_head_dim: int  # attention.value_length, else embedding_length / head_count
    rope_dimension_count: int  # defaults to head_dim
    rope_freq_base: float  # defaults to 10000
    rms_norm_epsilon: float | None  # attention.layer_norm_rms_epsilon
    layer_norm_epsilon: float | None  # attention.layer_norm_epsilon
    vocab_size: int  # <arch>.vocab_size, else the token list's length, else token_embd rows
    parameter_count: int  # elements of all tensors
    tensor_types: dict[str, int]  # GGML type name -> number of tensors, most common first
    tokenizer_model: str | None  # tokenizer.ggml.model ("llama", "gpt2", ...)
    tokenizer_size: int  # entries in tokenizer.ggml.tokens (0 without a vocabulary)
    has_chat_template: bool  # tokenizer.chat_template present

    @property
    def file_type_name(self) -> str | None:
        """``general.file_type`` by name (``"MOSTLY_Q4_K_M"``), or None."""
        if self.file_type is None:
            return None
        try:
            return LlamaFileType(self.file_type).name
        except ValueError:
            return f"unknown ({self.file_type})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready facts (``vexel inspect --json``)."""
        facts = asdict(self)
        facts["path"] = str(self.path)
        facts["file_type_name"] = self.file_type_name
        return facts

    @classmethod
    def from_gguf(cls, g: GGUFFile) -> ModelDescription:
        """Read and cross-check the facts of an open file; `GGUFError` when they disagree."""
        facts = _Facts(g)
        embedding = facts.positive("embedding_length")
        heads = facts.positive("attention.head_count")
        kv_heads = facts.positive("attention.head_count_kv", default=heads)
        if heads % kv_heads:
            raise facts.error(
                "attention.head_count_kv",
                f"head_count {heads} is not a multiple of head_count_kv {kv_heads}",
            )
        default_head_dim = embedding // heads if embedding % heads == 0 else None
        head_dim = facts.positive("attention.key_length", default=default_head_dim)
        value_head_dim = facts.positive("attention.value_length", default=default_head_dim)
        tokens = g.require("tokenizer.ggml.tokens", list) if "tokenizer.ggml.tokens" in g.metadata \
            else []
        vocab_size = facts.positive("vocab_size", default=len(tokens) or None, required=False)
        if tokens and vocab_size != len(tokens):
            raise facts.error(
                "vocab_size", f"{vocab_size} differs from the vocabulary's {len(tokens)} tokens"
            )
        embeddings = g.tensor("token_embd.weight")
        description = cls(
            path=g.path,
            file_size=g.file_size,
            architecture=g.architecture,
            name=facts.optional("general.name", str),
            file_type=facts.optional("general.file_type", int),
            context_length=facts.positive("context_length"),
            embedding_length=embedding,
            block_count=facts.positive("block_count"),
            feed_forward_length=facts.positive("feed_forward_length", required=False),
            head_count=heads,
            head_count_kv=kv_heads,
            head_dim=head_dim,
            value_head_dim=value_head_dim,
            rope_dimension_count=facts.positive("rope.dimension_count", default=head_dim),
            rope_freq_base=facts.optional(
                f"{g.architecture}.rope.freq_base", float, DEFAULT_ROPE_FREQ_BASE
            ),
            rms_norm_epsilon=facts.optional(
                f"{g.architecture}.attention.layer_norm_rms_epsilon", float
            ),
            layer_norm_epsilon=facts.optional(
                f"{g.architecture}.attention.layer_norm_epsilon", float
            ),
            vocab_size=vocab_size or embeddings.shape[0],
            parameter_count=sum(t.n_elements for t in g.tensors.values()),
            tensor_types=dict(Counter(t.ggml_type.name for t in g.tensors.values()).most_common()),
            tokenizer_model=facts.optional("tokenizer.ggml.model", str),
            tokenizer_size=len(tokens),
            has_chat_template=facts.optional("tokenizer.chat_template", str) is not None,
        )
        _check_blocks(g, description.block_count)
        _check_shapes(g, description)
        return description


class _Facts:
    """Typed reads of one file's keys, with errors naming the key."""

    def __init__(self, g: GGUFFile) -> None:
        self.g = g

    def error(self, suffix: str, reason: str) -> GGUFError:
        return GGUFError(self.g.path, f"key {self.g.architecture}.{suffix}", reason)

    def optional(self, key: str, kind: type, default: Any = None) -> Any:
        return self.g.require(key, kind) if key in self.g.metadata else default

    def positive(self, suffix: str, default: int | None = None, required: bool = True) -> Any:
        """``<arch>.<suffix>`` as an integer >= 1; *default* when absent (else missing).

        A per-layer list with one value for every layer counts as that value, as in llama.cpp.
        """
        key = f"{self.g.architecture}.{suffix}"
        if key not in self.g.metadata and (default is not None or not required):
            return default
        value = self.g.metadata.get(key)
        if isinstance(value, list) and value and all(v == value[0] for v in value):
            value = value[0]
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.error(suffix, f"expected integers, found {value!r}")
        else:
            value = self.g.require(key, int)
        if value < 1:
            raise self.error(suffix, f"must be at least 1, found {value}")
        return value


def _check_blocks(g: GGUFFile, block_count: int) -> None:
    """The ``blk.N.*`` tensors must cover blocks 0 .. block_count - 1 exactly."""
    found: set[int] = set()
    for name in g.tensors:
        match = _BLOCK_TENSOR.match(name)
        if match is None:
            continue
        index = int(match.group(1))
        if index >= block_count:
            raise GGUFError(
                g.path, f"tensor {name}",
                f"block {index} is beyond {g.architecture}.block_count = {block_count}",
            )
        found.add(index)
    if len(found) < block_count:
        # the first few gaps only: block_count may be absurd (2**32)
        missing = islice((i for i in range(block_count) if i not in found), 8)
        shown = ", ".join(map(str, missing)) + (", ..." if block_count - len(found) > 8 else "")
        raise GGUFError(
            g.path, f"key {g.architecture}.block_count",
            f"declares {block_count} blocks but the file has no tensors for block(s) {shown}",
        )


def _check_shapes(g: GGUFFile, d: ModelDescription) -> None:
    """Compare every tensor whose shape the facts determine with the shape(s) they allow."""
    hidden, vocab = d.embedding_length, d.vocab_size
    q, k = d.head_count * d.head_dim, d.head_count_kv * d.head_dim
    v, o = d.head_count_kv * d.value_head_dim, d.head_count * d.value_head_dim
    vector: list[Shape] = [((hidden,), "[embedding_length]")]
    top: dict[str, list[Shape]] = {
        "token_embd.weight": [((vocab, hidden), "[vocab_size, embedding_length]")],
        "output.weight": [((vocab, hidden), "[vocab_size, embedding_length]")],
        "output_norm.weight": vector,
    }
    per_block: dict[str, list[Shape]] = {
        "attn_norm.weight": vector,
        "ffn_norm.weight": vector,
        "post_attention_norm.weight": vector,
        "post_ffw_norm.weight": vector,
        "attn_q.weight": [((q, hidden), "[head_count * head_dim, embedding_length]")],
        "attn_k.weight": [((k, hidden), "[head_count_kv * head_dim, embedding_length]")],
        "attn_v.weight": [((v, hidden), "[head_count_kv * value_head_dim, embedding_length]")],
        "attn_qkv.weight": [(
            (q + k + v, hidden),
            "[head_count * head_dim + head_count_kv * (head_dim + value_head_dim), "
            "embedding_length]",
        )],
        "attn_output.weight": [((hidden, o), "[embedding_length, head_count * value_head_dim]")],
    }
    ff = d.feed_forward_length
    if ff is not None:
        per_block["ffn_gate.weight"] = [((ff, hidden), "[feed_forward_length, embedding_length]")]
        per_block["ffn_down.weight"] = [((hidden, ff), "[embedding_length, feed_forward_length]")]
        per_block["ffn_up.weight"] = [
            ((ff, hidden), "[feed_forward_length, embedding_length]"),
            # Phi-3 fuses gate and up into one ffn_up of twice the rows
            ((2 * ff, hidden), "[2 * feed_forward_length, embedding_length] (gate+up fused)"),
        ]
    for name, tensor in g.tensors.items():
        match = _BLOCK_TENSOR.match(name)
        allowed = per_block.get(name[match.end():]) if match else top.get(name)
        if allowed is None:
            continue
        if match and name.endswith(".ffn_up.weight") \
                and f"blk.{match.group(1)}.ffn_gate.weight" in g.tensors:
            allowed = allowed[:1]  # with a separate gate, up is not fused
        if any(tensor.shape == shape for shape, _ in allowed):
            continue
        raise GGUFError(
            g.path, f"tensor {name}",
            f"shape {list(tensor.shape)} does not match the architecture's facts: expected "
            + " or ".join(f"{list(shape)} = {formula}" for shape, formula in allowed),
        )
