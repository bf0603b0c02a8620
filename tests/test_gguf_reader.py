"""The GGUF reader, writer and model description.

Files are written with `write_gguf` (over gguf.GGUFWriter) and read back; the references are
``gguf.quants.quantize`` for the stored bytes and ``gguf.GGUFReader`` (an independent parser)
for what a valid file contains. Malformed files are made by patching single fields of a valid
file at offsets that gguf.GGUFReader reports, and must end in GGUFError with the right `where`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest
from gguf import GGMLQuantizationType as T
from gguf import GGUFValueType as V

from vexel_core.engine.loader import load_model
from vexel_core.errors import GGUFError
from vexel_core.gguf import GGUFFile, ModelDescription, write_gguf
from vexel_core.gguf.writer import WRITABLE_TYPES, quantize_with_llama_cpp

# A small LLaMA-shaped model: 4 query heads, 2 KV heads of 16, so every shape check has
# something to check.
HIDDEN, HEADS, KV_HEADS, FFN, LAYERS, CONTEXT = 64, 4, 2, 128, 2, 256
HEAD_DIM = HIDDEN // HEADS
TOKENS = ["<unk>", "<s>", "</s>", "▁é", "✓", "<0x0A>"] + [f"tok{i}" for i in range(34)]


def llama_metadata(rng: np.random.Generator, **extra: Any) -> dict[str, Any]:
    return {
        "general.name": "reader-test",
        "llama.context_length": CONTEXT,
        "llama.embedding_length": HIDDEN,
        "llama.block_count": LAYERS,
        "llama.feed_forward_length": FFN,
        "llama.attention.head_count": HEADS,
        "llama.attention.head_count_kv": KV_HEADS,
        "llama.attention.layer_norm_rms_epsilon": 1e-5,
        "llama.rope.freq_base": 500000.0,
        "llama.rope.dimension_count": HEAD_DIM,
        "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.tokens": list(TOKENS),
        "tokenizer.ggml.scores": rng.standard_normal(len(TOKENS)).tolist(),
        # any type but BYTE (6), which only a "<0xNN>" token may have
        "tokenizer.ggml.token_type": [6 if t.startswith("<0x") else int(rng.integers(1, 6))
                                      for t in TOKENS],
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.add_bos_token": True,
        "tokenizer.chat_template": "{% for m in messages %}{{ m.content }} ✓{% endfor %}",
        "vexel.test.negative": -7,
        "vexel.test.big": 2**40,
        "vexel.test.flags": [True, False, True],
        **extra,
    }


def llama_tensors(rng: np.random.Generator, *, layers: int = LAYERS, vocab: int = len(TOKENS),
                  hidden: int = HIDDEN, ffn: int = FFN) -> dict[str, np.ndarray]:
    def mat(rows: int, cols: int) -> np.ndarray:
        return rng.standard_normal((rows, cols)).astype(np.float32)

    tensors = {"token_embd.weight": mat(vocab, hidden)}
    for i in range(layers):
        tensors |= {
            f"blk.{i}.attn_norm.weight": rng.standard_normal(hidden).astype(np.float32),
            f"blk.{i}.attn_q.weight": mat(HEADS * hidden // HEADS, hidden),
            f"blk.{i}.attn_k.weight": mat(KV_HEADS * hidden // HEADS, hidden),
            f"blk.{i}.attn_v.weight": mat(KV_HEADS * hidden // HEADS, hidden),
            f"blk.{i}.attn_output.weight": mat(hidden, hidden),
            f"blk.{i}.ffn_norm.weight": rng.standard_normal(hidden).astype(np.float32),
            f"blk.{i}.ffn_gate.weight": mat(ffn, hidden),
            f"blk.{i}.ffn_up.weight": mat(ffn, hidden),
            f"blk.{i}.ffn_down.weight": mat(hidden, ffn),
        }
    tensors["output_norm.weight"] = rng.standard_normal(hidden).astype(np.float32)
    tensors["output.weight"] = mat(vocab, hidden)
    return tensors


@dataclass
class Written:
    path: Path
    metadata: dict[str, Any]
    tensors: dict[str, np.ndarray]


def write_small_llama(path: Path, rng: np.random.Generator,
                      tensor_types: T | Callable[[str, np.ndarray], T] = T.F32,
                      metadata: dict[str, Any] | None = None,
                      tensors: dict[str, np.ndarray] | None = None) -> Written:
    metadata = llama_metadata(rng) if metadata is None else metadata
    tensors = llama_tensors(rng) if tensors is None else tensors
    write_gguf(path, "llama", metadata, tensors, tensor_types)
    return Written(path, metadata, tensors)


@dataclass
class Layout:
    """Byte offsets of a valid file's fields, found by gguf.GGUFReader (not by our parser)."""

    size: int
    kv: dict[str, list[tuple[int, np.dtype[Any]]]]  # key -> (offset, dtype) of every part
    tensors: dict[str, list[tuple[int, np.dtype[Any]]]]  # name -> len, name, n_dims, dims..
    tensor_info_start: int
    data_offset: int

    def tensor_field(self, name: str, part: int) -> int:
        """Offset of part *part* of a tensor info: 0 name length, 1 name, 2 n_dims,
        3 dims, 4 type, 5 data offset."""
        return self.tensors[name][part][0]


def layout(path: Path) -> Layout:
    reader = gguf.GGUFReader(path)
    base = reader.data.__array_interface__["data"][0]

    def parts(field: Any) -> list[tuple[int, np.dtype[Any]]]:
        return [(p.__array_interface__["data"][0] - base, p.dtype) for p in field.parts]

    kv = {k: parts(f) for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    tensors = {t.name: parts(t.field) for t in reader.tensors}
    return Layout(path.stat().st_size, kv, tensors,
                  min(t.field.offset for t in reader.tensors), int(reader.data_offset))


def patched(src: Path, dst: Path, offset: int, fmt: str, value: Any) -> Path:
    data = bytearray(src.read_bytes())
    struct.pack_into(fmt, data, offset, value)
    dst.write_bytes(bytes(data))
    return dst


def expect_error(path: Path, where: str, reason_part: str) -> GGUFError:
    with pytest.raises(GGUFError) as info, GGUFFile(path) as g:
        ModelDescription.from_gguf(g)
    err = info.value
    assert err.where == where, str(err)
    assert reason_part in err.reason, str(err)
    assert err.path == str(path)
    return err


@pytest.fixture
def small(tmp_path: Path, rng: np.random.Generator) -> Written:
    return write_small_llama(tmp_path / "small.gguf", rng)


# -- round trips ----------------------------------------------------------------------------


def quantized_bytes(array: np.ndarray, ggml_type: T) -> np.ndarray:
    q = gguf.quants.quantize(array, ggml_type)
    return q.view(np.uint8).reshape(array.shape[:-1] + (-1,))


@pytest.mark.parametrize("ggml_type", WRITABLE_TYPES, ids=lambda t: t.name)
def test_round_trip_equals_gguf_quantize(tmp_path: Path, rng: np.random.Generator,
                                         ggml_type: T) -> None:
    w = write_small_llama(tmp_path / "m.gguf", rng, ggml_type)
    with GGUFFile(w.path) as g:
        assert g.architecture == "llama"
        assert set(g.tensors) == set(w.tensors)
        for name, array in w.tensors.items():
            t = g.tensor(name)
            expected_type = T.F32 if array.ndim == 1 else ggml_type
            assert t.ggml_type == expected_type, name
            assert t.shape == array.shape
            assert t.n_elements == array.size
            assert np.array_equal(t.raw, quantized_bytes(array, expected_type)), name
            assert t.nbytes == t.raw.nbytes
            assert not t.raw.flags.writeable and not t.raw.flags.owndata  # a view of the map
            assert np.array_equal(t.dequantize(),
                                  gguf.quants.dequantize(t.raw, t.ggml_type).reshape(t.shape))


def test_metadata_values_and_types(small: Written) -> None:
    with GGUFFile(small.path) as g:
        md = g.metadata
        for key in ("general.name", "tokenizer.ggml.model", "tokenizer.chat_template"):
            assert md[key] == small.metadata[key]
        assert md["tokenizer.ggml.tokens"] == TOKENS
        for key in ("llama.context_length", "llama.block_count", "vexel.test.negative",
                    "vexel.test.big", "tokenizer.ggml.token_type", "vexel.test.flags"):
            assert md[key] == small.metadata[key], key
        assert md["llama.attention.layer_norm_rms_epsilon"] == 1e-5  # shortest float32 decimal
        scores = np.array(small.metadata["tokenizer.ggml.scores"], dtype=np.float32).tolist()
        assert md["tokenizer.ggml.scores"] == scores
        assert md["tokenizer.ggml.add_bos_token"] is True
        # The types gguf's own add_* helpers would have written.
        assert g.value_types["llama.context_length"] == (V.UINT32,)
        assert g.value_types["vexel.test.negative"] == (V.INT32,)
        assert g.value_types["vexel.test.big"] == (V.UINT64,)
        assert g.value_types["llama.rope.freq_base"] == (V.FLOAT32,)
        assert g.value_types["tokenizer.ggml.tokens"] == (V.ARRAY, V.STRING)
        assert g.value_types["tokenizer.ggml.scores"] == (V.ARRAY, V.FLOAT32)
        assert g.value_types["tokenizer.ggml.token_type"] == (V.ARRAY, V.INT32)
        assert g.value_types["vexel.test.flags"] == (V.ARRAY, V.BOOL)
        assert g.metadata["general.file_type"] == gguf.LlamaFileType.ALL_F32
        assert g.metadata["general.quantization_version"] == gguf.GGML_QUANT_VERSION


def test_agrees_with_gguf_reader(tmp_path: Path, rng: np.random.Generator) -> None:
    """An independent parser sees the same values, shapes, types and bytes."""
    w = write_small_llama(tmp_path / "m.gguf", rng, T.Q5_1)
    peer = gguf.GGUFReader(w.path)
    with GGUFFile(w.path) as g:
        assert g.data_offset == peer.data_offset
        peer_keys = [k for k in peer.fields if not k.startswith("GGUF.")]
        assert list(g.metadata) == peer_keys
        for key in peer_keys:
            expected = peer.fields[key].contents()
            if g.value_types[key] == (V.FLOAT32,):
                assert np.float32(g.metadata[key]) == np.float32(expected), key
            else:
                assert g.metadata[key] == expected, key
        assert list(g.tensors) == [t.name for t in peer.tensors]
        for pt in peer.tensors:
            t = g.tensor(pt.name)
            assert t.ggml_type == pt.tensor_type
            assert t.shape == tuple(reversed(pt.shape.tolist()))
            assert t.offset == pt.data_offset
            assert np.array_equal(t.raw.reshape(-1), pt.data.view(np.uint8).reshape(-1))


def test_tensor_type_choice_per_tensor(tmp_path: Path, rng: np.random.Generator) -> None:
    def choose(name: str, array: np.ndarray) -> T:
        return T.Q4_0 if ".ffn_" in name else T.F16

    w = write_small_llama(tmp_path / "m.gguf", rng, choose)
    with GGUFFile(w.path) as g:
        for name, array in w.tensors.items():
            expected = T.F32 if array.ndim == 1 else choose(name, array)
            assert g.tensor(name).ggml_type == expected, name
        # the feed-forward matrices hold most of the weights (3 * 128 * 64 per layer)
        assert g.metadata["general.file_type"] == gguf.LlamaFileType.MOSTLY_Q4_0


def test_writer_refuses_what_gguf_cannot_write(tmp_path: Path, rng: np.random.Generator) -> None:
    tensors = llama_tensors(rng)
    with pytest.raises(ValueError, match="Q4_K"):
        write_gguf(tmp_path / "k.gguf", "llama", {}, tensors, T.Q4_K)
    with pytest.raises(ValueError, match="block size 32"):
        write_gguf(tmp_path / "r.gguf", "llama", {}, {"w": np.zeros((2, 48), np.float32)}, T.Q8_0)
    with pytest.raises(ValueError, match="empty list"):
        write_gguf(tmp_path / "e.gguf", "llama", {"x": []}, tensors)
    with pytest.raises(ValueError, match="mixes"):
        write_gguf(tmp_path / "e.gguf", "llama", {"x": [1, "a"]}, tensors)


def test_llama_cpp_quantizes_what_write_gguf_writes(tmp_path: Path,
                                                    rng: np.random.Generator) -> None:
    """llama.cpp reads our F32 file and writes a Q4_K_M mix that our reader reads back."""
    hidden = 256  # K-quant rows must be multiples of 256; the 128-wide K/V rows fall back
    tensors = llama_tensors(rng, layers=1, hidden=hidden, ffn=256)
    metadata = llama_metadata(rng, **{"llama.embedding_length": hidden, "llama.block_count": 1,
                                      "llama.feed_forward_length": 256,
                                      "llama.rope.dimension_count": hidden // HEADS})
    src = write_gguf(tmp_path / "f32.gguf", "llama", metadata, tensors)
    dst = quantize_with_llama_cpp(src, tmp_path / "q4km.gguf", "Q4_K_M")
    with GGUFFile(dst) as g:
        d = ModelDescription.from_gguf(g)
        assert d.file_type_name == "MOSTLY_Q4_K_M"
        assert {"Q4_K", "F32"} <= set(d.tensor_types)
        for name, array in tensors.items():
            t = g.tensor(name)
            assert t.shape == array.shape
            # Gaussian weights at >= 4 bits per weight: relative RMS error well under 15%
            error = t.dequantize() - array
            assert np.sqrt(np.mean(error**2)) < 0.15 * np.sqrt(np.mean(array**2)), name
    with pytest.raises(ValueError, match="unknown llama.cpp file type"):
        quantize_with_llama_cpp(src, tmp_path / "x.gguf", "Q9_Z")


# -- the model description --------------------------------------------------------------------


def test_description_facts(tmp_path: Path, rng: np.random.Generator) -> None:
    w = write_small_llama(tmp_path / "m.gguf", rng, T.Q8_0)
    with GGUFFile(w.path) as g:
        d = ModelDescription.from_gguf(g)
    assert (d.architecture, d.name) == ("llama", "reader-test")
    assert (d.context_length, d.embedding_length, d.block_count) == (CONTEXT, HIDDEN, LAYERS)
    assert (d.head_count, d.head_count_kv, d.head_dim) == (HEADS, KV_HEADS, HEAD_DIM)
    assert d.feed_forward_length == FFN
    assert d.rope_dimension_count == HEAD_DIM
    assert d.rope_freq_base == 500000.0
    assert d.rms_norm_epsilon == 1e-5 and d.layer_norm_epsilon is None
    assert d.vocab_size == len(TOKENS) == d.tokenizer_size
    assert d.tokenizer_model == "llama"
    assert d.has_chat_template
    assert d.parameter_count == sum(a.size for a in w.tensors.values())
    n_vectors = sum(a.ndim == 1 for a in w.tensors.values())
    assert d.tensor_types == {"Q8_0": len(w.tensors) - n_vectors, "F32": n_vectors}
    assert d.file_type_name == "MOSTLY_Q8_0"
    assert d.file_size == w.path.stat().st_size


def test_description_defaults(tmp_path: Path, rng: np.random.Generator) -> None:
    """Absent optional keys take llama.cpp's defaults: KV heads = heads, head_dim = E / heads,
    rope over the whole head, base 10000; no tokenizer means vocab from token_embd."""
    metadata = {k: v for k, v in llama_metadata(rng).items()
                if not k.startswith(("tokenizer.", "llama.rope", "llama.attention.head_count_kv"))}
    tensors = llama_tensors(rng)
    for i in range(LAYERS):  # KV heads = query heads now
        for p in ("k", "v"):
            tensors[f"blk.{i}.attn_{p}.weight"] = tensors[f"blk.{i}.attn_q.weight"]
    path = write_gguf(tmp_path / "m.gguf", "llama", metadata, tensors)
    with GGUFFile(path) as g:
        d = ModelDescription.from_gguf(g)
    assert d.head_count_kv == HEADS and d.head_dim == HEAD_DIM
    assert d.rope_dimension_count == HEAD_DIM and d.rope_freq_base == 10000.0
    assert d.vocab_size == len(TOKENS) and d.tokenizer_size == 0
    assert d.tokenizer_model is None and not d.has_chat_template


def test_fused_and_gateless_feed_forward_accepted(tmp_path: Path,
                                                  rng: np.random.Generator) -> None:
    tensors = llama_tensors(rng)
    del tensors["blk.0.ffn_gate.weight"], tensors["blk.1.ffn_gate.weight"]
    tensors["blk.0.ffn_up.weight"] = rng.standard_normal((2 * FFN, HIDDEN)).astype(np.float32)
    w = write_small_llama(tmp_path / "m.gguf", rng, tensors=tensors)  # Phi-3 and Phi-2 style
    with GGUFFile(w.path) as g:
        assert ModelDescription.from_gguf(g).feed_forward_length == FFN


# -- malformed files --------------------------------------------------------------------------


def test_wrong_magic_and_version(small: Written, tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    expect_error(patched(small.path, bad, 0, "4s", b"GGML"), "header", "bad magic b'GGML'")
    expect_error(patched(small.path, bad, 4, "<I", 1), "header", "unsupported GGUF version 1")
    expect_error(patched(small.path, bad, 4, "<I", 9), "header", "unsupported GGUF version 9")
    expect_error(patched(small.path, bad, 4, ">I", 3), "header", "big-endian")


def test_not_a_file(tmp_path: Path) -> None:
    expect_error(tmp_path / "missing.gguf", "file", "no such file")
    expect_error(tmp_path, "file", "directory")
    (tmp_path / "empty.gguf").write_bytes(b"")
    expect_error(tmp_path / "empty.gguf", "header", "empty")
    (tmp_path / "short.gguf").write_bytes(b"GGUF\x03\x00")
    expect_error(tmp_path / "short.gguf", "header", "truncated")


def test_truncated(small: Written, tmp_path: Path) -> None:
    lay = layout(small.path)
    data = small.path.read_bytes()
    cut = tmp_path / "cut.gguf"
    tokens_at = lay.kv["tokenizer.ggml.tokens"][0][0]
    cut.write_bytes(data[: tokens_at + 40])  # too short for the header's counts
    expect_error(cut, "header", "cannot fit in the")
    last_key = list(lay.kv)[-1]
    cut.write_bytes(data[: lay.kv[last_key][-1][0] + 2])  # inside the last value
    expect_error(cut, f"key {last_key}", "file truncated")
    cut.write_bytes(data[: lay.tensor_field("blk.1.attn_q.weight", 3) + 3])  # inside its dims
    expect_error(cut, "tensor blk.1.attn_q.weight", "file truncated")
    cut.write_bytes(data[:-1])  # the last tensor's last byte
    last = max(small.tensors, key=lambda n: lay.tensor_field(n, 5))
    expect_error(cut, f"tensor {last}", "past the end of the file")


def test_tensor_placement(small: Written, tmp_path: Path) -> None:
    lay = layout(small.path)
    bad = tmp_path / "bad.gguf"
    q_offset = lay.tensor_field("blk.0.attn_q.weight", 5)
    expect_error(patched(small.path, bad, q_offset, "<Q", 2**40), "tensor blk.0.attn_q.weight",
                 "past the end of the file")
    (relative,) = struct.unpack_from("<Q", small.path.read_bytes(), q_offset)
    expect_error(patched(small.path, bad, q_offset, "<Q", relative + 4),
                 "tensor blk.0.attn_q.weight", "not a multiple of the alignment 32")
    k_offset = lay.tensor_field("blk.0.attn_k.weight", 5)
    expect_error(patched(small.path, bad, k_offset, "<Q", relative), "tensor blk.0.attn_k.weight",
                 "overlaps tensor blk.0.attn_q.weight")
    dims = lay.tensor_field("blk.0.attn_q.weight", 3)
    expect_error(patched(small.path, bad, dims, "<Q", 2**50), "tensor blk.0.attn_q.weight",
                 "past the end of the file")
    expect_error(patched(small.path, bad, dims, "<Q", 0), "tensor blk.0.attn_q.weight",
                 "empty dimension")
    n_dims = lay.tensor_field("blk.0.attn_q.weight", 2)
    expect_error(patched(small.path, bad, n_dims, "<I", 7), "tensor blk.0.attn_q.weight",
                 "7 dimensions")


def test_unknown_tensor_type(small: Written, tmp_path: Path) -> None:
    at = layout(small.path).tensor_field("output.weight", 4)
    bad = tmp_path / "bad.gguf"
    expect_error(patched(small.path, bad, at, "<I", 99), "tensor output.weight",
                 "unknown tensor type 99")
    expect_error(patched(small.path, bad, at, "<I", 4), "tensor output.weight",
                 "unknown tensor type 4")  # Q4_2, removed from ggml
    # Q4_K's block of 256 does not divide the 64-element rows
    expect_error(patched(small.path, bad, at, "<I", int(T.Q4_K)), "tensor output.weight",
                 "not a multiple of the Q4_K block size 256")


@pytest.mark.parametrize("ggml_type", [T.Q8_1, T.IQ4_NL], ids=lambda t: t.name)
def test_tensor_type_no_format_reads(small: Written, tmp_path: Path, ggml_type: T) -> None:
    """A known type the engine has no quant format for fails the load naming the tensor and
    the formats there are; Q8_1 (llama.cpp keeps it for activations) not even gguf reads."""
    at = layout(small.path).tensor_field("output.weight", 4)
    bad = patched(small.path, tmp_path / "bad.gguf", at, "<I", int(ggml_type))
    with pytest.raises(GGUFError) as info:
        load_model(bad)
    assert (info.value.path, info.value.where) == (str(bad), "tensor output.weight")
    assert info.value.reason.startswith(f"type {ggml_type.name} is not supported; "
                                        "supported: BF16, F16, F32, Q2_K")
    if ggml_type == T.Q8_1:
        with GGUFFile(bad) as g, pytest.raises(GGUFError, match="cannot be dequantized") as info:
            g.tensors["output.weight"].dequantize()
        assert (info.value.path, info.value.where) == (str(bad), "tensor output.weight")


def test_absurd_counts_and_lengths(small: Written, tmp_path: Path) -> None:
    lay = layout(small.path)
    bad = tmp_path / "bad.gguf"
    expect_error(patched(small.path, bad, 16, "<Q", 2**63), "header", "cannot fit")
    expect_error(patched(small.path, bad, 8, "<Q", 2**40), "header", "cannot fit")
    key_len = lay.kv["general.name"][0][0]
    expect_error(patched(small.path, bad, key_len, "<Q", 2**62), "metadata entry 1",
                 "exceeds the limit")
    expect_error(patched(small.path, bad, key_len, "<Q", 2**20), "metadata entry 1",
                 "file truncated")
    tokens = lay.kv["tokenizer.ggml.tokens"]
    array_len = tokens[4][0]  # key len, key, type, item type, count, strings...
    expect_error(patched(small.path, bad, array_len, "<Q", 2**40), "key tokenizer.ggml.tokens",
                 "exceeds the limit")
    expect_error(patched(small.path, bad, array_len, "<Q", 2**22), "key tokenizer.ggml.tokens",
                 "cannot fit")
    scores = lay.kv["tokenizer.ggml.scores"]
    expect_error(patched(small.path, bad, scores[4][0], "<Q", 2**21), "key tokenizer.ggml.scores",
                 "file truncated")
    first_token = tokens[5][0]
    expect_error(patched(small.path, bad, first_token, "<Q", 2**60), "key tokenizer.ggml.tokens",
                 "array element 0 length 1152921504606846976 exceeds the limit")


def test_bad_values(small: Written, tmp_path: Path) -> None:
    lay = layout(small.path)
    bad = tmp_path / "bad.gguf"
    name_type = lay.kv["general.name"][2][0]
    expect_error(patched(small.path, bad, name_type, "<I", 77), "key general.name",
                 "unknown value type 77")
    item_type = lay.kv["tokenizer.ggml.scores"][3][0]
    expect_error(patched(small.path, bad, item_type, "<I", int(V.ARRAY)),
                 "key tokenizer.ggml.scores", "arrays of arrays")
    key = lay.kv["general.name"][1][0]
    expect_error(patched(small.path, bad, key, "2s", b"\xff\xfe"), "metadata entry 1",
                 "key is not valid UTF-8")
    arch_key = lay.kv["general.architecture"][1][0]
    expect_error(patched(small.path, bad, arch_key, "20s", b"general.architecturX"),
                 "key general.architecture", "missing (required)")


def test_duplicates(small: Written, tmp_path: Path) -> None:
    lay = layout(small.path)
    data = bytearray(small.path.read_bytes())
    q_name = lay.tensor_field("blk.0.attn_q.weight", 1)
    data[q_name : q_name + len("blk.0.attn_q.weight")] = b"blk.0.attn_k.weight"
    dup = tmp_path / "dup.gguf"
    dup.write_bytes(bytes(data))
    expect_error(dup, "tensor blk.0.attn_k.weight", "appears twice")
    data = bytearray(small.path.read_bytes())
    eos = lay.kv["tokenizer.ggml.eos_token_id"][1][0]
    data[eos : eos + len("tokenizer.ggml.eos_token_id")] = b"tokenizer.ggml.bos_token_id"
    dup.write_bytes(bytes(data))
    expect_error(dup, "key tokenizer.ggml.bos_token_id", "appears twice")


def test_alignment_key(tmp_path: Path, rng: np.random.Generator) -> None:
    from gguf.gguf_writer import GGUFValue

    for value, vtype, reason in ((48, V.UINT32, "not a power of two"),
                                 (32, V.UINT64, "must be a uint32")):
        w = write_small_llama(tmp_path / "a.gguf", rng, metadata=llama_metadata(
            rng, **{"general.alignment": GGUFValue(value, vtype)}))
        expect_error(w.path, "key general.alignment", reason)


@pytest.mark.parametrize("case", ["embedding", "attn_q", "attn_k", "attn_output", "ffn_up",
                                  "norm", "extra_block", "missing_block", "vocab_size"])
def test_shapes_inconsistent_with_architecture(tmp_path: Path, rng: np.random.Generator,
                                               case: str) -> None:
    metadata, tensors = llama_metadata(rng), llama_tensors(rng)
    where, reason = {
        "embedding": ("tensor token_embd.weight", f"expected [{len(TOKENS)}, {HIDDEN}]"),
        "attn_q": ("tensor blk.1.attn_q.weight", f"expected [{HEADS * HEAD_DIM}, {HIDDEN}]"),
        "attn_k": ("tensor blk.0.attn_k.weight", f"expected [{KV_HEADS * HEAD_DIM}, {HIDDEN}]"),
        "attn_output": ("tensor blk.0.attn_output.weight", f"expected [{HIDDEN}, {HIDDEN}]"),
        "ffn_up": ("tensor blk.0.ffn_up.weight", f"expected [{FFN}, {HIDDEN}]"),
        "norm": ("tensor output_norm.weight", f"expected [{HIDDEN}]"),
        "extra_block": ("tensor blk.2.attn_norm.weight", "beyond llama.block_count = 2"),
        "missing_block": ("key llama.block_count", "no tensors for block(s) 2"),
        "vocab_size": ("key llama.vocab_size", "differs from the vocabulary's 40 tokens"),
    }[case]
    if case == "embedding":
        tensors["token_embd.weight"] = tensors["token_embd.weight"][:-1]
    elif case == "attn_q":
        tensors["blk.1.attn_q.weight"] = tensors["blk.1.attn_k.weight"]
    elif case == "attn_k":
        metadata["llama.attention.head_count_kv"] = 1  # the file still has 2 KV heads
        reason = f"expected [{HEAD_DIM}, {HIDDEN}]"
    elif case == "attn_output":
        tensors["blk.0.attn_output.weight"] = tensors["blk.0.attn_output.weight"][:, :32]
    elif case == "ffn_up":  # twice the rows is only allowed when there is no separate gate
        tensors["blk.0.ffn_up.weight"] = np.concatenate([tensors["blk.0.ffn_up.weight"]] * 2)
    elif case == "norm":
        tensors["output_norm.weight"] = tensors["output_norm.weight"][:32]
    elif case == "extra_block":
        tensors["blk.2.attn_norm.weight"] = tensors["blk.1.attn_norm.weight"]
    elif case == "missing_block":
        metadata["llama.block_count"] = 3
    elif case == "vocab_size":
        metadata["llama.vocab_size"] = 41
    w = write_small_llama(tmp_path / "m.gguf", rng, metadata=metadata, tensors=tensors)
    err = expect_error(w.path, where, reason)
    assert "m.gguf" in str(err)


def test_required_keys_and_kinds(tmp_path: Path, rng: np.random.Generator) -> None:
    metadata = llama_metadata(rng)
    del metadata["llama.context_length"]
    w = write_small_llama(tmp_path / "m.gguf", rng, metadata=metadata)
    expect_error(w.path, "key llama.context_length", "missing (required)")
    metadata = llama_metadata(rng, **{"llama.attention.head_count": 0})
    w = write_small_llama(tmp_path / "m.gguf", rng, metadata=metadata)
    expect_error(w.path, "key llama.attention.head_count", "at least 1")
    with GGUFFile(w.path) as g:
        with pytest.raises(GGUFError, match="expected int, found str 'reader-test'") as info:
            g.require("general.name", int)
        assert info.value.where == "key general.name"
        with pytest.raises(GGUFError, match="expected int, found bool True"):
            g.require("tokenizer.ggml.add_bos_token", int)
        assert g.require("llama.context_length", float) == float(CONTEXT)  # ints pass as float
        assert g.require_arch("block_count", int) == LAYERS
        assert g.arch_key("block_count") == LAYERS and g.arch_key("nope", 5) == 5
        assert g.get("nope") is None
        with pytest.raises(GGUFError) as info:
            g.tensor("blk.9.attn_q.weight")
        assert info.value.where == "tensor blk.9.attn_q.weight"


def test_close_keeps_handed_out_arrays(small: Written) -> None:
    g = GGUFFile(small.path)
    raw = g.tensor("output.weight").raw
    g.close()
    with pytest.raises(GGUFError, match="closed"):
        g.tensor("output.weight")
    assert g.metadata["general.name"] == "reader-test"  # metadata is plain Python
    assert np.array_equal(raw.view(np.float32), small.tensors["output.weight"])


def test_per_layer_lists(tmp_path: Path, rng: np.random.Generator) -> None:
    """A per-layer list counts when every layer has the same value (as llama.cpp reads it)."""
    uniform = llama_metadata(rng, **{"llama.attention.head_count_kv": [KV_HEADS] * LAYERS})
    w = write_small_llama(tmp_path / "m.gguf", rng, metadata=uniform)
    with GGUFFile(w.path) as g:
        assert ModelDescription.from_gguf(g).head_count_kv == KV_HEADS
    mixed = llama_metadata(rng, **{"llama.attention.head_count_kv": [KV_HEADS, 1]})
    w = write_small_llama(tmp_path / "m.gguf", rng, metadata=mixed)
    expect_error(w.path, "key llama.attention.head_count_kv", "expected int, found list [2, 1]")
