"""How byte-level BPE vocabularies cut text into words before merging (``tokenizer.ggml.pre``).

The regular expressions are llama.cpp's (``llm_tokenizer_bpe``), applied one after the other
with each match kept as its own word and the text between matches kept too, which is what
``tokenizers``' ``Split(pattern, "isolated")`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

from vexel_core.errors import TokenizerError
from vexel_core.logs import get_logger

log = get_logger(__name__)

_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
# LLaMA 3's (?i:'s|...) written case by case, as llama.cpp does
_LLAMA3 = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


@dataclass(frozen=True)
class PreTokenizer:
    name: str
    patterns: tuple[str, ...]  # applied in order
    ignore_merges: bool = False  # a word that is itself a token is kept whole (LLaMA 3)
    add_bos: bool = False  # default when the file has no tokenizer.ggml.add_bos_token
    clean_spaces: bool = True  # decoding drops the space in " ." " ?" " 's" ... (llama.cpp)


_DEFAULT = PreTokenizer("default", (
    r"[\p{P}\$\+<=>\^~\|]+",
    _GPT2,
    r"\p{N}+",
    r"[0-9][0-9][0-9]",
))
_LLAMA3_PRE = PreTokenizer("llama3", (_LLAMA3,), ignore_merges=True, add_bos=True)
_GPT2_PRE = PreTokenizer("gpt-2", (_GPT2,))

# tokenizer.ggml.pre -> settings; several names share one setting in llama.cpp
PRE_TOKENIZERS: dict[str, PreTokenizer] = {
    "default": _DEFAULT,
    "llama3": _LLAMA3_PRE,
    "llama-v3": _LLAMA3_PRE,
    "llama-bpe": _LLAMA3_PRE,
    "gpt-2": _GPT2_PRE,
    "phi-2": _GPT2_PRE,
    "mpt": _GPT2_PRE,
    "olmo": _GPT2_PRE,
}


def pre_tokenizer_for(name: str | None, source: str) -> PreTokenizer:
    """The settings for *name*; no name means ``default``, as llama.cpp (which warns) does."""
    if name is None:
        log.warning("no tokenizer.ggml.pre in the file; splitting words with the default "
                    "pre-tokenizer, as llama.cpp does (output may be degraded)", source=source)
        return _DEFAULT
    try:
        return PRE_TOKENIZERS[name]
    except KeyError:
        raise TokenizerError(
            f"{source}: tokenizer.ggml.pre {name!r} is not supported; supported: "
            f"{', '.join(sorted(PRE_TOKENIZERS))}"
        ) from None
