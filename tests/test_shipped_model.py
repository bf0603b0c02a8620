"""The shipped vexel-tiny files: every command's default model, and llama.cpp agrees with
Vexel's greedy output on them (Q8_0 files; a difference is allowed only at a near tie in
llama.cpp's own logits, as `tests/arch_checks.py` states for Q8_0)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.arch_checks import TIE
from tests.helpers import (
    assert_same_greedy,
    greedy_engine,
    llama_cpp_greedy_margins,
    llama_cpp_logits,
)
from vexel_core.assets import default_model_path, draft_model_path
from vexel_core.plugins import load_plugins
from vexel_core.tokenizer import Tokenizer

PROMPTS = [
    "def fibonacci(n):",
    "import os\nimport sys\n\n",
    "class Stack:\n    def __init__(self):\n",
    "for i in range(10):\n    if i % 2 == 0:\n",
    '"""Utilities for parsing dates."""\n',
]


@pytest.mark.parametrize("which", ["target", "draft"])
def test_greedy_output_equals_llama_cpp(which: str) -> None:
    from vexel_core.gguf.reader import GGUFFile

    path = default_model_path() if which == "target" else draft_model_path()
    host = load_plugins(strict=True)
    tok = Tokenizer.from_gguf(GGUFFile(path))
    for text in PROMPTS:
        ids = tok.encode(text)
        ours = greedy_engine(path, ids, 24, host)
        ref, margins = llama_cpp_greedy_margins(path, ids, 24)
        tie = TIE["Q8_0"] * float(llama_cpp_logits(path, ids)[-1].std())
        assert_same_greedy(ours, ref, margins, tie)


def test_generate_defaults_to_the_shipped_model() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vexel_core.cli", "generate", "def fibonacci(n):",
         "--max-tokens", "16", "--temperature", "0", "--json"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert len(out["token_ids"]) > 0 and out["text"]
