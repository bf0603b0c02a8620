"""Options shared by several subcommands, and turning them into settings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from vexel_core.config import Settings, load_settings, set_settings
from vexel_core.logs import configure_logging
from vexel_core.plugins import set_host


def common_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--config, --log-level, --log-format: every command that loads a model takes them."""
    f = click.option("--log-format", type=click.Choice(["console", "json"]), default=None,
                     help="Log lines readable (console) or one JSON object each.")(f)
    f = click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
                     default=None, help="Least severe log level shown.")(f)
    f = click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
                     help="TOML settings file (flags > VEXEL_* env > file > defaults).")(f)
    return f


def engine_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The engine's flags (names kept from the seed: --max-batch-size, --context-len)."""
    for name, kind, text in reversed([
        ("--context-len", click.IntRange(min=16), "Tokens per sequence at most."),
        ("--max-batch-size", click.IntRange(min=1), "Running sequences at most."),
        ("--attention-backend", str, "Registered attention backend (sdpa, paged, ...)."),
        ("--kv-cache-memory", str, "KV pool: bytes with a unit ('2GiB') or a fraction."),
        ("--kv-block-size", click.Choice(["8", "16", "32", "64", "128"]), "Tokens per block."),
        ("--max-batched-tokens", click.IntRange(min=1), "Tokens per engine step at most."),
    ]):
        f = click.option(name, type=kind, default=None, help=text)(f)
    return f


_ENGINE_FLAGS = ("context_len", "max_batch_size", "attention_backend", "kv_cache_memory",
                 "kv_block_size", "max_batched_tokens")


def sampling_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """llama.cpp's sampling flags and defaults."""
    for name, kind, default, text in reversed([
        ("--temperature", click.FloatRange(0, 2), 0.8, "0 = greedy."),
        ("--top-k", click.IntRange(min=0), 40, "0 = off."),
        ("--top-p", click.FloatRange(0, 1, min_open=True), 0.95, "1 = off."),
        ("--min-p", click.FloatRange(0, 1), 0.05, "0 = off."),
        ("--repeat-penalty", click.FloatRange(0, min_open=True), 1.0, "1 = off."),
        ("--frequency-penalty", click.FloatRange(-2, 2), 0.0, "0 = off."),
        ("--presence-penalty", click.FloatRange(-2, 2), 0.0, "0 = off."),
        ("--seed", int, None, "Reproducible sampling."),
    ]):
        f = click.option(name, type=kind, default=default, show_default=default is not None,
                         help=text)(f)
    return f


_SAMPLING_FLAGS = ("temperature", "top_k", "top_p", "min_p", "repeat_penalty",
                   "frequency_penalty", "presence_penalty", "seed")


def sampling_from_cli(kw: dict[str, Any]) -> Any:
    """Pop the sampling flags out of a command's keyword arguments."""
    from vexel_core.sampling.params import SamplingParams

    v = {k: kw.pop(k) for k in _SAMPLING_FLAGS}
    return SamplingParams(
        temperature=v["temperature"], top_k=v["top_k"], top_p=v["top_p"], min_p=v["min_p"],
        repetition_penalty=v["repeat_penalty"], frequency_penalty=v["frequency_penalty"],
        presence_penalty=v["presence_penalty"], seed=v["seed"],
    ).validate()


def settings_from_cli(
    config_file: str | None = None,
    log_level: str | None = None,
    log_format: str | None = None,
    model: str | None = None,
    **flags: Any,
) -> Settings:
    """Load settings with flags on top, install them process-wide, configure logging.

    *flags* may hold the engine flags of `engine_options` (None when not given).
    """
    engine = {k: flags.pop(k) for k in _ENGINE_FLAGS if k in flags}
    if engine.get("kv_block_size") is not None:
        engine["kv_block_size"] = int(engine["kv_block_size"])
    groups: dict[str, dict[str, Any]] = {"engine": engine, "model": {"path": model}}
    for group, values in flags.items():
        if isinstance(values, dict):
            groups[group] = values
    overrides = {"logging": {"level": log_level, "format": log_format}, **groups}
    settings = load_settings(config_file, overrides)
    set_settings(settings)
    set_host(None)  # plugins are loaded again with these settings' allow/block lists
    configure_logging(settings.logging.level, settings.logging.format)
    return settings
