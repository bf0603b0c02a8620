"""The vocabulary in a GGUF file's metadata, read the way llama.cpp reads it.

`Vocab.from_metadata` checks every ``tokenizer.*`` key it uses and applies llama.cpp's
defaults and fix-ups (``llama-vocab.cpp``, ``llama_vocab::impl::load``): default special ids
per model, ``add_bos`` per pre-tokenizer, tokens that llama.cpp promotes to control because
their text says "end of turn", the end-of-generation set, Phi-3's right-stripped specials.
Building the actual tokenizer from it is `vexel_core.tokenizer.build`'s job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from vexel_core.errors import TokenizerError
from vexel_core.tokenizer.pretokenizers import PreTokenizer, pre_tokenizer_for


class TokenType(IntEnum):
    """``tokenizer.ggml.token_type`` values (llama.cpp's ``llama_token_type``)."""

    UNDEFINED = 0
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


SPM = "llama"  # SentencePiece: byte fallback, ▁ for spaces, merges ranked by score
BPE = "gpt2"  # byte-level BPE with explicit merges
SUPPORTED_MODELS = {SPM: "SentencePiece (LLaMA 2, Mistral, Phi-3, Gemma)",
                    BPE: "byte-level BPE (LLaMA 3, Phi-2)"}

# Token texts llama.cpp treats as end of generation whatever the metadata says.
EOG_TEXTS = frozenset({
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>",
    "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>",
    "<｜end▁of▁sentence｜>",
})
# Texts llama.cpp takes as the EOT / EOM token when the metadata names none.
EOT_TEXTS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
             "<|end_of_text|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<end_of_utterance>")
EOM_TEXTS = ("<|eom_id|>",)
# Fill-in-the-middle tokens that llama.cpp also counts as end of generation.
FIM_EOG_TEXTS = {
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}

# Default special ids when the metadata has none (llama.cpp's, per model)
_DEFAULT_IDS: dict[str, dict[str, int | None]] = {
    SPM: {"bos": 1, "eos": 2, "unk": 0},
    BPE: {"bos": 11, "eos": 11, "unk": None},
}
_ID_KEYS = {
    "bos": "tokenizer.ggml.bos_token_id",
    "eos": "tokenizer.ggml.eos_token_id",
    "eot": "tokenizer.ggml.eot_token_id",
    "eom": "tokenizer.ggml.eom_token_id",
    "unk": "tokenizer.ggml.unknown_token_id",
    "pad": "tokenizer.ggml.padding_token_id",
    "fim_pad": "tokenizer.ggml.fim_pad_token_id",
    "fim_rep": "tokenizer.ggml.fim_rep_token_id",
    "fim_sep": "tokenizer.ggml.fim_sep_token_id",
}


@dataclass(frozen=True)
class Vocab:
    """Everything the tokenizer needs, checked and with llama.cpp's defaults applied."""

    source: str
    model: str  # SPM or BPE
    tokens: tuple[str, ...]
    types: tuple[TokenType, ...]  # after llama.cpp's promotions to CONTROL
    scores: tuple[float, ...]
    merges: tuple[tuple[str, str], ...]  # BPE only, in rank order
    pre: PreTokenizer | None  # BPE only
    special_ids: Mapping[str, int | None]  # bos, eos, eot, eom, unk, pad
    add_bos: bool
    add_eos: bool
    add_space_prefix: bool  # SPM: a space before text at the start and after a special token
    eog_ids: frozenset[int]
    rstrip_ids: frozenset[int]  # specials that swallow the whitespace after them (Phi-3)
    chat_template: str | None

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def clean_spaces(self) -> bool:
        """Whether decoding removes the space before ``?!.,`` and some apostrophes."""
        return self.pre.clean_spaces if self.pre is not None else False

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any], source: str = "<metadata>") -> Vocab:
        read = _Reader(metadata, source)
        model = read.value("tokenizer.ggml.model", str)
        if model not in SUPPORTED_MODELS:
            supported = "; ".join(f"{k} ({v})" for k, v in SUPPORTED_MODELS.items())
            raise TokenizerError(
                f"{source}: tokenizer.ggml.model {model!r} is not supported; supported: {supported}"
            )
        tokens = read.list("tokenizer.ggml.tokens", str)
        if not tokens:
            raise TokenizerError(f"{source}: tokenizer.ggml.tokens is empty")
        n = len(tokens)
        # llama.cpp renames empty tokens rather than refusing the file
        tokens = [t if t else f"[EMPTY_{i}]" for i, t in enumerate(tokens)]
        _check_unique(tokens, source)
        scores = read.list("tokenizer.ggml.scores", (float, int), default=[0.0] * n, length=n)
        raw_types = read.list("tokenizer.ggml.token_type", int, default=[1] * n, length=n)
        types = [TokenType(t) if t in TokenType._value2member_map_ else TokenType.UNDEFINED
                 for t in raw_types]

        merges: list[tuple[str, str]] = []
        pre: PreTokenizer | None = None
        pre_name = read.value("tokenizer.ggml.pre", str, default=None)
        if model == BPE:
            # llama.cpp splits at the first space after the first character (a merge may
            # start with one); a merge without a space can never apply and is dropped
            merges = [(m[:cut], m[cut + 1:]) for m in read.list("tokenizer.ggml.merges", str)
                      if (cut := m.find(" ", 1)) > 0]
            pre = pre_tokenizer_for(pre_name, source)
            add_bos, add_space_prefix = pre.add_bos, False
        else:
            add_bos, add_space_prefix = True, True
        add_space_prefix = read.value("tokenizer.ggml.add_space_prefix", bool,
                                      default=add_space_prefix)
        add_bos = read.value("tokenizer.ggml.add_bos_token", bool, default=add_bos)
        add_eos = read.value("tokenizer.ggml.add_eos_token", bool, default=False)

        ids = _special_ids(read, model, n)
        for flag, which in ((add_bos, "bos"), (add_eos, "eos")):
            if flag and ids[which] is None:
                raise TokenizerError(
                    f"{source}: tokenizer.ggml.add_{which}_token is true but the file has no "
                    f"valid tokenizer.ggml.{which}_token_id"
                )
        eog = _end_of_generation(tokens, types, ids)
        _check_byte_tokens(tokens, types, source)
        name = read.value("general.name", str, default="").lower()
        rstrip = _phi3_rstrip(tokens, types) if "phi3" in name or "phi-3" in name else set()
        return cls(
            source=source, model=model, tokens=tuple(tokens), types=tuple(types),
            scores=tuple(float(s) for s in scores), merges=tuple(merges), pre=pre,
            special_ids=ids, add_bos=add_bos, add_eos=add_eos, add_space_prefix=add_space_prefix,
            eog_ids=frozenset(eog), rstrip_ids=frozenset(rstrip),
            chat_template=read.value("tokenizer.chat_template", str, default=None),
        )


class _Reader:
    """Typed access to metadata keys; a wrong type is a `TokenizerError` naming the key."""

    _MISSING = object()

    def __init__(self, metadata: Mapping[str, Any], source: str) -> None:
        self.metadata = metadata
        self.source = source

    def value(self, key: str, kind: type | tuple[type, ...], default: Any = _MISSING) -> Any:
        if key not in self.metadata:
            if default is self._MISSING:
                raise TokenizerError(f"{self.source}: metadata has no {key}; it is needed "
                                     "to build the tokenizer")
            return default
        value = self.metadata[key]
        # bool is an int in Python: do not accept True for an id, nor 1 for a flag
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise TokenizerError(f"{self.source}: {key} is {value!r}; expected "
                                 f"{_kind_name(kind)}")
        return value

    def list(self, key: str, kind: type | tuple[type, ...], default: Any = _MISSING,
             length: int | None = None) -> list[Any]:
        value = self.value(key, (list, tuple), default)
        bad = next((v for v in value if not isinstance(v, kind) or isinstance(v, bool)), None)
        if bad is not None:
            raise TokenizerError(f"{self.source}: {key} holds {bad!r}; expected a list of "
                                 f"{_kind_name(kind)}")
        if length is not None and len(value) < length:
            raise TokenizerError(f"{self.source}: {key} has {len(value)} entries for "
                                 f"{length} tokens")
        return list(value)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _check_unique(tokens: list[str], source: str) -> None:
    seen: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token in seen:
            raise TokenizerError(f"{source}: tokenizer.ggml.tokens has {token!r} twice "
                                 f"(ids {seen[token]} and {i})")
        seen[token] = i


_BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")


def _check_byte_tokens(tokens: list[str], types: list[TokenType], source: str) -> None:
    """A byte token stands for the byte its text spells, ``<0x41>`` for ``A``; llama.cpp
    parses the two digits without checking them, so a malformed one would decode to a byte
    nobody wrote."""
    for i, (token, kind) in enumerate(zip(tokens, types, strict=True)):
        if kind == TokenType.BYTE and not _BYTE_TOKEN.fullmatch(token):
            raise TokenizerError(
                f"{source}: tokenizer.ggml.tokens[{i}] is {token!r}, a byte token by "
                "tokenizer.ggml.token_type; expected '<0xNN>' with two hex digits"
            )


def _special_ids(read: _Reader, model: str, n: int) -> dict[str, int | None]:
    """Special ids from metadata over the model's defaults; out-of-range ones as llama.cpp."""
    ids: dict[str, int | None] = {}
    for which, key in _ID_KEYS.items():
        default = _DEFAULT_IDS[model].get(which)
        if default is not None and default >= n:
            default = None
        value = read.value(key, int, default=default)
        # llama.cpp warns about an out-of-range id and keeps the default
        ids[which] = value if value is not None and 0 <= value < n else default
    return ids


def _end_of_generation(tokens: list[str], types: list[TokenType],
                       ids: dict[str, int | None]) -> set[int]:
    """llama.cpp's EOG set; promotes EOG-looking tokens to CONTROL in *types* as it does."""
    by_text = {t: i for i, t in enumerate(tokens)}

    # Tokens found by their text (not named by the metadata) become CONTROL, as in llama.cpp.
    promoted = {i for i, t in enumerate(tokens) if t in EOG_TEXTS}
    searched = {"eot": EOT_TEXTS, "eom": EOM_TEXTS, **FIM_EOG_TEXTS}
    for which, texts in searched.items():
        if ids[which] is None:
            ids[which] = next((by_text[t] for t in texts if t in by_text), None)
            if ids[which] is not None:
                promoted.add(ids[which])  # type: ignore[arg-type]
    for i in promoted:
        if types[i] != TokenType.UNKNOWN:  # llama.cpp ORs CONTROL in; UNKNOWN acts the same
            types[i] = TokenType.CONTROL
    named = {ids[w] for w in ("eos", "eot", "eom", *FIM_EOG_TEXTS)}
    return {i for i, t in enumerate(tokens) if t in EOG_TEXTS} | {i for i in named if i is not None}


def _phi3_rstrip(tokens: list[str], types: list[TokenType]) -> set[int]:
    """llama.cpp right-strips Phi-3's special tokens, except <unk>, <s> and <|endoftext|>."""
    special = {TokenType.CONTROL, TokenType.USER_DEFINED, TokenType.UNKNOWN}
    ids = {i for i, t in enumerate(types) if t in special}
    ids |= {i for i, t in enumerate(tokens) if t == "</s>"}
    return {i for i in ids if tokens[i] not in ("<unk>", "<s>", "<|endoftext|>")}
