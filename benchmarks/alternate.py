"""The whole-step compile against the 33 compiled segments (``ab.py --segment-compile``),
alternated within one process (GPU machine):

    python benchmarks/alternate.py --preset llama3-8b --dtype q4_0 --rounds 6 --tokens 128

A GPU machine's host changes speed by up to 1.5x between episodes of tens of seconds, so two
arms run as separate processes one after the other can differ by more than the change between
them. Here one engine decodes one request per arm and round, the arms' order rotated each
round, and each run's median step (wall time of `LLMEngine.step`, the first five steps left
out) is printed; the verdict is the median over rounds of each round's difference.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import mlx.core as mx

from vexel_core.bench.random_model import write_random_model
from vexel_core.config import EngineSettings
from vexel_core.engine import GenerationRequest, LLMEngine, load_model
from vexel_core.engine import runner as runner_module
from vexel_core.model.decoder import DecoderLM
from vexel_core.plugins import load_plugins
from vexel_core.sampling.params import SamplingParams

sys.path.insert(0, str(Path(__file__).parent))
import ab  # noqa: E402


def arms() -> dict[str, dict[str, Any]]:
    """Each arm's `DecoderLM._decode_compiled` and `runner.table_width`."""
    whole = {"decode": DecoderLM._decode_compiled, "width": runner_module.table_width}
    ab.segment_compile()
    segments = {"decode": DecoderLM._decode_compiled, "width": runner_module.table_width}
    return {"whole": whole, "segments": segments}


def median_step_ms(engine: LLMEngine, prompt: int, tokens: int, tag: str) -> float:
    engine.add_request(GenerationRequest(tag, list(range(5, 5 + prompt)),
                                         SamplingParams(temperature=0.0), tokens,
                                         ignore_eos=True))
    steps = []
    while engine.has_work():
        t = time.perf_counter()
        engine.step()
        steps.append(time.perf_counter() - t)
    return 1e3 * statistics.median(steps[5:])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="llama3-8b")
    ap.add_argument("--dtype", default="q4_0")
    ap.add_argument("--cache", default="/tmp/vx")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--tokens", type=int, default=128)
    a = ap.parse_args()
    host = load_plugins()
    path = write_random_model(Path(a.cache) / f"random-{a.preset}-{a.dtype}.gguf", a.preset,
                              a.dtype)
    engine = LLMEngine(load_model(path, host),
                       EngineSettings(max_batch_size=1, kv_cache_memory="4GiB",
                                      compiled_decode_rows=1), host)
    model = engine.model
    assert isinstance(model, DecoderLM)
    patches = arms()
    traces: dict[str, dict] = {name: {} for name in patches}  # each arm its own traces

    def use(name: str) -> None:
        DecoderLM._decode_compiled = patches[name]["decode"]  # type: ignore[method-assign]
        runner_module.table_width = patches[name]["width"]  # type: ignore[assignment]
        model._steps = traces[name]

    names = list(patches)
    for name in names:  # warm-up: traces, kernels' first compiles
        use(name)
        median_step_ms(engine, a.prompt, a.tokens, f"warm-{name}")
    results: dict[str, list[float]] = {name: [] for name in names}
    for r in range(a.rounds):
        order = names[r % 2:] + names[:r % 2]
        for name in order:
            use(name)
            results[name].append(median_step_ms(engine, a.prompt, a.tokens, f"{name}-{r}"))
        print(f"round {r}: " + "  ".join(f"{n} {results[n][-1]:.3f} ms" for n in names),
              flush=True)
    diffs = [w - s for w, s in zip(results["whole"], results["segments"], strict=True)]
    print("median step ms: " + "  ".join(f"{n} {statistics.median(results[n]):.3f}"
                                         for n in names)
          + f"  whole - segments, median of rounds: {statistics.median(diffs):+.3f} ms")
    mx.synchronize()


if __name__ == "__main__":
    main()
