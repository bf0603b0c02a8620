"""`vexel bench` on a small preset: the table, the JSON, and numbers that add up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest

from tests.helpers import benchmark_module


def test_bench_prints_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    trace = tmp_path / "steps.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "vexel_core.cli", "bench", "--random", "tiny", "--dtype", "f32",
         "-n", "6", "--prompt-len", "20", "--output-len", "5", "--cache-dir", str(tmp_path),
         "--kv-cache-memory", "16MiB", "--json-out", str(out), "--trace-steps", str(trace)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for label in ("generated tok/s", "TTFT p50/p90/p99", "ITL p50/p90/p99", "peak KV blocks",
                  "preemptions"):
        assert label in proc.stdout
    report = json.loads(out.read_text())
    assert report["engine"]["kv_cache_memory"] == "16MiB"
    assert report["engine"]["max_batch_size"] == 6  # bench's default: every request at once
    # the device's default: none on the CPU, every batch size (here 6) on a GPU
    on_gpu = mx.default_device() != mx.cpu
    assert report["engine"]["compiled_decode_rows"] == (6 if on_gpu else 0)
    assert "KV pool 16MiB" in " ".join(proc.stdout.split())  # the caption may wrap
    (vexel,) = report["results"]
    assert vexel["requests"] == 6 and vexel["generated_tokens"] == 6 * 5
    assert abs(vexel["generated_tok_per_s"] * vexel["wall_s"] - 30) < 1e-6 * 30
    assert 0 < vexel["peak_kv_blocks"] <= vexel["kv_blocks"]
    ttft = vexel["ttft_s"]
    assert 0 < ttft["p50"] <= ttft["p90"] <= ttft["p99"] <= vexel["wall_s"]
    # The step trace accounts for every computed token of the workload (not the warm-up's):
    # each prompt once, then one decode for every output token but the first.
    steps = [json.loads(line) for line in trace.read_text().splitlines()]
    assert sum(s["prefill_tokens"] for s in steps) == 6 * 20
    assert sum(s["decodes"] for s in steps) == 6 * 4
    assert all(n == ctx == 20 for s in steps for n, ctx in s["prefill_chunks"])
    assert [s["start_s"] for s in steps] == sorted(s["start_s"] for s in steps)
    assert all(s["launch_s"] >= s["submit_s"] >= 0 and s["wait_s"] >= 0 for s in steps)


@pytest.mark.parametrize("dtype", ["q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k",
                                   "q6_k", "q4_k_m", "q5_k_m"])
def test_random_quantized_model_has_sane_weights(dtype: str, tmp_path: Path) -> None:
    # every matrix of the --random file in the asked format (a mix: Q6_K where llama-quantize
    # puts it, below), its scales set (random bytes there would make NaN or weights up to
    # 65504 times a code): finite, and at most 128
    # times 0.5 / sqrt(columns) (Q8_0's largest code; the K formats' d is divided by their
    # sub-block scales, so that Q4_K and Q5_K reach ~32 and ~62 times it and Q6_K 64)
    from gguf import GGUFReader
    from gguf.quants import dequantize

    from vexel_core.bench.random_model import DTYPES, write_random_model
    from vexel_core.cli.bench import bench

    assert list(next(p for p in bench.params if p.name == "dtype").type.choices) == list(DTYPES)
    path = write_random_model(tmp_path / "m.gguf", "small", dtype)
    matrices = [t for t in GGUFReader(path).tensors if len(t.shape) == 2]
    assert len(matrices) == 2 + 7 * 4  # embedding, output, seven a block
    # llama-quantize's use_more_bits at 4 layers: layers 2 (every third past the first eighth)
    # and 3 (the last eighth)
    more_bits = {"output.weight", "blk.2.attn_v.weight", "blk.3.attn_v.weight",
                 "blk.2.ffn_down.weight", "blk.3.ffn_down.weight"}
    for t in matrices:
        mixed = dtype.endswith("_m") and t.name in more_bits
        assert t.tensor_type.name == ("Q6_K" if mixed else DTYPES[dtype]), t.name
        w = dequantize(t.data, t.tensor_type)
        bound = 128 * 0.5 / np.sqrt(w.shape[1])
        assert np.isfinite(w).all() and 0 < np.abs(w).max() <= bound, (t.name, np.abs(w).max())


def test_random_model_refuses_rows_its_blocks_cannot_pack(tmp_path: Path) -> None:
    from vexel_core.bench.random_model import write_random_model
    from vexel_core.errors import ConfigError

    with pytest.raises(ConfigError, match="blocks of 256 values; preset 'tiny' has rows of 128"):
        write_random_model(tmp_path / "m.gguf", "tiny", "q4_k")
    assert not list(tmp_path.iterdir())


def test_bench_refuses_a_peer_without_a_preset(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "vexel_core.cli", "bench", "--compare", "mlx-lm"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "--random" in proc.stderr
    assert "Traceback" not in proc.stderr


def _bench_with(tmp_path: Path, setup: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`vexel bench --random tiny --compare mlx-lm ARGS` in a fresh interpreter after *setup*
    (Python run first: what the peer should find)."""
    # console_main, as the `vexel` script: it ends the process with os._exit (see there why)
    code = f"import sys\n{setup}\nfrom vexel_core.cli import console_main\nconsole_main()"
    return subprocess.run(
        [sys.executable, "-c", code, "bench", "--random", "tiny", "--dtype", "f32", "-n", "2",
         "--prompt-len", "8", "--output-len", "3", "--cache-dir", str(tmp_path),
         "--kv-cache-memory", "16MiB", "--compare", "mlx-lm", *args],
        capture_output=True, text=True, timeout=300)


def test_bench_refuses_a_missing_peer_before_running(tmp_path: Path) -> None:
    # Without mlx-lm the comparison is refused before the random model is even written.
    proc = _bench_with(tmp_path, "sys.modules['mlx_lm'] = None")
    assert proc.returncode == 1 and "needs the mlx-lm package" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_bench_keeps_vexels_figures_when_the_peer_fails(tmp_path: Path) -> None:
    # A peer that fails (or a run cut short while it runs) leaves Vexel's report behind.
    out = tmp_path / "bench.json"
    setup = ("import vexel_core.bench.mlx_lm_peer as peer\n"
             "from vexel_core.errors import VexelError\n"
             "def broken(*args):\n"
             "    raise VexelError('the peer broke')\n"
             "peer.require_mlx_lm = lambda: None\n"  # CI installs no mlx-lm
             "peer.run_mlx_lm = broken")
    proc = _bench_with(tmp_path, setup, "--json-out", str(out))
    assert proc.returncode == 1 and "the peer broke" in proc.stderr
    assert "vexel:" in proc.stderr and "generated tok/s; now mlx-lm" in proc.stderr
    (vexel,) = json.loads(out.read_text())["results"]
    assert vexel["engine"] == "vexel" and vexel["generated_tokens"] == 2 * 3


def test_gpu_timeline_where_gives_each_grids_spread_and_the_last_launches(capsys) -> None:  # type: ignore[no-untyped-def]
    """benchmarks/gpu_timeline.py --where: a grid's mean beside its median shows a few slow
    launches (session 19 found the paged decode's that way); --last lists the last launches'
    durations in order. Spans are (start us, end us, name, grid)."""
    timeline = benchmark_module("gpu_timeline")
    durations = [10.0] * 9 + [110.0]  # one slow launch in ten
    spans = [(100.0 * i, 100.0 * i + d, "vx_paged_decode_t", "[8, 1, 1]")
             for i, d in enumerate(durations)] + [(5.0, 6.0, "rope_single", "[2, 2, 1]")]
    timeline.where(spans, "paged_decode", 1e6, last=3)
    out = capsys.readouterr().out
    assert "'paged_decode': 10 launches" in out
    assert "grid [8, 1, 1]: 10 x 20.0 us (p10 10.0, median 10.0, p90 20.0, max 110.0)" in out
    assert "last 3 launches, us: 10 10 110" in out


def test_alternate_finds_a_changes_patches_and_swaps_them_both_ways(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """benchmarks/alternate.py finds what an ab.py change patched by comparing Vexel's
    attributes before and after: a method replaced and an attribute added, both swapped out
    and back in; a change that patches nothing of Vexel's is refused."""
    alternate = benchmark_module("alternate")
    from vexel_core.model.layers import Norm, RMSNorm

    as_is = RMSNorm.add
    monkeypatch.setattr(RMSNorm, "add", as_is)  # restored after the test, whatever happens

    def change() -> None:
        RMSNorm.add = Norm.add  # type: ignore[method-assign]
        RMSNorm.extra = 1  # type: ignore[attr-defined]

    monkeypatch.setitem(alternate.ab.CHANGES, "--change", change)
    patches = alternate.arms("--change")
    assert set(patches["as is"]) == {(RMSNorm, "add"), (RMSNorm, "extra")}
    alternate.swap_in(patches["as is"])
    assert RMSNorm.add is as_is and not hasattr(RMSNorm, "extra")
    alternate.swap_in(patches["--change"])
    assert RMSNorm.add is Norm.add and RMSNorm.extra == 1  # type: ignore[attr-defined]
    alternate.swap_in(patches["as is"])

    monkeypatch.setitem(alternate.ab.CHANGES, "--nothing", lambda: None)
    with pytest.raises(SystemExit, match="changed no attribute"):
        alternate.arms("--nothing")


def test_spy_summary_counts_frames_under_a_frame() -> None:
    """benchmarks/spy_summary.py: collapsed stacks summed per frame (file and line dropped),
    each frame once per sample however deep it recurs, and --under keeping only the samples
    that pass through a frame, counted from that frame down; --without dropping the samples
    that pass through one; --through keeping them, whole stacks (their callers counted)."""
    spy = benchmark_module("spy_summary")
    lines = ["main (a.py:1);step (b.py:2);async_eval (c.py:3);eval_gpu (x.cpp:9) 5\n",
             "main (a.py:1);step (b.py:2);build (b.py:7) 3\n",
             "main (a.py:1);f (a.py:4);f (a.py:4) 2\n",
             "not a stack line\n"]
    total, inclusive, leaf = spy.summarise(lines, None)
    assert total == 10 and inclusive["main"] == 10 and inclusive["f"] == 2
    assert leaf == {"eval_gpu": 5, "build": 3, "f": 2}
    total, inclusive, leaf = spy.summarise(lines, "async_eval")
    assert total == 5 and "step" not in inclusive and leaf == {"eval_gpu": 5}
    total, inclusive, leaf = spy.summarise(lines, None, without="eval_gpu")
    assert total == 5 and leaf == {"build": 3, "f": 2}
    total, inclusive, leaf = spy.summarise(lines, None, through="eval_gpu")
    assert total == 5 and inclusive["step"] == 5 and "build" not in inclusive


def test_step_graph_counts_the_operations_of_a_graph(tmp_path: Path) -> None:
    """benchmarks/step_graph.py counts a built graph's operations by primitive, from what
    MLX's `export_to_dot` writes for it (here a small graph: a product, then glue), and the
    arrays they make (one more than operations where a split makes two)."""
    import mlx.core as mx

    step_graph = benchmark_module("step_graph")
    a = mx.ones((4, 4))
    out = (a @ a).reshape(16)[:3].astype(mx.float16)
    mx.export_to_dot(str(tmp_path / "g.dot"), out)
    counts = step_graph.primitives((tmp_path / "g.dot").read_text())
    assert counts["Matmul"] == 1 and counts["Reshape"] == 1 and counts["Slice"] == 1
    assert counts["AsType"] == 1
    # a split makes two arrays in one operation
    x, y = mx.split(a, 2, axis=0)
    mx.export_to_dot(str(tmp_path / "s.dot"), x @ y.T)
    text = (tmp_path / "s.dot").read_text()
    assert step_graph.primitives(text)["Split"] == 1
    assert step_graph.arrays_made(text) == sum(step_graph.primitives(text).values()) + 1


def test_serve_ready_waits_for_health_then_times_requests() -> None:
    """benchmarks/serve_ready.py polls /health through 503s (a server loading its model) until
    200, then times completions; a server that never turns healthy raises TimeoutError."""
    import http.server
    import threading

    serve_ready = benchmark_module("serve_ready")
    seen = {"health": 0, "completions": 0}
    ready = threading.Event()

    class Loading(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            seen["health"] += 1
            self.send_response(200 if seen["health"] > 2 and ready.is_set() else 503)
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            seen["completions"] += 1
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Loading)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        with pytest.raises(TimeoutError, match="/health"):
            serve_ready.wait_healthy(base, timeout=0.5)
        ready.set()
        serve_ready.wait_healthy(base, timeout=5)
        assert seen["health"] >= 3
        assert serve_ready.complete(base) >= 0 and seen["completions"] == 1
    finally:
        server.shutdown()


def test_ff_phases_cuts_apply_to_the_kernel_once(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/ff_phases.py times copies of cuda/feed_forward.cuh with one part cut out:
    each cut's text must stand in the kernel exactly once (a kernel change that moves it makes
    the script stop, naming the cut), and the copy's header includes the cut file in the
    kernel's place; its kernels take names of their own (the tag)."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent / "benchmarks"))
    ff_phases = benchmark_module("ff_phases")
    kernel = ff_phases.KERNEL.read_text()
    names: list[str] = []
    monkeypatch.setattr(mx.fast, "cuda_kernel", lambda name, *a, **kw: names.append(name))
    for tag, (old, new) in ff_phases.CUTS.items():
        lib = ff_phases.CutLibrary(tag, old, new, tmp_path)
        cut = tmp_path / f"feed_forward_{tag.replace(' ', '_')}.cuh"
        assert cut.read_text() != kernel and new in cut.read_text()
        assert str(cut) in lib._header and str(ff_phases.KERNEL) not in lib._header
        lib._kernel("feed_forward", 0)
        assert names[-1] == f"vx_feed_forward_{tag.replace(' ', '_')}"
    with pytest.raises(SystemExit, match="'gone'"):
        ff_phases.CutLibrary("gone", "no such text", "", tmp_path)
