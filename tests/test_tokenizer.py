"""The tokenizer against llama.cpp on the same GGUF file: ids, decoded text, special tokens.

Vocabularies are trained at test time (tests/builders/vocab.py) on the shipped corpus
(tests/data/tokenizer_corpus.txt), written into vocab-only GGUF files and opened by
llama.cpp; every expectation below is llama.cpp's answer, not ours.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.builders.vocab import (
    CONTROL,
    NORMAL,
    PHI3_ADDED,
    LlamaCppVocab,
    bpe_vocab,
    default_corpus,
    spm_vocab,
    write_vocab_only_gguf,
)
from vexel_core.cli import main as vexel_main
from vexel_core.errors import TokenizerError
from vexel_core.gguf.reader import GGUFFile
from vexel_core.tokenizer import Tokenizer


def _shuffled_scores() -> dict[str, Any]:
    """SPM with scores unrelated to token order: the score alone must rank merges."""
    vocab = spm_vocab()
    scores = list(vocab["tokenizer.ggml.scores"])
    normal = [i for i, t in enumerate(vocab["tokenizer.ggml.token_type"]) if t == NORMAL]
    permuted = [scores[i] for i in normal]
    random.Random(7).shuffle(permuted)
    for i, score in zip(normal, permuted, strict=True):
        scores[i] = score
    vocab["tokenizer.ggml.scores"] = scores
    return vocab


def _eog_by_text() -> dict[str, Any]:
    """End-of-turn tokens typed NORMAL: llama.cpp makes them control and end-of-generation."""
    return spm_vocab(added=(("<|im_start|>", CONTROL), ("<|im_end|>", NORMAL),
                            ("<|endoftext|>", NORMAL), ("<|fim_pad|>", NORMAL)))


def _unmerged_words(pre: str) -> dict[str, Any]:
    """Whole words as tokens that no merge sequence builds (as in LLaMA 3's vocabulary, made
    from tiktoken ranks): LLaMA 3's pre-tokenizer takes such a word whole, gpt-2's does not."""
    vocab = bpe_vocab(400, pre=pre)  # small, so that many corpus words are not tokens
    tokens = vocab["tokenizer.ggml.tokens"]
    words = {"Ġ" + w for w in re.findall(r"(?<= )[A-Za-z]{5,}", default_corpus())}
    unmerged = sorted(words - set(tokens))[:20]
    assert len(unmerged) >= 5, "the corpus has too few words the vocabulary lacks"
    tokens += unmerged
    vocab["tokenizer.ggml.token_type"] += [NORMAL] * len(unmerged)
    return vocab


VOCABS: dict[str, Callable[[], dict[str, Any]]] = {
    "spm": spm_vocab,
    "spm-no-space-prefix": lambda: spm_vocab(add_space_prefix=False),  # Gemma's setting
    "spm-shuffled-scores": _shuffled_scores,
    "spm-eog-by-text": _eog_by_text,
    "llama-bpe": bpe_vocab,
    "gpt-2": lambda: bpe_vocab(pre="gpt-2"),
    "default": lambda: bpe_vocab(pre="default"),
    "no-pre": lambda: {k: v for k, v in bpe_vocab().items() if k != "tokenizer.ggml.pre"},
    "llama-bpe-unmerged-words": lambda: _unmerged_words("llama-bpe"),
    "gpt-2-unmerged-words": lambda: _unmerged_words("gpt-2"),
}

# Cases that a text file cannot hold reliably, on top of the corpus's lines and whole text.
EDGE_CASES = [
    "", " ", "  ", "\n", "\n\n\n", "\t", " Hello", "Hello ", "Hello  ", "a\r\nb\r\n", "\r",
    "x  \n  y", "   leading and trailing   ", "<s>", "<s> x", " <s>", "</s></s>", "<s><s>text",
    "<|begin_of_text|><|begin_of_text|>", "<|eot_id|>\n\n", "<tool_call> </tool_call>",
    "<|im_start|>user\nhi<|im_end|>\n", "<0x0A>", "<unk>", "'s 'S 'RE I'LL", "ſ ǅ ﬁ",
    "\u00a0nbsp\u00a0", "\u3000ideographic\u3000space", "\u2028\u0085", "zero\u200bwidth",
    "e\u0301 combining", "\ufeffbom", "x" * 300, "9" * 40, "🚀" * 5, "\u2581literal\u2581marks",
]


def _cases() -> list[str]:
    corpus = default_corpus()
    return [*corpus.split("\n"), corpus, *EDGE_CASES]


@pytest.fixture(scope="module", params=sorted(VOCABS))
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> tuple[Tokenizer, LlamaCppVocab, str]:
    vocab = VOCABS[request.param]()
    path = write_vocab_only_gguf(tmp_path_factory.mktemp("vocab") / "vocab.gguf", vocab)
    return Tokenizer.from_metadata(vocab, str(path)), LlamaCppVocab(path), request.param


def _show(tok: Tokenizer, ids: list[int]) -> list[str]:
    return [tok.piece(i) for i in ids]


def test_corpus_ids_match_llama_cpp(pair: tuple[Tokenizer, LlamaCppVocab, str]) -> None:
    tok, ref, _ = pair
    for text in _cases():
        for add_special in (True, False):
            for parse_special in (True, False):
                want = ref.tokenize(text, add_special=add_special, parse_special=parse_special)
                got = tok.encode(text, add_special=add_special, parse_special=parse_special)
                assert got == want, (
                    f"{text!r} add_special={add_special} parse_special={parse_special}\n"
                    f"llama.cpp {_show(tok, want)}\nvexel     {_show(tok, got)}")


def test_random_text_matches_llama_cpp(pair: tuple[Tokenizer, LlamaCppVocab, str]) -> None:
    tok, ref, _ = pair
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    corpus = default_corpus()
    symbols = [*sorted(set(corpus)), *" \t\n\r'?!.,", "<s>", "</s>", "<unk>", "<|eot_id|>",
               "<tool_call>", "<|im_end|>", "'s", " 're", "\u00a0", "\u3000", "💩", "😀", "\x00",
               "\x7f", "１２３", "ǅ"]
    for _ in range(250):
        start = rng.randrange(len(corpus))
        text = corpus[start:start + rng.randrange(60)]
        text += "".join(rng.choice(symbols) for _ in range(rng.randrange(30)))
        add_special, parse_special = rng.random() < 0.5, rng.random() < 0.5
        want = ref.tokenize(text, add_special=add_special, parse_special=parse_special)
        got = tok.encode(text, add_special=add_special, parse_special=parse_special)
        assert got == want, (f"seed {seed}: {text!r} add_special={add_special} "
                             f"parse_special={parse_special}\n"
                             f"llama.cpp {_show(tok, want)}\nvexel     {_show(tok, got)}")


def test_decode_matches_llama_cpp(pair: tuple[Tokenizer, LlamaCppVocab, str]) -> None:
    tok, ref, _ = pair
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    sequences = [tok.encode(text, add_special=bos) for text in _cases() for bos in (True, False)]
    # any ids at all: control tokens first or in the middle, bytes cut mid-character
    sequences += [[rng.randrange(tok.vocab_size) for _ in range(rng.randrange(12))]
                  for _ in range(500)]
    for ids in sequences:
        for skip_special in (True, False):
            want = ref.detokenize(ids, special=not skip_special)
            assert tok.decode_bytes(ids, skip_special=skip_special) == want, (seed, ids)
            assert tok.decode(ids, skip_special=skip_special) == want.decode("utf-8", "replace")


def test_special_tokens_match_llama_cpp(pair: tuple[Tokenizer, LlamaCppVocab, str]) -> None:
    tok, ref, _ = pair
    assert tok.vocab_size == ref.size
    assert (tok.bos_id, tok.eos_id, tok.add_bos) == (ref.bos, ref.eos, ref.add_bos)
    assert tok.stop_ids == ref.eog_ids()
    for i in range(tok.vocab_size):
        assert tok.token_bytes(i) == ref.piece(i, special=True), i


def test_spm_round_trip_and_spaces() -> None:
    tok = Tokenizer.from_metadata(spm_vocab())
    for text in default_corpus().split("\n"):
        if "<tool_call>" in text:
            continue  # llama.cpp starts the text after a special token with a space, too
        assert tok.decode(tok.encode(text, add_special=False, parse_special=False)) == text
    # the space llama.cpp adds before text is dropped again only at the very start
    hello = tok.encode("Hello", add_special=False)
    assert tok.decode(hello) == "Hello"
    assert tok.decode([tok.bos_id, *hello], skip_special=True) == " Hello"


def test_specials_parse_only_when_asked() -> None:
    tok = Tokenizer.from_metadata(spm_vocab())
    im_end = tok.vocab.tokens.index("<|im_end|>")
    tool = tok.vocab.tokens.index("<tool_call>")
    assert tok.encode("<|im_end|>", add_special=False) == [im_end]
    assert im_end not in tok.encode("<|im_end|>", add_special=False, parse_special=False)
    # user-defined tokens are always whole, as llama.cpp does
    assert tok.encode("<tool_call>", add_special=False, parse_special=False) == [tool]


def test_eog_and_types_follow_llama_cpp_by_text() -> None:
    tok = Tokenizer.from_metadata(_eog_by_text())
    texts = tok.vocab.tokens
    assert {texts[i] for i in tok.stop_ids} == {"</s>", "<|im_end|>", "<|endoftext|>",
                                                "<|fim_pad|>"}
    assert all(tok.is_special(i) for i in tok.stop_ids)


@pytest.mark.parametrize("name", ["Phi3 Mini 4k", "plain"])
def test_phi3_specials_swallow_following_whitespace(name: str, tmp_path: Path) -> None:
    vocab = {**spm_vocab(added=PHI3_ADDED), "general.name": name}
    vocab["tokenizer.ggml.eos_token_id"] = vocab["tokenizer.ggml.tokens"].index("<|endoftext|>")
    ref = LlamaCppVocab(write_vocab_only_gguf(tmp_path / "phi3.gguf", vocab, name=name))
    tok = Tokenizer.from_metadata(vocab)
    # llama.cpp strips ASCII whitespace after Phi-3's specials; tokenizers strips any
    # Unicode whitespace: the cases stay ASCII
    text = "<|user|>\n Hello<|end|>\n<|assistant|>\n\t Hi </s>  x<s>  y<unk>  z<|endoftext|>  w"
    for parse_special in (True, False):
        assert tok.encode(text, parse_special=parse_special) == ref.tokenize(
            text, parse_special=parse_special)
    stripped = tok.encode("<|user|>\nHi", add_special=False)
    assert (tok.decode(stripped) == "<|user|> Hi") == name.startswith("Phi3")


def test_from_gguf_reads_the_file(tmp_path: Path) -> None:
    vocab = bpe_vocab()
    path = write_vocab_only_gguf(tmp_path / "bpe.gguf", vocab)
    with GGUFFile(path) as g:
        tok = Tokenizer.from_gguf(g)
    text = default_corpus()
    assert tok.encode(text) == Tokenizer.from_metadata(vocab).encode(text)
    with pytest.raises(TokenizerError, match=str(path)):
        tok.decode([tok.vocab_size])


def _broken(change: dict[str, Any], drop: tuple[str, ...] = ()) -> dict[str, Any]:
    vocab = {**spm_vocab(), **change}
    for key in drop:
        del vocab[key]
    return vocab


@pytest.mark.parametrize(("vocab", "message"), [
    (_broken({"tokenizer.ggml.model": "bert"}), r"'bert' is not supported; supported: llama"),
    (_broken({"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.merges": ["a b"],
              "tokenizer.ggml.pre": "qwen9"}),
     r"tokenizer.ggml.pre 'qwen9' is not supported; supported: default, gpt-2, .*llama-bpe"),
    (_broken({}, drop=("tokenizer.ggml.tokens",)), r"metadata has no tokenizer.ggml.tokens"),
    (_broken({"tokenizer.ggml.tokens": "abc"}), r"tokenizer.ggml.tokens is 'abc'; expected list"),
    (_broken({"tokenizer.ggml.scores": [0.0]}), r"tokenizer.ggml.scores has 1 entries for"),
    (_broken({"tokenizer.ggml.tokens": ["a", "b", "a"], "tokenizer.ggml.scores": [0.0] * 3,
              "tokenizer.ggml.token_type": [1] * 3}), r"has 'a' twice \(ids 0 and 2\)"),
    (_broken({"tokenizer.ggml.bos_token_id": "1"}), r"bos_token_id is '1'; expected int"),
    (_broken({"tokenizer.ggml.tokens": ["a"], "tokenizer.ggml.scores": [0.0],
              "tokenizer.ggml.token_type": [1], "tokenizer.ggml.bos_token_id": 5}),
     r"add_bos_token is true but the file has no valid tokenizer.ggml.bos_token_id"),
    (_broken({"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2",
              "tokenizer.ggml.merges": ["▁ zz"]}), r"cannot build the gpt2 tokenizer"),
    (_broken({"tokenizer.ggml.tokens": ["<unk>", "<0x41>", "<0xG1>"],
              "tokenizer.ggml.scores": [0.0] * 3, "tokenizer.ggml.token_type": [2, 6, 6]}),
     r"tokenizer.ggml.tokens\[2\] is '<0xG1>', a byte token .* expected '<0xNN>'"),
])
def test_bad_metadata_is_a_clear_error(vocab: dict[str, Any], message: str) -> None:
    with pytest.raises(TokenizerError, match=rf"^model\.gguf: .*{message}"):
        Tokenizer.from_metadata(vocab, "model.gguf")


def test_bad_ids_and_text_are_clear_errors() -> None:
    tok = Tokenizer.from_metadata(spm_vocab())
    with pytest.raises(TokenizerError, match=r"token id -1 is out of range"):
        tok.decode([5, -1])
    with pytest.raises(TokenizerError, match=r"token id 10\*\*9|out of range"):
        tok.token_bytes(10**9)
    with pytest.raises(TokenizerError, match=r"cannot tokenize a bytes; expected str"):
        tok.encode(b"bytes")  # type: ignore[arg-type]


# -- vexel tokenize ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bpe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_vocab_only_gguf(tmp_path_factory.mktemp("cli") / "bpe.gguf", bpe_vocab())


def _vexel(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = vexel_main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_tokenize_prints_llama_cpp_ids(bpe_file: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    ref = LlamaCppVocab(bpe_file)
    text = "Hello world, 日本語 <|eot_id|>"
    code, out, _ = _vexel(capsys, "tokenize", "-m", str(bpe_file), "--json", text)
    assert code == 0
    result = json.loads(out)
    assert result["ids"] == ref.tokenize(text)
    assert result["pieces"][0] == "<|begin_of_text|>"
    code, out, _ = _vexel(capsys, "tokenize", "-m", str(bpe_file), "--no-bos", text)
    lines = out.splitlines()
    assert [int(line.split()[0]) for line in lines] == ref.tokenize(text, add_special=False)
    assert json.loads(lines[0].split(maxsplit=1)[1]) == "Hello"


def test_cli_detokenize(bpe_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = LlamaCppVocab(bpe_file)
    ids = ref.tokenize("Hello world, it's 2026.", add_special=False)
    code, out, _ = _vexel(capsys, "tokenize", "-m", str(bpe_file), "--detokenize",
                          ", ".join(map(str, ids)))
    assert code == 0
    assert out == ref.detokenize(ids, special=True).decode() + "\n"


@pytest.mark.parametrize(("args", "message"), [
    (("--detokenize", "1 two"), "'two' is not one"),
    (("--detokenize", "999999"), "token id 999999 is out of range"),
])
def test_cli_bad_input_is_one_line(bpe_file: Path, capsys: pytest.CaptureFixture[str],
                                   args: tuple[str, ...], message: str) -> None:
    code, out, err = _vexel(capsys, "tokenize", "-m", str(bpe_file), *args)
    assert code == 1
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_cli_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _vexel(capsys, "tokenize", "-m", str(tmp_path / "nope.gguf"), "hi")
    assert code == 1
    assert err.startswith("vexel: error:") and err.count("\n") == 1 and "nope.gguf" in err
