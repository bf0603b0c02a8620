"""The ``vexel`` command line.

Each subcommand lives in its own module and is imported only when it runs, so ``vexel
generate`` does not pay for the server's imports. Errors a user can cause (`VexelError`,
bad flags) end in one line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys

import click

from vexel_core.errors import VexelError

# name -> "module:attribute" of the click command
COMMANDS = {
    "generate": "vexel_core.cli.generate:generate",
    "chat": "vexel_core.cli.chat:chat",
    "serve": "vexel_core.cli.serve:serve",
    "bench": "vexel_core.cli.bench:bench",
    "tokenize": "vexel_core.cli.tokenize:tokenize",
    "inspect": "vexel_core.cli.inspect:inspect",
    "plugins": "vexel_core.cli.plugins:plugins",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(n for n in COMMANDS if self._available(n))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]
        except ModuleNotFoundError as exc:
            if exc.name == module:  # command not built yet in this checkout
                return None
            raise

    @staticmethod
    def _available(name: str) -> bool:
        module = COMMANDS[name].split(":")[0]
        return importlib.util.find_spec(module) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vexel", prog_name="vexel")
def cli() -> None:
    """Vexel: run GGUF language models locally on MLX."""


def console_main() -> None:
    """The ``vexel`` console script: `main`, then the process ends with `os._exit` once
    output is flushed. MLX keeps per-thread state in the engine's worker thread whose native
    clean-up can race the interpreter's shutdown ("terminate called without an active
    exception"); a command that has finished has nothing left for that shutdown to do."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):
            stream.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit code. User errors end in one clear line on stderr."""
    return _run(argv)


def _run(argv: list[str] | None) -> int:
    try:
        cli.main(args=argv, prog_name="vexel", standalone_mode=False)
        return 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        click.echo(f"vexel: error: {exc.format_message()}", err=True)
        return exc.exit_code
    except VexelError as exc:
        click.echo(f"vexel: error: {exc}", err=True)
        return 1
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] == "vexel_core":
            raise  # our own module: a bug, traced
        # an install without its dependencies (a server started where uvicorn is missing)
        click.echo(f"vexel: error: the Python module {exc.name!r} is not installed, and this "
                   "command needs it: reinstall vexel with its dependencies "
                   "('pip install vexel', or 'pip install -e .' in a checkout)", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
