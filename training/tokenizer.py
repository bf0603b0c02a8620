"""The byte-level BPE tokenizer of vexel-tiny, trained with the `tokenizers` library.

It is GPT-2's scheme: text is split by GPT-2's regular expression, every byte is mapped to a
printable character, and BPE merges run inside each piece. A GGUF file can therefore declare
``tokenizer.ggml.model = "gpt2"`` and ``tokenizer.ggml.pre = "gpt-2"`` (llama.cpp spells
GPT-2's pre-tokenizer so and refuses "gpt2"), and llama.cpp tokenizes
exactly as `tokenizers` does. ``<|endoftext|>`` is the one control token: it separates
documents in training and ends generation. No BOS is added (code needs none).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gguf import TokenType
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from vexel_core.errors import TokenizerError

EOS_TOKEN = "<|endoftext|>"


@dataclass(frozen=True)
class GGUFVocab:
    """What the ``tokenizer.ggml.*`` keys of a GGUF file hold."""

    tokens: list[str]
    token_types: list[int]
    merges: list[str]  # "left right", in merge order
    eos_id: int


def _byte_level(model: models.BPE) -> Tokenizer:
    """The one tokenizer pipeline, used for training and for rebuilding from a GGUF vocab."""
    tokenizer = Tokenizer(model)
    # add_prefix_space=False: "def" at the start of a file stays one token, as in GPT-2's
    # llama.cpp handling (it adds no prefix space either).
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> Tokenizer:
    """Train byte-level BPE on *texts*; ``<|endoftext|>`` gets id 0."""
    min_size = len(pre_tokenizers.ByteLevel.alphabet()) + 1
    if vocab_size < min_size:
        raise TokenizerError(f"vocab_size must be at least {min_size} (256 bytes + EOS)")
    tokenizer = _byte_level(models.BPE())
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS_TOKEN],
        # Every byte is in the vocabulary, so any input can be tokenized.
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        min_frequency=2,
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return tokenizer


def to_gguf_vocab(tokenizer: Tokenizer) -> GGUFVocab:
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    if [i for _, i in by_id] != list(range(len(by_id))):
        raise TokenizerError("token ids are not contiguous from 0")
    tokens = [t for t, _ in by_id]
    special = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
    token_types = [
        int(TokenType.CONTROL) if t in special else int(TokenType.NORMAL) for t in tokens
    ]
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    # tokenizers >= 0.20 saves merges as pairs; older versions as "a b" strings.
    merges = [m if isinstance(m, str) else f"{m[0]} {m[1]}" for m in merges]
    if EOS_TOKEN not in vocab:
        raise TokenizerError(f"the tokenizer has no {EOS_TOKEN} token")
    return GGUFVocab(tokens, token_types, merges, vocab[EOS_TOKEN])


def from_gguf_vocab(tokens: Sequence[str], merges: Sequence[str]) -> Tokenizer:
    """Rebuild the `tokenizers` tokenizer from the vocabulary stored in a GGUF file."""
    pairs = []
    for merge in merges:
        left, sep, right = merge.partition(" ")
        if not sep:
            raise TokenizerError(f"merge {merge!r} is not two tokens separated by a space")
        pairs.append((left, right))
    vocab = {tok: i for i, tok in enumerate(tokens)}
    tokenizer = _byte_level(models.BPE(vocab=vocab, merges=pairs))
    if EOS_TOKEN in vocab:
        tokenizer.add_special_tokens([EOS_TOKEN])
    return tokenizer


def encode_documents(tokenizer: Tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Token ids of each text (in parallel), without special tokens."""
    return [enc.ids for enc in tokenizer.encode_batch(list(texts), add_special_tokens=False)]
