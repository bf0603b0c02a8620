"""LLaMA-2 (MHA), LLaMA-3 (GQA, llama3 rope scaling) and Mistral (GQA) in all 13 formats,
against llama.cpp on the same file. The checks and their tolerances are shared with the other
architectures (`tests/arch_checks.py`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.arch_checks import (
    GREEDY_SEEDS,
    check_greedy,
    check_logits,
    in_format,
    prompt,
)
from tests.builders.models import LLAMA2, LLAMA3, MISTRAL, LlamaShape, write_llama
from tests.builders.vocab import spm_vocab
from tests.helpers import fresh_seed, load, prompt_logits

FORMATS = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
           "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"]
VARIANTS = {"llama2": LLAMA2, "llama3": LLAMA3, "mistral": MISTRAL}


@pytest.fixture(scope="module")
def f32_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("llama")
    seed = fresh_seed("weights seed")
    vocab = spm_vocab()
    return {name: write_llama(folder / f"{name}-F32.gguf", vocab, shape, seed=seed + i)
            for i, (name, shape) in enumerate(VARIANTS.items())}


def _prompt(seed: int, n: int = 24) -> list[int]:
    return [1, *prompt(seed, n - 1)]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_logits_match_llama_cpp(variant: str, fmt: str, f32_files: dict[str, Path], host,  # type: ignore[no-untyped-def]
                                tmp_path: Path) -> None:
    path = in_format(f32_files[variant], fmt, tmp_path)
    check_logits(path, fmt, _prompt(len(fmt)), host, tmp_path)


@pytest.mark.parametrize("backend", ["sdpa", "paged"])
def test_backends_agree(backend: str, f32_files: dict[str, Path], host) -> None:  # type: ignore[no-untyped-def]
    """The paged reference and the fused path compute the same attention."""
    model = load(f32_files["llama3"], host)
    tokens = _prompt(3, 40)
    a = prompt_logits(model, tokens, host, backend)
    b = prompt_logits(model, tokens, host, "sdpa")
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-3 * np.abs(b).max())


def test_sliding_window_is_applied(tmp_path: Path, host) -> None:  # type: ignore[no-untyped-def]
    """A Mistral-style window smaller than the prompt changes late logits, not early ones."""
    vocab = spm_vocab()
    plain = write_llama(tmp_path / "plain.gguf", vocab, MISTRAL, seed=5)
    windowed = write_llama(tmp_path / "win.gguf", vocab,
                           LlamaShape(**{**MISTRAL.__dict__, "sliding_window": 8}), seed=5)
    tokens = _prompt(9, 20)
    a = prompt_logits(load(plain, host), tokens, host)
    b = prompt_logits(load(windowed, host), tokens, host)
    np.testing.assert_allclose(a[:8], b[:8], atol=1e-4)
    assert np.abs(a[-1] - b[-1]).max() > 1e-2


@pytest.mark.parametrize("fmt", ["F32", "F16", "Q8_0"])
def test_greedy_continuations_identical(fmt: str, f32_files: dict[str, Path], host,  # type: ignore[no-untyped-def]
                                        tmp_path: Path) -> None:
    path = in_format(f32_files["llama3"], fmt, tmp_path)
    check_greedy(path, fmt, [_prompt(seed, 12) for seed in GREEDY_SEEDS], host)
