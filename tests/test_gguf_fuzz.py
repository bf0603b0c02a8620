"""Corrupted GGUF files: every variant ends in a clear error naming the file (GGUFError;
TokenizerError or TemplateError for the tokenizer's keys), or loads and is fully readable.

A valid small file (mixed tensor types, token list, scores, chat template) is corrupted in
several hundred ways: truncations, byte flips in each region (header, key-values, tensor
infos, data offsets, data), and absurd values in every count, length, type and offset field
(positions found by gguf.GGUFReader on the valid file). The variants run in a child process
whose address space is capped (RLIMIT_AS), so an allocation driven by a corrupted count
fails there as MemoryError, which counts as a failure just like any other exception, a
crash or a time-out. The seed is fresh each run and printed.
"""

from __future__ import annotations

import json
import resource
import struct
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as T

from tests.test_gguf_reader import layout, llama_metadata, llama_tensors
from vexel_core.errors import GGUFError, TemplateError, TokenizerError
from vexel_core.gguf import GGUFFile, ModelDescription, write_gguf
from vexel_core.tokenizer import Tokenizer

MIN_VARIANTS = 300
TIME_LIMIT_S = 30
MEMORY_HEADROOM = 512 * 2**20  # beyond the child's address space after its imports
U64_ABSURD = (2**64 - 1, 2**63, 2**40, 2**32, 2**31 + 1)
U32_ABSURD = (2**32 - 1, 2**31, 99, 13, 4)


def mixed_types(name: str, array: np.ndarray) -> T:
    return {0: T.Q8_0, 1: T.Q4_1, 2: T.Q5_0}.get(len(name) % 4, T.F16)


def variants(valid: bytes, path: Path, rng: np.random.Generator) -> list[tuple[str, bytes]]:
    lay = layout(path)
    size = len(valid)
    out: list[tuple[str, bytes]] = []

    def put(label: str, offset: int, fmt: str, value: int) -> None:
        data = bytearray(valid)
        struct.pack_into(fmt, data, offset, value)
        out.append((label, bytes(data)))

    def pick(values: tuple[int, ...]) -> int:  # not rng.choice: it goes through float64
        return values[int(rng.integers(len(values)))]

    def flip(label: str, start: int, end: int, n_bytes: int) -> None:
        data = bytearray(valid)
        for at in rng.integers(start, end, n_bytes):
            data[at] ^= int(rng.integers(1, 256))
        out.append((label, bytes(data)))

    fields = list(lay.kv.values()) + list(lay.tensors.values())
    boundaries = sorted({o for parts in fields for o, _ in parts} | {0, 4, 8, 16, 24})
    for cut in rng.choice(boundaries, 60, replace=False).tolist() + \
            rng.integers(1, size, 60).tolist() + [lay.data_offset, size - 1]:
        out.append((f"truncated at {cut}", valid[:cut]))
    for i in range(30):
        flip(f"header flip {i}", 0, 24, int(rng.integers(1, 3)))
    for i in range(80):
        flip(f"key-value flip {i}", 24, lay.tensor_info_start, int(rng.integers(1, 4)))
    for i in range(80):
        flip(f"tensor info flip {i}", lay.tensor_info_start, lay.data_offset,
             int(rng.integers(1, 4)))
    for i in range(10):
        flip(f"data flip {i}", lay.data_offset, size, 4)  # harmless: must load
    for name in lay.tensors:
        at = lay.tensor_field(name, 5)
        flip(f"data offset flip {name}", at, at + 8, 1)
        (relative,) = struct.unpack_from("<Q", valid, at)
        put(f"data offset misaligned {name}", at, "<Q", relative + int(rng.integers(1, 32)))
        put(f"data offset absurd {name}", at, "<Q", pick(U64_ABSURD))
    for parts in fields:
        for offset, dtype in parts:
            # u64: counts, string and array lengths, dims, data offsets, 64-bit values;
            # u32: value, item and tensor types, n_dims, and values such as block_count
            fmt, absurd = {np.dtype(np.uint64): ("<Q", U64_ABSURD),
                           np.dtype(np.uint32): ("<I", U32_ABSURD)}.get(dtype, (None, ()))
            if fmt is not None:
                put(f"absurd {fmt} at {offset}", offset, fmt, pick(absurd))
                put(f"zero {fmt} at {offset}", offset, fmt, 0)
    for offset in (4, 8, 16):
        for value in U64_ABSURD[:3]:
            put(f"header field {offset} = {value}", offset, "<Q" if offset > 4 else "<I",
                value % 2**32 if offset == 4 else value)
    return out


def read_everything(path: Path) -> None:
    """What loading a model does with a file: every value, every tensor byte, the facts, the
    tokenizer (and a text through it and back, and a chat through its template)."""
    with GGUFFile(path) as g:
        assert all(v is not None for v in g.metadata.values())
        for t in g.tensors.values():
            assert t.dequantize().shape == t.shape
            int(t.raw.sum())  # touches every mapped byte
        ModelDescription.from_gguf(g)
        tokenizer = Tokenizer.from_gguf(g)
        tokenizer.decode(tokenizer.encode("Hello ✓ world\n"))
        tokenizer.encode_chat([{"role": "user", "content": "hi"}])


def run_child(variant_dir: Path) -> dict[str, object]:
    """In the child: cap the address space, then read every variant."""
    with open("/proc/self/statm") as f:
        vm_bytes = int(f.read().split()[0]) * resource.getpagesize()
    limit = vm_bytes + MEMORY_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    errors, slowest = 0, 0.0
    loaded: list[str] = []
    failures: list[str] = []
    for path in sorted(variant_dir.iterdir()):
        start = time.perf_counter()
        try:
            read_everything(path)
            loaded.append(path.name)
        except GGUFError as err:
            assert err.path == str(path) and err.reason, err
            errors += 1
        except (TokenizerError, TemplateError) as err:
            assert str(err).startswith(f"{path}: "), err
            errors += 1
        except BaseException:
            failures.append(f"{path.name}: {traceback.format_exc()}")
        slowest = max(slowest, time.perf_counter() - start)
    return {"errors": errors, "loaded": loaded, "failures": failures, "slowest_s": slowest}


def test_corrupted_files_end_in_a_clear_error(tmp_path: Path, rng: np.random.Generator) -> None:
    valid = write_gguf(tmp_path / "valid.gguf", "llama", llama_metadata(rng),
                       llama_tensors(rng), mixed_types)
    read_everything(valid)  # the original is fine
    variant_dir = tmp_path / "variants"
    variant_dir.mkdir()
    cases = variants(valid.read_bytes(), valid, rng)
    assert len(cases) >= MIN_VARIANTS
    labels = {}
    for i, (label, data) in enumerate(cases):
        (variant_dir / f"{i:04d}.gguf").write_bytes(data)
        labels[f"{i:04d}.gguf"] = label

    start = time.monotonic()
    child = subprocess.run(
        [sys.executable, "-m", "tests.test_gguf_fuzz", str(variant_dir)],
        capture_output=True, text=True, timeout=TIME_LIMIT_S, cwd=Path(__file__).parent.parent,
    )
    elapsed = time.monotonic() - start
    assert child.returncode == 0, child.stderr[-3000:]
    result = json.loads(child.stdout)
    failures = [f"{labels[f.split(':')[0]]} -> {f}" for f in result["failures"]]
    assert not failures, "\n".join(failures[:5])
    assert result["errors"] + len(result["loaded"]) == len(cases)
    loaded = {labels[name] for name in result["loaded"]}
    assert all(f"data flip {i}" in loaded for i in range(10))  # data bytes are not checked
    assert result["errors"] > len(cases) // 2  # most corruptions are caught, not ignored
    print(f"{len(cases)} variants: {result['errors']} clear errors, {len(loaded)} loaded, "
          f"{elapsed:.1f} s, slowest {result['slowest_s'] * 1000:.1f} ms")


if __name__ == "__main__":
    print(json.dumps(run_child(Path(sys.argv[1]))))
