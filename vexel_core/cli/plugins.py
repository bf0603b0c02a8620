"""``vexel plugins``: what is loaded, from which package, and what each registered."""

from __future__ import annotations

import json
from typing import Any

import click

from vexel_core.cli.options import common_options, settings_from_cli
from vexel_core.plugins import get_host


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON document instead of a table.")
@common_options
def plugins(as_json: bool, config_file: str | None, log_level: str | None,
            log_format: str | None) -> None:
    """List loaded plugins, their versions and what they registered."""
    settings_from_cli(config_file, log_level, log_format)
    host = get_host()
    rows: list[dict[str, Any]] = []
    for name, info in sorted(host.plugins.items()):
        rows.append({
            "name": name,
            "version": info.version,
            "module": info.module,
            "hooks": info.hooks,
            "registered": host.registered_by(name),
            "error": info.error,
        })
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Vexel plugins")
    for col in ("plugin", "version", "registered", "status"):
        table.add_column(col)
    for r in rows:
        registered = "\n".join(f"{kind}: {', '.join(names)}"
                               for kind, names in r["registered"].items())
        table.add_row(r["name"], r["version"], registered or "-",
                      f"[red]failed: {r['error']}[/red]" if r["error"] else "ok")
    Console().print(table)
