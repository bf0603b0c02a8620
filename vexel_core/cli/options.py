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


def settings_from_cli(
    config_file: str | None,
    log_level: str | None,
    log_format: str | None,
    **groups: dict[str, Any],
) -> Settings:
    """Load settings with flags on top, install them process-wide, configure logging."""
    overrides = {"logging": {"level": log_level, "format": log_format}, **groups}
    settings = load_settings(config_file, overrides)
    set_settings(settings)
    set_host(None)  # plugins are loaded again with these settings' allow/block lists
    configure_logging(settings.logging.level, settings.logging.format)
    return settings
