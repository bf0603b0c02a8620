"""``vexel inspect``: the facts it prints are the ones the test wrote into the file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from gguf import GGMLQuantizationType as T

from tests.test_gguf_reader import (
    CONTEXT,
    FFN,
    HEAD_DIM,
    HEADS,
    HIDDEN,
    KV_HEADS,
    LAYERS,
    TOKENS,
    llama_metadata,
    llama_tensors,
)
from vexel_core.cli import cli, main
from vexel_core.gguf import write_gguf


def q4_for_feed_forward(name: str, array: np.ndarray) -> T:
    return T.Q4_0 if ".ffn_" in name else T.F16


@pytest.fixture
def model(tmp_path: Path, rng: np.random.Generator) -> tuple[Path, dict[str, np.ndarray]]:
    tensors = llama_tensors(rng)
    path = write_gguf(tmp_path / "tiny.gguf", "llama", llama_metadata(rng), tensors,
                      q4_for_feed_forward)
    return path, tensors


def test_json_facts(model: tuple[Path, dict[str, np.ndarray]]) -> None:
    path, tensors = model
    result = CliRunner().invoke(cli, ["inspect", str(path), "--json"])
    assert result.exit_code == 0, result.output
    facts = json.loads(result.output)
    assert facts["architecture"] == "llama"
    assert facts["parameter_count"] == sum(a.size for a in tensors.values())
    assert facts["context_length"] == CONTEXT
    assert facts["block_count"] == LAYERS
    assert facts["head_count"] == HEADS
    assert facts["head_count_kv"] == KV_HEADS
    assert facts["head_dim"] == HEAD_DIM
    assert facts["embedding_length"] == HIDDEN
    assert facts["feed_forward_length"] == FFN
    n_ffn = sum(".ffn_" in n and a.ndim == 2 for n, a in tensors.items())
    n_vectors = sum(a.ndim == 1 for a in tensors.values())
    assert facts["tensor_types"] == {
        "Q4_0": n_ffn, "F16": len(tensors) - n_ffn - n_vectors, "F32": n_vectors,
    }
    assert facts["tokenizer_model"] == "llama"
    assert facts["tokenizer_size"] == len(TOKENS)
    assert facts["has_chat_template"] is True
    assert facts["file_size"] == path.stat().st_size
    assert facts["file_type_name"] == "MOSTLY_Q4_0"


def test_table(model: tuple[Path, dict[str, np.ndarray]]) -> None:
    path, tensors = model
    result = CliRunner().invoke(cli, ["inspect", str(path)], terminal_width=200)
    assert result.exit_code == 0, result.output
    rows = {}
    for line in result.output.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if len(cells) == 2:
            rows[cells[0]] = cells[1]
    assert rows["architecture"] == "llama"
    assert rows["parameters"].startswith(f"{sum(a.size for a in tensors.values()):,} ")
    assert rows["context length"] == str(CONTEXT)
    assert rows["layers"] == str(LAYERS)
    assert rows["heads / KV heads"] == f"{HEADS} / {KV_HEADS}"
    assert rows["tokenizer"] == f"llama ({len(TOKENS)} tokens)"
    assert rows["chat template"] == "yes"
    assert rows["file size"].startswith(f"{path.stat().st_size:,} bytes")
    n_ffn = sum(".ffn_" in n and a.ndim == 2 for n, a in tensors.items())
    assert f"Q4_0: {n_ffn}" in rows["tensor types"]


@pytest.mark.parametrize("content", [None, b"", b"PK\x03\x04 not a gguf at all"])
def test_bad_file_is_one_line_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        content: bytes | None) -> None:
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    assert main(["inspect", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"vexel: error: {path}: ")
    assert "Traceback" not in err
