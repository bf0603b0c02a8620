"""The streaming detokenizer: the same text as decoding at once, never a broken character.

`decode` itself is checked against llama.cpp in test_tokenizer.py; the completion mode is
checked here against llama.cpp's per-token pieces, which is what it streams.
"""

from __future__ import annotations

import random

import pytest

from tests.builders.vocab import (
    LlamaCppVocab,
    bpe_vocab,
    default_corpus,
    spm_vocab,
    write_vocab_only_gguf,
)
from vexel_core.errors import TokenizerError
from vexel_core.tokenizer import StreamingDetokenizer, Tokenizer


@pytest.fixture(scope="module", params=["spm", "llama-bpe"])
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> tuple[Tokenizer, LlamaCppVocab]:
    vocab = spm_vocab() if request.param == "spm" else bpe_vocab()
    path = write_vocab_only_gguf(tmp_path_factory.mktemp("vocab") / "vocab.gguf", vocab)
    return Tokenizer.from_metadata(vocab, str(path)), LlamaCppVocab(path)


def _stream(tok: Tokenizer, ids: list[int], **options: bool) -> list[str]:
    detok = StreamingDetokenizer(tok, **options)
    return [detok.push(i) for i in ids] + [detok.flush()]


def _check(tok: Tokenizer, ids: list[int], seed: int) -> None:
    for skip_special in (False, True):
        deltas = _stream(tok, ids, skip_special=skip_special)
        full = tok.decode(ids, skip_special=skip_special)
        assert "".join(deltas) == full, (seed, ids, deltas)
        if "\ufffd" not in full:
            assert not any("\ufffd" in d for d in deltas), (seed, ids, deltas)


def test_random_ids_stream_to_the_decoded_text(pair: tuple[Tokenizer, LlamaCppVocab]) -> None:
    tok, _ = pair
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for _ in range(600):
        _check(tok, [rng.randrange(tok.vocab_size) for _ in range(rng.randrange(1, 24))], seed)


def test_encoded_text_streams_without_broken_characters(
        pair: tuple[Tokenizer, LlamaCppVocab]) -> None:
    tok, _ = pair
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    corpus = default_corpus()
    for _ in range(200):
        start = rng.randrange(len(corpus))
        ids = tok.encode(corpus[start:start + rng.randrange(1, 120)], add_special=rng.random() < .5)
        _check(tok, ids, seed)


def test_space_clean_up_streams_exactly() -> None:
    """Byte-level BPE decoding removes spaces before . , ? ! 's 're ...: the stream must hold a
    space back until it knows, and no longer than needed."""
    tok = Tokenizer.from_metadata(bpe_vocab())
    assert tok.vocab.clean_spaces
    pieces = [" ", "'", "s", "m", "r", "e", "v", "re", "ve", "t", ".", ",", "?", "!", "a", " '",
              " ,", "x "]
    ids = sorted({i for p in pieces for i in tok.encode(p, add_special=False)})
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for _ in range(1500):
        _check(tok, [rng.choice(ids) for _ in range(rng.randrange(1, 16))], seed)
    hello = tok.encode("Hello , world", add_special=False)
    assert tok.decode(hello) == "Hello, world"
    deltas = _stream(tok, hello)
    assert deltas[0] == "Hello" and "".join(deltas) == "Hello, world"


def test_a_character_split_over_byte_tokens_comes_whole(
        pair: tuple[Tokenizer, LlamaCppVocab]) -> None:
    tok, _ = pair
    char = next(c for c in "🦙🧪⚗🜁" if len(tok.encode(c, add_special=False)) >= 3)
    ids = tok.encode(char, add_special=False)
    deltas = _stream(tok, ids)
    assert all(d == "" for d in deltas[:-2]), deltas  # nothing until the last byte arrives
    assert "".join(deltas).strip() == char
    # an unfinished character is held back, then flushed as one replacement character
    detok = StreamingDetokenizer(tok)
    assert [detok.push(i) for i in ids[:-1]] == [""] * (len(ids) - 1)
    assert detok.flush().endswith("\ufffd")


def test_completion_streams_what_llama_cpp_streams(pair: tuple[Tokenizer, LlamaCppVocab]) -> None:
    """A generation's text is llama.cpp's token pieces as they are: the first token keeps its
    leading space and nothing is cleaned up."""
    tok, ref = pair
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for _ in range(300):
        ids = [rng.randrange(tok.vocab_size) for _ in range(rng.randrange(1, 20))]
        for skip_special in (False, True):
            want = b"".join(ref.piece(i, special=not skip_special) for i in ids)
            got = _stream(tok, ids, skip_special=skip_special, completion=True)
            assert "".join(got) == want.decode("utf-8", "replace"), (seed, ids)
    # SPM encodes "world" as "▁world"; byte-level BPE needs the space written out
    world = tok.encode("world" if tok.vocab.add_space_prefix else " world", add_special=False)
    assert "".join(_stream(tok, world, completion=True)) == " world"
    assert "".join(_stream(tok, world)) == tok.decode(world)


def test_out_of_range_id_is_a_clear_error() -> None:
    detok = StreamingDetokenizer(Tokenizer.from_metadata(spm_vocab()))
    with pytest.raises(TokenizerError, match="token id 100000 is out of range"):
        detok.push(100000)
