"""``vexel generate``: stream one completion of a prompt to stdout."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import click

from vexel_core.cli.options import (
    common_options,
    engine_options,
    sampling_options,
    settings_from_cli,
)


@click.command()
@click.argument("prompt", required=False, default=None)
@click.option("-m", "--model", type=click.Path(dir_okay=False), default=None,
              help="GGUF file (default: the shipped vexel-tiny).")
@click.option("-n", "--max-tokens", type=click.IntRange(min=1), default=256, show_default=True)
@click.option("--stop", multiple=True, help="Stop string (repeatable).")
@click.option("--chat", is_flag=True, help="Wrap the prompt in the model's chat template.")
@click.option("--system", default=None, help="System message (with --chat).")
@click.option("--ignore-eos", is_flag=True, help="Keep going past end-of-sequence tokens.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (text, token ids, finish reason, timings).")
@sampling_options
@engine_options
@common_options
def generate(prompt: str | None, model: str | None, max_tokens: int, stop: tuple[str, ...],
             chat: bool, system: str | None, ignore_eos: bool, as_json: bool,
             **kw: Any) -> None:
    """Continue PROMPT (or standard input when PROMPT is '-' or absent)."""
    from vexel_core.cli.options import sampling_from_cli

    if prompt is None or prompt == "-":
        if sys.stdin.isatty() and prompt is None:
            raise click.UsageError("give a PROMPT, or '-' to read it from standard input")
        prompt = sys.stdin.read()
    sampling = sampling_from_cli(kw)
    settings = settings_from_cli(model=model, **kw)
    asyncio.run(_run(settings, prompt, max_tokens, list(stop), chat, system, ignore_eos,
                     sampling, as_json))


async def _run(settings: Any, prompt: str, max_tokens: int, stop: list[str], chat: bool,
               system: str | None, ignore_eos: bool, sampling: Any, as_json: bool) -> None:
    import mlx.core as mx

    from vexel_core.engine import GenerationRequest, start_engine

    t_load = time.perf_counter()
    engine = start_engine(settings)
    try:
        tok = engine.tokenizer
        if chat:
            messages = ([{"role": "system", "content": system}] if system else [])
            messages.append({"role": "user", "content": prompt})
            ids = tok.encode_chat(messages)
        else:
            ids = tok.encode(prompt)
        request = GenerationRequest("generate", ids, sampling, max_tokens, stop,
                                    ignore_eos=ignore_eos)
        t0 = time.perf_counter()
        load_s = t0 - t_load
        t_first = None
        text, token_ids, finish = [], [], None
        async for out in engine.generate(request):
            if t_first is None:
                t_first = time.perf_counter()
            token_ids += out.token_ids
            text.append(out.text)
            if not as_json and out.text:
                sys.stdout.write(out.text)
                sys.stdout.flush()
            finish = out.finish_reason
        t_end = time.perf_counter()
    finally:
        engine.shutdown()
    t_first = t_first or t_end
    n_gen = len(token_ids)
    prompt_tps = len(ids) / max(t_first - t0, 1e-9)
    gen_tps = (n_gen - 1) / (t_end - t_first) if n_gen > 1 and t_end > t_first else 0.0
    peak_mib = mx.get_peak_memory() / 2**20
    if as_json:
        click.echo(json.dumps({
            "text": "".join(text),
            "prompt_token_ids": ids,
            "token_ids": token_ids,
            "finish_reason": finish.value if finish else None,
            "timings": {
                "load_s": round(load_s, 4),
                "prompt_tokens": len(ids),
                "prompt_s": round(t_first - t0, 4),
                "prompt_tokens_per_s": round(prompt_tps, 2),
                "generated_tokens": n_gen,
                "generation_s": round(t_end - t_first, 4),
                "generation_tokens_per_s": round(gen_tps, 2),
                "peak_memory_mib": round(peak_mib, 1),
            },
        }))
    else:
        sys.stdout.write("\n")
        click.echo(
            f"[prompt: {len(ids)} tokens, {prompt_tps:.1f} tok/s | generated: {n_gen} tokens, "
            f"{gen_tps:.1f} tok/s | finish: {finish.value if finish else '-'} | "
            f"peak memory: {peak_mib:.0f} MiB]", err=True)
