"""``vexel bench``: concurrent synthetic requests through the AsyncEngine, beside mlx-lm."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from vexel_core.cli.options import common_options, engine_options, settings_from_cli


@click.command()
@click.option("-m", "--model", type=click.Path(dir_okay=False), default=None,
              help="GGUF file (default: the shipped vexel-tiny, unless --random).")
@click.option("--random", "preset", default=None,
              help="Random weights of a real shape: llama3-8b, llama3-1b, small, tiny.")
@click.option("--dtype",
              type=click.Choice(["bf16", "f16", "f32", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1",
                                 "q4_k", "q5_k", "q6_k", "q4_k_m", "q5_k_m"]),
              default="bf16", show_default=True, help="Tensor type of the --random model.")
@click.option("-n", "--requests", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--prompt-len", type=click.IntRange(min=1), default=128, show_default=True)
@click.option("--output-len", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Arrivals per second (Poisson); default: all at once.")
@click.option("--compare", type=click.Choice(["mlx-lm"]), default=None,
              help="Run the same workload through a peer in this process (needs --random).")
@click.option("--json-out", type=click.Path(dir_okay=False), default=None,
              help="Write the results as JSON here (also printed with --json).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--trace-steps", type=click.Path(dir_okay=False), default=None,
              help="Write one JSON line per engine step of the workload here: host time "
                   "launching it, time waiting for the step before, decodes and prompt chunks.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Where --random files are written (default: $VEXEL_CACHE or ~/.cache/vexel).")
@engine_options
@common_options
def bench(model: str | None, preset: str | None, dtype: str, requests: int, prompt_len: int,
          output_len: int, rate: float | None, compare: str | None, json_out: str | None,
          as_json: bool, trace_steps: str | None, cache_dir: str | None, **kw: Any) -> None:
    """Measure throughput and latency of concurrent requests."""
    from vexel_core.bench.random_model import write_random_model
    from vexel_core.bench.workload import Workload
    from vexel_core.engine.core import compiled_decode_rows

    if compare and not preset:
        raise click.UsageError("--compare needs --random PRESET (the peer cannot read GGUF blocks)")
    if compare == "mlx-lm":  # before anything runs, so that a missing peer costs nothing
        from vexel_core.bench.mlx_lm_peer import require_mlx_lm, run_mlx_lm

        require_mlx_lm()
    if preset:
        if model:
            raise click.UsageError("give either -m MODEL or --random PRESET, not both")
        folder = Path(cache_dir or os.environ.get("VEXEL_CACHE", "~/.cache/vexel")).expanduser()
        folder.mkdir(parents=True, exist_ok=True)
        model = str(write_random_model(folder / f"random-{preset}-{dtype}.gguf", preset, dtype))
    if kw.get("max_batch_size") is None:
        kw["max_batch_size"] = requests
    settings = settings_from_cli(model=model, **kw)
    workload = Workload(requests, prompt_len, output_len, rate)
    head = {
        "model": model, "preset": preset, "dtype": dtype if preset else None,
        "workload": workload.__dict__,
        "attention_backend": settings.engine.attention_backend,
        # the settings that move throughput most, so that a report says what it measured
        "engine": {**settings.engine.model_dump(include={
            "max_batch_size", "max_batched_tokens", "prefill_chunk", "kv_cache_memory",
            "kv_block_size"}), "compiled_decode_rows": compiled_decode_rows(settings.engine)},
    }
    results = [_run_vexel(settings, workload, trace_steps)]
    if compare == "mlx-lm":
        assert preset is not None
        # Vexel's figures first, so that they survive a peer that fails or is cut short
        _report(head, results, json_out)
        click.echo(f"vexel: {results[0].generated_tok_per_s:.1f} generated tok/s; now mlx-lm",
                   err=True)
        results.append(run_mlx_lm(preset, dtype, workload))
    report = _report(head, results, json_out)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        _print_table(results, report)


def _report(head: dict[str, Any], results: list[Any], json_out: str | None) -> dict[str, Any]:
    """*head* with *results* (and Vexel's ratio to the peer), written to *json_out* if given."""
    report = {**head, "results": [r.as_dict() for r in results]}
    if len(results) == 2 and results[1].generated_tok_per_s:
        report["ratio_vs_peer"] = results[0].generated_tok_per_s / results[1].generated_tok_per_s
    if json_out:
        Path(json_out).write_text(json.dumps(report, indent=2))
    return report


def _run_vexel(settings: Any, workload: Any, trace_steps: str | None) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from vexel_core.bench.workload import run_workload
    from vexel_core.engine import start_engine

    engine = start_engine(settings)
    steps: list[Any] | None = [] if trace_steps else None
    try:
        total = workload.num_requests * workload.output_len
        with Progress("[progress.description]{task.description}", BarColumn(),
                      MofNCompleteColumn(), TimeElapsedColumn(), transient=True) as bar:
            task = bar.add_task("vexel: generated tokens", total=total)
            result = asyncio.run(run_workload(engine, workload,
                                              lambda n: bar.advance(task, n), steps))
    finally:
        engine.shutdown()
    if trace_steps and steps:
        origin = steps[0].start_s
        with open(trace_steps, "w") as f:
            for rec in steps:
                f.write(json.dumps({**asdict(rec), "start_s": rec.start_s - origin}) + "\n")
    return result


def _print_table(results: list[Any], report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    w = report["workload"]
    e = report["engine"]
    table = Table(title=f"{w['num_requests']} requests x {w['prompt_len']} prompt + "
                        f"{w['output_len']} output tokens"
                        + (f" ({report['preset']}, {report['dtype']})" if report["preset"] else ""),
                  caption=f"steps of at most {e['max_batched_tokens']} tokens, KV pool "
                          f"{e['kv_cache_memory']}, {report['attention_backend']} attention")
    table.add_column("metric")
    for r in results:
        table.add_column(r.engine, justify="right")
    rows = [
        ("requests/s", lambda r: f"{r.requests_per_s:.2f}"),
        ("generated tok/s", lambda r: f"{r.generated_tok_per_s:.1f}"),
        ("prompt tok/s", lambda r: f"{r.prompt_tok_per_s:.1f}"),
        ("TTFT p50/p90/p99 (ms)", lambda r: "/".join(f"{v * 1e3:.0f}" for v in r.ttft_s.values())),
        ("ITL p50/p90/p99 (ms)", lambda r: "/".join(f"{v * 1e3:.1f}" for v in r.itl_s.values())),
        ("peak memory (GiB)", lambda r: f"{r.peak_memory_gib:.2f}"),
        ("peak KV blocks", lambda r: f"{r.peak_kv_blocks}/{r.kv_blocks}" if r.kv_blocks else "-"),
        ("preemptions", lambda r: str(r.preemptions) if r.engine == "vexel" else "-"),
        ("wall (s)", lambda r: f"{r.wall_s:.2f}"),
    ]
    for name, fmt in rows:
        table.add_row(name, *(fmt(r) for r in results))
    Console(stderr=False).print(table)
    if "ratio_vs_peer" in report:
        click.echo(f"vexel / {results[1].engine} generated tok/s: {report['ratio_vs_peer']:.2f}x")
