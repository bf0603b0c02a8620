"""Turning a `Vocab` into a HuggingFace ``tokenizers.Tokenizer`` that splits text as llama.cpp.

SentencePiece (SPM) vocabularies carry scores, not merges. llama.cpp's SPM tokenizer starts
from single characters and repeatedly joins the adjacent pair whose concatenation is the token
with the highest score (leftmost on ties), then falls back to ``<0xNN>`` byte tokens for
characters the vocabulary lacks. That is BPE whose merge list holds, for every token, each
split into two tokens, ranked by the token's score: `spm_merges` builds that list and
``tokenizers``' BPE model (with byte fallback) runs it. Text gets a leading space (``▁``) at
the start and after every special token (``add_space_prefix``), and spaces become ``▁``.

Byte-level BPE vocabularies carry their merges; words are cut by the pre-tokenizer the file
names, then bytes are mapped to printable characters as GPT-2 does.

Control and unknown-type tokens are "special": matched as wholes in the text only when the
caller asks to parse specials (``encode_special_tokens`` off). User-defined tokens are always
matched as wholes, as llama.cpp does.
"""

from __future__ import annotations

from tokenizers import AddedToken, Regex, Tokenizer, models, normalizers, pre_tokenizers

from vexel_core.errors import TokenizerError
from vexel_core.tokenizer.vocab import SPM, TokenType, Vocab

SPACE_MARK = "\u2581"  # ▁, SentencePiece's visible space


def build_hf_tokenizer(vocab: Vocab, *, parse_special: bool) -> Tokenizer:
    """A ``tokenizers.Tokenizer`` for *vocab*; *parse_special* matches control tokens in text."""
    ids = {token: i for i, token in enumerate(vocab.tokens)}
    try:
        if vocab.model == SPM:
            unk = vocab.special_ids["unk"]
            tokenizer = Tokenizer(models.BPE(
                ids, spm_merges(vocab), byte_fallback=True,
                unk_token=vocab.tokens[unk] if unk is not None else None,
            ))
            steps: list[normalizers.Normalizer] = []
            if vocab.add_space_prefix:
                # normalizers run on each piece of text between special tokens: exactly the
                # places llama.cpp prefixes a space
                steps.append(normalizers.Prepend(SPACE_MARK))
            steps.append(normalizers.Replace(" ", SPACE_MARK))
            tokenizer.normalizer = normalizers.Sequence(steps)
        else:
            assert vocab.pre is not None
            tokenizer = Tokenizer(models.BPE(ids, list(vocab.merges),
                                             ignore_merges=vocab.pre.ignore_merges))
            splits = [pre_tokenizers.Split(Regex(p), behavior="isolated")
                      for p in vocab.pre.patterns]
            tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
                [*splits, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
            )
    except Exception as err:  # tokenizers reports a merge of unknown tokens as a bare Exception
        raise TokenizerError(f"{vocab.source}: cannot build the {vocab.model} tokenizer: {err}") \
            from None

    special, user_defined = [], []
    for i, (token, kind) in enumerate(zip(vocab.tokens, vocab.types, strict=True)):
        rstrip = i in vocab.rstrip_ids
        if kind in (TokenType.CONTROL, TokenType.UNKNOWN):
            special.append(AddedToken(token, special=True, normalized=False, rstrip=rstrip))
        elif kind == TokenType.USER_DEFINED:
            user_defined.append(AddedToken(token, special=False, normalized=False, rstrip=rstrip))
    tokenizer.add_special_tokens(special)
    tokenizer.add_tokens(user_defined)
    tokenizer.encode_special_tokens = not parse_special
    return tokenizer


def spm_merges(vocab: Vocab) -> list[tuple[str, str]]:
    """Every split of every token into two tokens, highest-scoring result first.

    Ties in score keep token-id order; llama.cpp would prefer the leftmost pair instead, which
    only differs for two different tokens of equal score competing for the same characters
    (SentencePiece gives every piece its own score).
    """
    ids = {token: i for i, token in enumerate(vocab.tokens)}
    by_score = sorted(range(vocab.size), key=lambda i: (-vocab.scores[i], i))
    merges = []
    for i in by_score:
        token = vocab.tokens[i]
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in ids and right in ids:
                merges.append((left, right))
    return merges
