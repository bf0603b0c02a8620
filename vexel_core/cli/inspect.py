"""``vexel inspect MODEL.gguf``: what a GGUF file holds, checked, without loading the model."""

from __future__ import annotations

import json

import click

from vexel_core.cli.options import common_options, settings_from_cli
from vexel_core.gguf import GGUFFile, ModelDescription

_COUNT_UNITS = ("", "K", "M", "B", "T")
_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


@click.command()
@click.argument("model", required=False)
@click.option("--json", "as_json", is_flag=True, help="One JSON document instead of a table.")
@common_options
def inspect(model: str | None, as_json: bool, config_file: str | None, log_level: str | None,
            log_format: str | None) -> None:
    """Show a GGUF model's architecture, sizes, tensor types and tokenizer.

    MODEL defaults to the setting model.path, else the shipped vexel-tiny.
    """
    settings = settings_from_cli(config_file, log_level, log_format)
    if model is None:
        from vexel_core.assets import default_model_path

        model = settings.model.path or str(default_model_path())
    with GGUFFile(model) as g:
        description = ModelDescription.from_gguf(g)
    if as_json:
        click.echo(json.dumps(description.to_dict(), indent=2))
    else:
        _print_table(description)


def _print_table(d: ModelDescription) -> None:
    from rich.console import Console
    from rich.table import Table

    facts = Table(title=f"{d.path.name}", show_header=False)
    facts.add_column("fact", style="bold")
    facts.add_column("value")
    rows = [
        ("architecture", d.architecture),
        ("name", d.name or "-"),
        ("parameters", f"{d.parameter_count:,} ({_human(d.parameter_count, 1000, _COUNT_UNITS)})"),
        ("file size", f"{d.file_size:,} bytes ({_human(d.file_size, 1024, _BYTE_UNITS)})"),
        ("file type", d.file_type_name or "-"),
        ("context length", str(d.context_length)),
        ("embedding length", str(d.embedding_length)),
        ("layers", str(d.block_count)),
        ("feed-forward length", str(d.feed_forward_length or "-")),
        ("heads / KV heads", f"{d.head_count} / {d.head_count_kv}"),
        ("head dim", str(d.head_dim)),
        ("rope", f"{d.rope_dimension_count} dims, base {d.rope_freq_base:g}"),
        ("norm epsilon", _epsilon(d)),
        ("vocab size", str(d.vocab_size)),
        ("tokenizer", f"{d.tokenizer_model or 'none'} ({d.tokenizer_size} tokens)"),
        ("chat template", "yes" if d.has_chat_template else "no"),
        ("tensor types", ", ".join(f"{name}: {n}" for name, n in d.tensor_types.items())),
    ]
    for row in rows:
        facts.add_row(*row)
    Console().print(facts)


def _epsilon(d: ModelDescription) -> str:
    parts = []
    if d.rms_norm_epsilon is not None:
        parts.append(f"RMS {d.rms_norm_epsilon:g}")
    if d.layer_norm_epsilon is not None:
        parts.append(f"layer norm {d.layer_norm_epsilon:g}")
    return ", ".join(parts) or "-"


def _human(n: int, base: int, units: tuple[str, ...]) -> str:
    """1334528 -> '1.33 M' with base 1000, '1.27 MiB' with base 1024."""
    value, unit = float(n), units[0]
    for unit in units:
        if value < base or unit == units[-1]:
            break
        value /= base
    return f"{value:.3g} {unit}".rstrip()
