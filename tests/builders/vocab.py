"""Small, realistic vocabularies as GGUF metadata, for tests and random-weight model files.

Each builder returns a dict of ``tokenizer.*`` keys with plain Python values, exactly what a
GGUF reader hands back, so a vocabulary goes anywhere metadata goes::

    vocab = spm_vocab()                       # LLaMA-2 / Mistral style SentencePiece
    vocab = bpe_vocab()                       # LLaMA-3 style byte-level BPE
    vocab = {**bpe_vocab(), "tokenizer.chat_template": CHATML_TEMPLATE}

    writer = gguf.GGUFWriter(path, "llama")
    add_vocab(writer, vocab)                  # or pass the dict to write_gguf's metadata
    ...
    write_vocab_only_gguf(path, vocab)        # a file llama.cpp opens with vocab_only=True

The vocabularies are trained with the ``tokenizers`` library on a shipped corpus at call time
(a few milliseconds), so they hold real merges and real gaps: some CJK characters and most
emoji are not in them and go through byte fallback (SPM) or byte tokens (BPE).
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gguf import GGUFWriter
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

from vexel_core.gguf.writer import finish, gguf_value

CORPUS_PATH = Path(__file__).resolve().parent.parent / "data" / "tokenizer_corpus.txt"

# GGUF token types (llama.cpp's llama_token_type)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# LLaMA 3's pre-tokenizer, as llama.cpp spells it (case-insensitive contractions written out)
LLAMA3_SPLIT = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# The special tokens of LLaMA 3, in their order there (ids 128000..128010 in the real vocab).
LLAMA3_SPECIALS = (
    "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
    "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>",
)

# Meta's LLaMA-3 instruct template (tokenizer_config.json of Meta-Llama-3-8B-Instruct).
LLAMA3_CHAT_TEMPLATE = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"
    "{% endif %}"
)

# ChatML as fine-tunes ship it (OpenHermes, Qwen): no BOS, <|im_start|>role\n...<|im_end|>\n
CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' "
    "+ message['content'] + '<|im_end|>' + '\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


@functools.lru_cache(maxsize=1)
def default_corpus() -> str:
    """The text the vocabularies are trained on (the corpus the tokenizer tests ship)."""
    return CORPUS_PATH.read_text(encoding="utf-8")


# Tokens a fine-tune appends to the LLaMA-2 vocabulary: ChatML's, and a tool-call pair.
SPM_ADDED = (("<|im_start|>", CONTROL), ("<|im_end|>", CONTROL),
             ("<tool_call>", USER_DEFINED), ("</tool_call>", USER_DEFINED))
# Phi-3's additions (ids 32000.. in the real vocabulary; EOS is <|endoftext|>).
PHI3_ADDED = (("<|endoftext|>", CONTROL), ("<|assistant|>", CONTROL), ("<|system|>", CONTROL),
              ("<|end|>", CONTROL), ("<|user|>", CONTROL))


def spm_vocab(
    size: int = 600,
    corpus: str | None = None,
    *,
    added: tuple[tuple[str, int], ...] = SPM_ADDED,
    chat_template: str | None = None,
    add_space_prefix: bool | None = None,
) -> dict[str, Any]:
    """A LLaMA-2 style SentencePiece vocabulary (``tokenizer.ggml.model = llama``).

    Layout as in LLaMA 2: ``<unk>`` 0, ``<s>`` 1, ``</s>`` 2, the 256 byte-fallback tokens
    ``<0x00>``..``<0xFF>``, then ``▁``-prefixed pieces by descending score (the score is the
    negated merge rank, as SentencePiece BPE writes it; runs of ``▁`` included for code), then
    the single characters, then the *added* (text, token type) pairs a fine-tune appends
    (default: ChatML's ``<|im_start|>`` and ``<|im_end|>`` as control tokens, ``<tool_call>``
    and ``</tool_call>`` as user-defined ones; `PHI3_ADDED` for Phi-3).
    Newlines and tabs are not pieces: they go through byte fallback as in LLaMA 2.
    About *size* - 270 pieces are learned from *corpus*.
    """
    text = default_corpus() if corpus is None else corpus
    trainer = Tokenizer(models.BPE())
    # Whitespace other than spaces is isolated so that no piece holds it, then spaces
    # become ▁ and split words the way SentencePiece sees them.
    trainer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"[\r\n\t]"), behavior="isolated"),
        pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True),
    ])
    chars = sorted({c for c in text.replace(" ", "▁") if c not in "\r\n\t"})
    n_merges = max(size - len(chars) - 262, 16)
    trainer.train_from_iterator(
        [text],
        trainers.BpeTrainer(vocab_size=len(chars) + n_merges, limit_alphabet=len(chars) * 3 // 4,
                            show_progress=False),
    )
    learned = _trained_model(trainer)
    # limit_alphabet leaves out the rarest characters: they become byte-fallback cases.
    alphabet = [c for c in learned["vocab"] if len(c) == 1 and c not in "\r\n\t"]
    pieces = [a + b for a, b in learned["merges"]]
    # Runs of ▁ for indented code, interleaved with the learned pieces as LLaMA 2 has them.
    for rank, run in ((0, "▁▁"), (8, "▁▁▁▁"), (40, "▁▁▁"), (90, "▁▁▁▁▁▁▁▁")):
        if run not in pieces:
            pieces.insert(min(rank, len(pieces)), run)

    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [UNKNOWN, CONTROL, CONTROL] + [BYTE] * 256
    scores = [0.0] * len(tokens)
    for rank, piece in enumerate(pieces):
        tokens.append(piece)
        types.append(NORMAL)
        scores.append(-float(rank))
    for i, char in enumerate(c for c in alphabet if c not in pieces):
        tokens.append(char)
        types.append(NORMAL)
        scores.append(-float(len(pieces) + i))
    for text, kind in added:
        tokens.append(text)
        types.append(kind)
        scores.append(0.0)

    vocab: dict[str, Any] = {
        "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.scores": scores,
        "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.unknown_token_id": 0,
        "tokenizer.ggml.add_bos_token": True,
        "tokenizer.ggml.add_eos_token": False,
    }
    if add_space_prefix is not None:
        vocab["tokenizer.ggml.add_space_prefix"] = add_space_prefix
    if chat_template is not None:
        vocab["tokenizer.chat_template"] = chat_template
    return vocab


def bpe_vocab(
    size: int = 1000,
    corpus: str | None = None,
    *,
    pre: str = "llama-bpe",
    chat_template: str | None = LLAMA3_CHAT_TEMPLATE,
) -> dict[str, Any]:
    """A LLaMA-3 style byte-level BPE vocabulary (``tokenizer.ggml.model = gpt2``).

    The 256 byte symbols, *size* - 256 merges learned on *corpus* with LLaMA 3's
    pre-tokenizer, then LLaMA 3's special tokens as control tokens: BOS
    ``<|begin_of_text|>``, EOS ``<|end_of_text|>``, EOT ``<|eot_id|>``, EOM ``<|eom_id|>``.
    *pre* is written as ``tokenizer.ggml.pre``; the merges are always trained with LLaMA 3's
    split, which is fine for the other pre-tokenizers too (they only cut words differently).
    """
    text = default_corpus() if corpus is None else corpus
    trainer = Tokenizer(models.BPE())
    trainer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer.train_from_iterator(
        [text],
        trainers.BpeTrainer(vocab_size=size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                            show_progress=False),
    )
    learned = _trained_model(trainer)
    by_id = sorted(learned["vocab"].items(), key=lambda item: item[1])
    tokens = [token for token, _ in by_id] + list(LLAMA3_SPECIALS)
    types = [NORMAL] * len(by_id) + [CONTROL] * len(LLAMA3_SPECIALS)
    first_special = len(by_id)

    def special(name: str) -> int:
        return first_special + LLAMA3_SPECIALS.index(name)

    vocab: dict[str, Any] = {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": pre,
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.merges": [f"{a} {b}" for a, b in learned["merges"]],
        "tokenizer.ggml.bos_token_id": special("<|begin_of_text|>"),
        "tokenizer.ggml.eos_token_id": special("<|end_of_text|>"),
        "tokenizer.ggml.eot_token_id": special("<|eot_id|>"),
        "tokenizer.ggml.eom_token_id": special("<|eom_id|>"),
        "tokenizer.ggml.padding_token_id": special("<|finetune_right_pad_id|>"),
        "tokenizer.ggml.add_bos_token": True,
    }
    if chat_template is not None:
        vocab["tokenizer.chat_template"] = chat_template
    return vocab


def _trained_model(tokenizer: Tokenizer) -> dict[str, Any]:
    """The trained BPE's vocab (token -> id) and merges as (left, right) pairs."""
    model = json.loads(tokenizer.to_str())["model"]
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return {"vocab": model["vocab"], "merges": merges}


def add_vocab(writer: GGUFWriter, vocab: Mapping[str, Any]) -> None:
    """Write a vocabulary's keys into *writer*, with the GGUF types llama.cpp expects."""
    for key, value in vocab.items():
        typed = gguf_value(key, value)
        writer.add_key_value(key, typed.value, typed.type, sub_type=typed.sub_type)


# The llama hyper-parameters llama.cpp reads before it looks at the vocabulary.
VOCAB_ONLY_LLAMA_KEYS: dict[str, Any] = {
    "llama.context_length": 2048,
    "llama.embedding_length": 64,
    "llama.block_count": 1,
    "llama.feed_forward_length": 128,
    "llama.attention.head_count": 4,
    "llama.attention.head_count_kv": 4,
    "llama.rope.dimension_count": 16,
    "llama.attention.layer_norm_rms_epsilon": 1e-5,
}


def write_vocab_only_gguf(
    path: str | os.PathLike[str], vocab: Mapping[str, Any], *, name: str = "vocab-test"
) -> Path:
    """A GGUF with architecture llama, no tensors and *vocab*: for ``Llama(path, vocab_only=True)``.

    *name* is ``general.name``; llama.cpp changes some token handling by name (Phi-3).
    """
    writer = GGUFWriter(os.fspath(path), "llama")
    writer.add_name(name)
    add_vocab(writer, VOCAB_ONLY_LLAMA_KEYS)
    add_vocab(writer, vocab)
    finish(writer)
    return Path(path)


class LlamaCppVocab:
    """llama.cpp's answers for a vocabulary file: the reference the tokenizer tests compare to.

    Decoding goes through the C function ``llama_detokenize`` (what llama.cpp itself uses),
    not ``Llama.detokenize``, which is llama-cpp-python's own loop with a different rule for
    the leading space.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self.llama = llama_cpp.Llama(os.fspath(path), vocab_only=True, verbose=False)
        self.vocab = llama_cpp.llama_model_get_vocab(self.llama.model)
        self.size = llama_cpp.llama_vocab_n_tokens(self.vocab)

    def tokenize(self, text: str, *, add_special: bool = True, parse_special: bool = True
                 ) -> list[int]:
        return list(self.llama.tokenize(text.encode(), add_bos=add_special, special=parse_special))

    def detokenize(self, ids: list[int], *, special: bool) -> bytes:
        """``llama_detokenize(remove_special=False, unparse_special=special)``."""
        lib = self._lib
        tokens = (lib.llama_token * max(len(ids), 1))(*ids)
        size = 64 + 64 * len(ids)
        buf = (ctypes.c_char * size)()
        n = lib.llama_detokenize(self.vocab, tokens, len(ids), buf, size, False, special)
        assert n >= 0, f"llama_detokenize needs {-n} bytes"
        return bytes(buf[:n])

    def piece(self, token_id: int, *, special: bool) -> bytes:
        """``llama_token_to_piece`` with no space stripped: what llama.cpp streams."""
        buf = (ctypes.c_char * 256)()
        n = self._lib.llama_token_to_piece(self.vocab, token_id, buf, 256, 0, special)
        assert n >= 0
        return bytes(buf[:n])

    def eog_ids(self) -> set[int]:
        return {i for i in range(self.size) if self._lib.llama_vocab_is_eog(self.vocab, i)}

    @property
    def bos(self) -> int:
        return int(self._lib.llama_vocab_bos(self.vocab))

    @property
    def eos(self) -> int:
        return int(self._lib.llama_vocab_eos(self.vocab))

    @property
    def add_bos(self) -> bool:
        return bool(self._lib.llama_vocab_get_add_bos(self.vocab))


def llama_cpp_chat(template: str, messages: list[dict[str, str]], *,
                   add_generation_prompt: bool = True) -> str:
    """llama.cpp's own rendering of a template it recognises (llama_chat_apply_template).

    llama.cpp does not run Jinja here: it detects the template family (LLaMA 3, ChatML, ...)
    from marker strings and formats the messages with its built-in code.
    """
    import llama_cpp

    chat = (llama_cpp.llama_chat_message * len(messages))(*[
        llama_cpp.llama_chat_message(m["role"].encode(), m["content"].encode())
        for m in messages
    ])
    size = 1 << 16
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_chat_apply_template(template.encode(), chat, len(messages),
                                            add_generation_prompt, buf, size)
    assert 0 <= n <= size, f"llama.cpp does not recognise the template (returned {n})"
    return buf.raw[:n].decode()
