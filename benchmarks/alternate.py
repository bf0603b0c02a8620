"""The engine as it is against one `benchmarks/ab.py` change, alternated within one process
(GPU machine):

    python benchmarks/alternate.py --rounds 8 --tokens 256 --segment-compile

A GPU machine's host changes speed by up to 1.5x between episodes of tens of seconds, so two
arms run as separate processes one after the other can differ by more than the change between
them. Here one engine decodes one request per arm and round, the arms' order rotated each
round, and each run's median step (wall time of `LLMEngine.step`, the first five steps left
out) is printed, then whether every run's greedy tokens were the same; the verdict is the
median over rounds of each round's difference. The change's patches are found by comparing
every attribute of Vexel's modules and classes before and after it is applied, and swapped in
and out between runs; each arm keeps its own compiled steps.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import mlx.core as mx

from vexel_core.bench.random_model import write_random_model
from vexel_core.config import EngineSettings
from vexel_core.engine import GenerationRequest, LLMEngine, load_model
from vexel_core.model.decoder import DecoderLM
from vexel_core.plugins import load_plugins
from vexel_core.sampling.params import SamplingParams

sys.path.insert(0, str(Path(__file__).parent))
import ab  # noqa: E402


def attributes() -> dict[tuple[object, str], object]:
    """Every attribute of Vexel's modules and of the classes they define."""
    found: dict[tuple[object, str], object] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("vexel_core"):
            continue
        for key, value in vars(module).items():
            found[(module, key)] = value
            if isinstance(value, type) and value.__module__ == name:
                for attr, member in vars(value).items():
                    found[(value, attr)] = member
    return found


ABSENT = object()  # an attribute that one arm does not have


def arms(flag: str) -> dict[str, dict[tuple[object, str], object]]:
    """Each arm's values of the attributes that *flag*'s change replaces or adds (`ABSENT`
    where an arm lacks one); the change stays applied. A change that touches no attribute
    (one that mutates an object in place, or patches MLX) cannot be swapped: refused."""
    before = attributes()
    ab.CHANGES[flag]()
    after = attributes()
    changed = [key for key, value in after.items() if before.get(key, ABSENT) is not value]
    changed += [key for key in before if key not in after]
    if not changed:
        raise SystemExit(f"{flag} changed no attribute of vexel_core: it cannot be swapped")
    return {"as is": {key: before.get(key, ABSENT) for key in changed},
            flag: {key: after.get(key, ABSENT) for key in changed}}


def swap_in(values: dict[tuple[object, str], object]) -> None:
    """Give each attribute its value in one arm (`arms`)."""
    for (owner, attr), value in values.items():
        if value is ABSENT:
            if attr in vars(owner):
                delattr(owner, attr)
        else:
            setattr(owner, attr, value)


def median_step_ms(engine: LLMEngine, prompt: int, tokens: int, tag: str
                   ) -> tuple[float, list[int]]:
    """One greedy request's median step (ms) and its tokens."""
    engine.add_request(GenerationRequest(tag, list(range(5, 5 + prompt)),
                                         SamplingParams(temperature=0.0), tokens,
                                         ignore_eos=True))
    steps, out = [], []
    while engine.has_work():
        t = time.perf_counter()
        for o in engine.step():
            out.extend(o.token_ids)
        steps.append(time.perf_counter() - t)
    return 1e3 * statistics.median(steps[5:]), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="llama3-8b")
    ap.add_argument("--dtype", default="q4_0")
    ap.add_argument("--cache", default="/tmp/vx")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--tokens", type=int, default=128)
    a, change = ap.parse_known_args()  # what is left: one benchmarks/ab.py change
    if len(change) != 1 or change[0] not in ab.CHANGES:
        ap.error(f"give one of benchmarks/ab.py's changes: {', '.join(ab.CHANGES)}")
    host = load_plugins()
    path = write_random_model(Path(a.cache) / f"random-{a.preset}-{a.dtype}.gguf", a.preset,
                              a.dtype)
    engine = LLMEngine(load_model(path, host),
                       EngineSettings(max_batch_size=1, kv_cache_memory="4GiB",
                                      compiled_decode_rows=1), host)
    model = engine.model
    assert isinstance(model, DecoderLM)
    patches = arms(change[0])
    traces: dict[str, dict] = {name: {} for name in patches}  # each arm its own traces

    def use(name: str) -> None:
        swap_in(patches[name])
        model._steps = traces[name]

    names = list(patches)
    generated: dict[str, set[tuple[int, ...]]] = {name: set() for name in names}
    for name in names:  # warm-up: traces, kernels' first compiles
        use(name)
        generated[name].add(tuple(median_step_ms(engine, a.prompt, a.tokens, f"warm-{name}")[1]))
    results: dict[str, list[float]] = {name: [] for name in names}
    for r in range(a.rounds):
        order = names[r % 2:] + names[:r % 2]
        for name in order:
            use(name)
            ms, out = median_step_ms(engine, a.prompt, a.tokens, f"{name}-{r}")
            results[name].append(ms)
            generated[name].add(tuple(out))
        print(f"round {r}: " + "  ".join(f"{n} {results[n][-1]:.3f} ms" for n in names),
              flush=True)
    diffs = [b - c for b, c in zip(*results.values(), strict=True)]
    print("median step ms: " + "  ".join(f"{n} {statistics.median(results[n]):.3f}"
                                         for n in names)
          + f"  ({names[0]}) - ({names[1]}), median of rounds: "
          + f"{statistics.median(diffs):+.3f} ms")
    alike = len(set.union(*generated.values())) == 1  # one sequence in every run
    print(f"greedy tokens: {'the same in every run of both arms' if alike else 'DIFFER'} "
          f"({', '.join(f'{n}: {len(g)} sequence(s)' for n, g in generated.items())})")
    mx.synchronize()


if __name__ == "__main__":
    main()
