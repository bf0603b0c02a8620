"""Running a model by hand for tests: one sequence, whole prompt, every position's logits."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import mlx.core as mx
import numpy as np
import pytest

from vexel_core.attention.base import AttentionBatch
from vexel_core.engine.request import RequestOutput
from vexel_core.gguf.reader import GGUFFile
from vexel_core.gguf.writer import finish
from vexel_core.kvcache.blocks import BlockManager
from vexel_core.kvcache.pool import KVPool
from vexel_core.model.architecture import CausalLM
from vexel_core.plugins import PluginHost


def fresh_seed(what: str = "seed") -> int:
    """A new seed each run, printed as ``<what>: <seed>`` (pytest shows a failing test's
    output); ``VEXEL_TEST_SEED=<seed>`` replays it."""
    seed = int(os.environ.get("VEXEL_TEST_SEED") or np.random.default_rng().integers(1 << 62))
    print(f"{what}: {seed}")
    return seed


def benchmark_module(name: str) -> ModuleType:
    """benchmarks/<name>.py imported as a module (the folder is not a package), for tests of
    the helpers the GPU machine's scripts rely on."""
    path = Path(__file__).parent.parent / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def examples(n: int) -> int:
    """How many examples a Hypothesis search runs: *n* (CI's budget) times ``VEXEL_SEARCH``,
    which a longer search by hand sets (``VEXEL_SEARCH=20 pytest tests/test_server_fuzz.py``),
    or a shorter one where each example costs more (``VEXEL_SEARCH=0.1`` on the GPU machine,
    where the engine searches did not finish in 370 s: notes/engine-gpu.md, session 22)."""
    return max(1, round(n * float(os.environ.get("VEXEL_SEARCH", "1"))))


def search_timeout(seconds: int) -> pytest.MarkDecorator:
    """A time limit for a Hypothesis search, scaled like `examples` when the search is longer:
    a bug that hangs the engine fails the test instead of the whole CI run."""
    return pytest.mark.timeout(max(seconds, examples(seconds)))


def load(path: Path, host: PluginHost) -> CausalLM:
    g = GGUFFile(path)
    return host.architectures.get(g.architecture).load(g, host)


def prompt_logits(model: CausalLM, tokens: list[int], host: PluginHost,
                  backend: str = "sdpa") -> np.ndarray:
    """Logits ``[len(tokens), V]`` of one sequence computed in one step."""
    bm = BlockManager(-(-len(tokens) // 16) + 1, 16)
    pool = KVPool(model.kv_spec, bm.num_blocks, 16)
    table = bm.match_prefix(tokens)
    bm.allocate(table, len(tokens))
    n = len(tokens)
    batch = AttentionBatch(
        pool=pool, backend=host.attention_backends.get(backend),
        positions=mx.arange(n, dtype=mx.int32),
        slot_mapping=mx.array(bm.slots(table, 0, n), dtype=mx.int32),
        block_tables=mx.array([table.blocks], dtype=mx.int32),
        query_lens=[n], context_lens=[n], logits_rows=mx.arange(n, dtype=mx.int32),
    )
    return np.array(model(mx.array(tokens, dtype=mx.int32), batch))


def llama_cpp_logits(path: Path, tokens: list[int], n_ctx: int = 512) -> np.ndarray:
    import llama_cpp

    llm = llama_cpp.Llama(str(path), logits_all=True, verbose=False, n_ctx=n_ctx, n_threads=2)
    llm.eval(tokens)
    out = np.array(llm.scores[: len(tokens)], dtype=np.float32)
    llm.close()
    return out


def llama_cpp_greedy(path: Path, tokens: list[int], n: int, n_ctx: int = 512) -> list[int]:
    """llama.cpp's greedy continuation (argmax of its own logits at every step)."""
    return llama_cpp_greedy_margins(path, tokens, n, n_ctx)[0]


def llama_cpp_greedy_margins(path: Path, tokens: list[int], n: int,
                             n_ctx: int = 512) -> tuple[list[int], list[float]]:
    """llama.cpp's greedy tokens and, at each step, the gap between its best two logits."""
    import llama_cpp

    # logits_all: without it llama_cpp reads the last position's scores back as zeros
    llm = llama_cpp.Llama(str(path), logits_all=True, verbose=False, n_ctx=n_ctx, n_threads=2)
    llm.eval(tokens)
    out, margins = [], []
    for _ in range(n):
        scores = np.array(llm.scores[llm.n_tokens - 1])
        top2 = np.sort(scores)[-2:]
        out.append(int(np.argmax(scores)))
        margins.append(float(top2[1] - top2[0]))
        llm.eval([out[-1]])
    llm.close()
    return out, margins


def assert_same_greedy(ours: list[int], ref: list[int], margins: list[float],
                       tie: float) -> None:
    """Greedy continuations must be identical; the one excuse is a near tie in llama.cpp's
    own logits (gap below *tie*, within the two engines' stated logit agreement), after
    which the sequences legitimately part and the rest cannot be compared."""
    for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
        if a != b:
            assert margins[i] < tie, (f"token {i}: ours {a}, llama.cpp {b}, whose margin "
                                      f"{margins[i]:.4f} is not a near tie (< {tie})")
            return


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


def dequantized_copy(src: Path, dst: Path) -> Path:
    """The same model with every tensor dequantized to F32 (gguf's reference)."""
    import gguf

    reader = gguf.GGUFReader(str(src))
    writer = gguf.GGUFWriter(str(dst), str(reader.fields["general.architecture"].contents()))
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name == "general.architecture":
            continue
        value = field.contents()
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, value, vtype, sub_type=sub)
    for t in reader.tensors:
        data = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        writer.add_tensor(t.name, data.reshape([int(d) for d in reversed(t.shape)]))
    finish(writer)
    return dst


def engine_for(path: Path, host: PluginHost, **engine_settings: object):  # type: ignore[no-untyped-def]
    """A synchronous `LLMEngine` on *path* with small-test settings."""
    from vexel_core.config import EngineSettings
    from vexel_core.engine import LLMEngine, load_model

    settings = EngineSettings(**{"kv_cache_memory": "64MiB", **engine_settings})  # type: ignore[arg-type]
    return LLMEngine(load_model(path, host), settings, host)


def run_to_completion(engine, requests) -> dict[str, dict[int, list[int]]]:  # type: ignore[no-untyped-def]
    """Queue *requests*, step until done; token ids by request id and choice index."""
    out: dict[str, dict[int, list[int]]] = {}
    for r in requests:
        engine.add_request(r)
        out[r.request_id] = {}
    while engine.has_work():
        for o in engine.step():
            out[o.request_id].setdefault(o.index, []).extend(o.token_ids)
    return out


Trace = list[tuple[int, dict[int, float]]]  # each token with its step's top candidates
Traced = dict[str, Trace]


def trace(out: RequestOutput) -> Trace:
    """*out*'s tokens, each with its step's top candidates ``{token: logprob}`` (a request
    that asks for top log-probs)."""
    return [(lp.token_id, dict(lp.top)) for lp in out.logprobs or []]


def run_traced(engine, requests) -> Traced:  # type: ignore[no-untyped-def]
    """Like `run_to_completion` for requests of one choice that ask for top log-probs: per
    request, each token with its step's top candidates ``{token: logprob}``."""
    out: Traced = {r.request_id: [] for r in requests}
    for r in requests:
        engine.add_request(r)
    while engine.has_work():
        for o in engine.step():
            out[o.request_id] += trace(o)
    return out


def run_choices(engine, request) -> dict[int, Trace]:  # type: ignore[no-untyped-def]
    """*request* (any ``n``, asking for top log-probs) run to the end on *engine*: each
    choice's `trace`, by index."""
    out: dict[int, Trace] = {}
    engine.add_request(request)
    while engine.has_work():
        for o in engine.step():
            out.setdefault(o.index, []).extend(trace(o))
    return out


# How far apart two candidates' log-probs may be and still swap between two runs of one
# request batched differently, by the dtype the model computes in (float32 on the CPU,
# bfloat16 on GPUs). Different batch shapes mean different kernels and summation orders (on
# CUDA, products are not batch-invariant), so logits may differ by rounding: ~1e-6 in float32
# (1e-4 allowed); in bfloat16 one unit in the last place of a logit between 8 and 16 is 2^-4,
# and two runs may round it differently (two units allowed).
NEAR_TIE = {mx.float32: 1e-4, mx.float16: 2 * 2.0**-6, mx.bfloat16: 2 * 2.0**-4}


def assert_same_runs(got: Traced, want: Traced, dtype: mx.Dtype) -> None:
    """Greedy runs agree token for token, except that a sequence may part at a near-tie:
    where the tokens first differ, each run's choice must be among the other run's top
    candidates, within `NEAR_TIE` of its best; after that the continuations legitimately
    differ. Any other difference (a wrong cache entry, a wrong mask) fails."""
    tie = NEAR_TIE[dtype]
    assert got.keys() == want.keys()
    for rid in want:
        a, b = got[rid], want[rid]
        assert len(a) == len(b), (rid, len(a), len(b))
        for i, ((ta, top_a), (tb, top_b)) in enumerate(zip(a, b, strict=True)):
            if ta == tb:
                continue
            # each run's choice was within `tie` of the other's in the other run
            tied = (tb in top_a and top_a[ta] - top_a[tb] <= tie
                    and ta in top_b and top_b[tb] - top_b[ta] <= tie)
            assert tied, f"{rid} token {i}: {ta} vs {tb}, candidates {top_a} vs {top_b}"
            break


def greedy_engine(path: Path, tokens: list[int], n: int, host: PluginHost) -> list[int]:
    from vexel_core.engine import GenerationRequest
    from vexel_core.sampling.params import SamplingParams

    engine = engine_for(path, host)
    req = GenerationRequest("g", tokens, SamplingParams(temperature=0.0), max_tokens=n,
                            ignore_eos=True)
    return run_to_completion(engine, [req])["g"][0]
