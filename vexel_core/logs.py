"""Structured logging, configured once per process.

Readable key=value lines on a terminal, one JSON object per line with ``--log-format json``.
Code binds context where it exists (``log.bind(request_id=...)``, ``model=...``) so every
record of a request can be found.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_configured = False


class _StderrLogger:
    """Writes each rendered record to whatever ``sys.stderr`` is at that moment (so test
    capture and redirection work)."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    debug = info = warning = warn = error = critical = exception = fatal = msg


def configure_logging(level: str = "info", fmt: str = "console") -> None:
    """Set up structlog and the standard library's logging to write to stderr."""
    global _configured
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=lambda *args: _StderrLogger(),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=numeric, stream=sys.stderr, format="%(name)s: %(message)s")
    _configured = True


def get_logger(name: str | None = None, **context: Any) -> Any:
    """A structlog logger; configures a default (warnings, console) if nobody has yet."""
    if not _configured:
        configure_logging("warning")
    log = structlog.get_logger(name)
    return log.bind(**context) if context else log
