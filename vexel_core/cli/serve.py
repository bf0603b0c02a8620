"""``vexel serve``: an OpenAI-compatible HTTP server on the local engine."""

from __future__ import annotations

from typing import Any

import click

from vexel_core.cli.options import common_options, engine_options, settings_from_cli


@click.command()
@click.option("-m", "--model", type=click.Path(dir_okay=False), default=None,
              help="GGUF file (default: the shipped vexel-tiny).")
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1: this machine "
              "only; 0.0.0.0 exposes the server to the network).")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="Port (default 8000; 0 picks a free one).")
@click.option("--api-key", default=None,
              help="Require 'Authorization: Bearer KEY' on every /v1 route (also "
              "server.api_key in the config file, or VEXEL_SERVER__API_KEY).")
@click.option("--served-model-name", "name", default=None,
              help="Model id on /v1/models (default: the file's general.name).")
@click.option("--warm-up/--no-warm-up", "warm_up", default=None,
              help="Run a few short requests before /health answers 200, so that GPU kernels "
              "compile before the first user's request does (default: on; server.warm_up). "
              "On CUDA that is most of start-up (~30 s for an 8B model): --no-warm-up "
              "serves at once and the first requests pay the compiles.")
@engine_options
@common_options
def serve(model: str | None, host: str | None, port: int | None, api_key: str | None,
          name: str | None, warm_up: bool | None, **kw: Any) -> None:
    """Serve a model over OpenAI's API: /v1/chat/completions, /v1/completions, /v1/models,
    plus /tokenize, /detokenize, /health and /metrics (Prometheus).

    Stops gracefully on SIGINT or SIGTERM: open requests get server.graceful_shutdown_seconds
    to finish.
    """
    from vexel_core.server import ServerState, VexelServer

    settings = settings_from_cli(
        model=model, server={"host": host, "port": port, "api_key": api_key, "warm_up": warm_up},
        **kw)
    if name is not None:
        settings.model.name = name

    def ready(state: ServerState) -> None:
        click.echo(f"vexel: model {state.model_id!r} ready", err=True)

    server = VexelServer(settings, on_ready=ready)
    auth = " (API key required)" if settings.server.api_key else ""
    then = (" and warming up (kernels compile before a first request; --no-warm-up skips it)"
            if settings.server.warm_up else "")
    click.echo(f"vexel: serving on {server.url}/v1{auth}; loading the model{then}...", err=True)
    server.run()
    click.echo("vexel: server stopped", err=True)
