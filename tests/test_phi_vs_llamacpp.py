"""Phi-2 and Phi-3 in eight formats against llama.cpp on the same files (tolerances in
`tests.arch_checks`).

The Phi-3 file is a "128k" one: LongRoPE factor tensors and attention factor, a trained context
(1024) beyond the original one (256), and a declared sliding window (8) smaller than the
prompts, which llama.cpp ignores for Phi-3 and so must we.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.arch_checks import (
    FORMATS,
    GREEDY_FORMATS,
    GREEDY_PROMPTS,
    check_batched_equals_sequential,
    check_generate,
    check_greedy,
    check_inspect,
    check_logits,
    in_format,
    prompt,
)
from tests.builders.phi_gemma import PHI2, Phi3Shape, write_phi2, write_phi3
from tests.helpers import fresh_seed, llama_cpp_logits, load, pearson, prompt_logits
from vexel_core.errors import GGUFError

PHI3 = Phi3Shape(sliding_window=8)
VARIANTS = ["phi2", "phi3"]


@pytest.fixture(scope="module")
def f32_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("phi")
    seed = fresh_seed("weights seed")
    return {"phi2": write_phi2(folder / "phi2.gguf", PHI2, seed),
            "phi3": write_phi3(folder / "phi3.gguf", PHI3, seed + 1)}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_logits_match_llama_cpp(variant: str, fmt: str, f32_files: dict[str, Path], host,  # type: ignore[no-untyped-def]
                                tmp_path: Path) -> None:
    path = in_format(f32_files[variant], fmt, tmp_path)
    check_logits(path, fmt, prompt(len(fmt), 24), host, tmp_path)


@pytest.mark.parametrize("fmt", GREEDY_FORMATS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_greedy_continuations_identical(variant: str, fmt: str, f32_files: dict[str, Path],  # type: ignore[no-untyped-def]
                                        host, tmp_path: Path) -> None:
    check_greedy(in_format(f32_files[variant], fmt, tmp_path), fmt, GREEDY_PROMPTS, host)


@pytest.mark.parametrize("backend", ["sdpa", "paged"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_batched_equals_sequential(variant: str, backend: str, f32_files: dict[str, Path],  # type: ignore[no-untyped-def]
                                   host) -> None:
    check_batched_equals_sequential(f32_files[variant], host, backend, seed=5)


@pytest.mark.parametrize("variant", VARIANTS)
def test_generate_command(variant: str, f32_files: dict[str, Path]) -> None:
    check_generate(f32_files[variant])


def test_inspect(f32_files: dict[str, Path]) -> None:
    check_inspect(f32_files["phi2"], {"architecture": "phi2", "head_dim": 80,
                                      "rope_dimension_count": 32, "embedding_length": 160})
    check_inspect(f32_files["phi3"], {"architecture": "phi3", "head_dim": 96,
                                      "head_count_kv": 1, "embedding_length": 192})


def test_longrope_factors_follow_the_context_length(f32_files: dict[str, Path], host) -> None:  # type: ignore[no-untyped-def]
    """llama.cpp uses the short factors when its context (256) does not exceed the original
    one (256), the long ones beyond; the engine's context length decides the same way."""
    path, tokens = f32_files["phi3"], prompt(3, 16)
    model = load(path, host)
    long = prompt_logits(model, tokens, host)  # the trained context (1024) by default
    model.set_context_len(PHI3.original_context)
    short = prompt_logits(model, tokens, host)
    assert np.abs(long - short).max() > 0.1 * np.abs(long).max()  # the choice matters
    ref = llama_cpp_logits(path, tokens, n_ctx=256)
    assert min(pearson(short[i], ref[i]) for i in range(len(tokens))) >= 0.999
    # and through the engine: its context_len setting reaches the model
    check_greedy(path, "F32", [tokens], host, n=16, context_len=PHI3.original_context)


@pytest.mark.parametrize(("edit", "where"), [
    (lambda meta, t: t.update({"rope_factors_long.weight": np.ones(40, np.float32)}),
     "tensor rope_factors_long.weight"),
    (lambda meta, t: meta.update({"phi3.rope.scaling.type": "yarn"}),
     "key phi3.rope.scaling.type"),
])
def test_bad_phi3_files_are_refused_by_name(edit, where: str, host, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_phi3(tmp_path / "bad.gguf", PHI3, seed=0, edit=edit)
    with pytest.raises(GGUFError, match=where):
        load(path, host)
