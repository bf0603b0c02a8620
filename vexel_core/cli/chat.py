"""``vexel chat``: a conversation in the terminal, on a local model or a running server.

The REPL keeps the conversation (sent whole each turn, so the model sees the history),
streams each answer, and prints a stats line after it. Commands::

    /system TEXT      set the system message (no TEXT: remove it)
    /set NAME VALUE   temperature, top_k, top_p, min_p, repetition_penalty,
                      presence_penalty, frequency_penalty, seed (or none), max_tokens
    /clear            forget the conversation (the system message stays)
    /save FILE        write the conversation and settings as JSON
    /stats            tokens this session (and the engine's state when local)
    /help, /exit      (Ctrl-D exits too; Ctrl-C stops an answer)

A line that is only triple quotes starts a block that ends at the next such line; a line
ending in a backslash continues on the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from collections.abc import AsyncIterator, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from vexel_core.cli.options import common_options, engine_options, sampling_options
from vexel_core.errors import VexelError

T = TypeVar("T")
BLOCK = '"""'
SETTABLE = {  # /set name -> how its value is read
    "temperature": float, "top_k": int, "top_p": float, "min_p": float,
    "repetition_penalty": float, "presence_penalty": float, "frequency_penalty": float,
    "seed": int, "max_tokens": int,
}


@dataclass
class AnswerStats:
    """How one answer went: counts from the engine or the server, times measured here."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    answers: int = 0
    finish_reason: str | None = None
    first_token_s: float | None = None
    total_s: float = 0.0

    def line(self) -> str:
        rate = (self.completion_tokens / self.total_s) if self.total_s > 0 else 0.0
        first = f"{self.first_token_s:.2f} s" if self.first_token_s is not None else "-"
        return (f"[{self.prompt_tokens} prompt tokens ({self.cached_tokens} cached) | "
                f"{self.completion_tokens} tokens in {self.total_s:.2f} s, {rate:.1f} tok/s | "
                f"first token {first} | finish: {self.finish_reason or '-'}]")


class Backend(Protocol):
    """Where answers come from: `LocalBackend` (engine here) or `RemoteBackend` (server)."""

    name: str

    def answer(self, messages: list[dict[str, str]], params: dict[str, Any],
               stats: AnswerStats) -> Generator[str, None, None]:
        """Stream the answer's text; fill *stats* as it goes. Closing the iterator early
        cancels the request."""
        ...

    def describe_state(self) -> str | None: ...
    def close(self) -> None: ...


def _sync_iter(loop: asyncio.AbstractEventLoop, items: AsyncIterator[T]) -> Iterator[T]:
    """Iterate an async iterator from blocking code, running *loop* for each item.

    Ctrl-C cancels the pending step, which is how `AsyncEngine.generate` learns to abort, and
    then raises KeyboardInterrupt from here. While iterating, the loop owns SIGINT: Python's
    own handler could raise KeyboardInterrupt between creating a step and running it, and the
    step would then run inside the clean-up below ("aclose(): asynchronous generator is
    already running"). Closing early closes the async iterator.
    """
    task: asyncio.Task[T] | None = None
    interrupted = False

    def interrupt() -> None:  # runs inside the loop: the next step, or the one running
        nonlocal interrupted
        interrupted = True
        if task is not None:
            task.cancel()

    async def step() -> T:
        return await items.__anext__()

    try:
        loop.add_signal_handler(signal.SIGINT, interrupt)
        owns_sigint = True
    except (NotImplementedError, RuntimeError, ValueError):  # no Unix signals, or not main
        owns_sigint = False
    try:
        while not interrupted:
            task = loop.create_task(step())
            try:
                item = loop.run_until_complete(task)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                break
            except BaseException:  # Ctrl-C where the loop does not own SIGINT
                task.cancel()
                loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
                raise
            if interrupted:  # Ctrl-C came as this step finished: show nothing after it
                break
            yield item
        raise KeyboardInterrupt
    finally:
        if owns_sigint:
            loop.remove_signal_handler(signal.SIGINT)
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            loop.run_until_complete(aclose())


class LocalBackend:
    def __init__(self, settings: Any, warm_up: bool) -> None:
        from vexel_core.engine import start_engine

        self.loop = asyncio.new_event_loop()
        self.engine = start_engine(settings)
        self.name = self.engine.engine.loaded.name
        self._count = 0
        if warm_up:  # one conversation: requests of one row (`AsyncEngine.warm_up`)
            try:
                self.loop.run_until_complete(self.engine.warm_up(batches=(1,)))
            except BaseException:  # Ctrl-C or a failed warm-up: no engine thread left behind
                self.close()
                raise

    def answer(self, messages: list[dict[str, str]], params: dict[str, Any],
               stats: AnswerStats) -> Generator[str, None, None]:
        from vexel_core.engine import GenerationRequest

        self._count += 1
        ids = self.engine.tokenizer.encode_chat(messages)
        params = dict(params)
        max_tokens = params.pop("max_tokens")
        request = GenerationRequest(f"chat-{self._count}", ids, _sampling(params), max_tokens)
        for out in _sync_iter(self.loop, self.engine.generate(request)):
            stats.prompt_tokens = out.num_prompt_tokens
            stats.cached_tokens = out.num_cached_tokens
            stats.completion_tokens = out.num_output_tokens
            if out.finish_reason is not None:
                stats.finish_reason = out.finish_reason.value
            yield out.text

    def describe_state(self) -> str:
        s = self.engine.stats
        return (f"engine: KV cache {s.kv_blocks_used}/{s.kv_blocks_total} blocks in use "
                f"(peak {s.kv_blocks_peak}), prefix cache {s.prefix_hits}/{s.prefix_queries} "
                f"hits, {s.preemptions} preemptions, {s.prompt_tokens} prompt tokens computed, "
                f"{s.generation_tokens} generated")

    def close(self) -> None:
        self.engine.shutdown()
        self.loop.close()


class RemoteBackend:
    def __init__(self, url: str, api_key: str | None, wait_s: float) -> None:
        from vexel_core.client import Client

        self.client = Client(url, api_key=api_key)
        if not self.client.is_ready():
            click.echo(f"waiting for {self.client.base_url} ...", err=True)
            self.client.wait_until_ready(timeout=wait_s)
        self.name = self.client.models()[0].id

    def answer(self, messages: list[dict[str, str]], params: dict[str, Any],
               stats: AnswerStats) -> Generator[str, None, None]:
        with self.client.chat_stream(messages, model=self.name, **params) as stream:
            for delta in stream:
                if delta.finish_reason is not None:
                    stats.finish_reason = delta.finish_reason
                yield delta.text
        if stream.usage is not None:
            stats.prompt_tokens = stream.usage.prompt_tokens
            stats.cached_tokens = stream.usage.cached_tokens
            stats.completion_tokens = stream.usage.completion_tokens

    def describe_state(self) -> str | None:
        return None

    def close(self) -> None:
        self.client.close()


def _sampling(params: dict[str, Any]) -> Any:
    """`SamplingParams` from the chat's settings (raises `RequestError` naming a bad one)."""
    from vexel_core.sampling.params import SamplingParams

    return SamplingParams(**params).validate()


@dataclass
class ChatSession:
    backend: Backend
    params: dict[str, Any]
    system: str | None = None
    history: list[dict[str, str]] = field(default_factory=list)
    totals: AnswerStats = field(default_factory=AnswerStats)

    def messages(self) -> list[dict[str, str]]:
        head = [{"role": "system", "content": self.system}] if self.system else []
        return head + self.history

    # -- one turn -------------------------------------------------------------------------
    def ask(self, text: str) -> None:
        self.history.append({"role": "user", "content": text})
        stats = AnswerStats()
        pieces: list[str] = []
        start = time.perf_counter()
        stream = self.backend.answer(self.messages(), self.params, stats)
        try:
            for piece in stream:
                if piece and stats.first_token_s is None:
                    stats.first_token_s = time.perf_counter() - start
                pieces.append(piece)
                click.echo(piece, nl=False)
        except KeyboardInterrupt:
            stats.finish_reason = "interrupted"
        except VexelError as err:  # a refused request (e.g. over the context): say so, go on
            self.history.pop()
            hint = "; /clear starts over" if getattr(err, "code", None) == \
                "context_length_exceeded" else ""
            click.echo(f"\nerror: {err}{hint}")
            return
        finally:
            stream.close()  # an answer cut short is cancelled now, its KV blocks freed
        stats.total_s = time.perf_counter() - start
        self.history.append({"role": "assistant", "content": "".join(pieces)})
        stats.answers = 1
        for name in ("prompt_tokens", "cached_tokens", "completion_tokens", "answers"):
            setattr(self.totals, name, getattr(self.totals, name) + getattr(stats, name))
        self.totals.total_s += stats.total_s
        click.echo("")
        click.echo(stats.line())

    # -- commands -------------------------------------------------------------------------
    def command(self, line: str) -> bool:
        """Run a /command; False when the session should end."""
        name, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        if name in ("exit", "quit", "bye"):
            return False
        handler = getattr(self, f"_cmd_{name}", None)
        if handler is None:
            click.echo(f"unknown command /{name}; /help lists them")
        else:
            handler(arg)
        return True

    def _cmd_help(self, arg: str) -> None:
        click.echo(__doc__.split("Commands::", 1)[1].split("A line that", 1)[0].rstrip()
                   if __doc__ else "")

    def _cmd_system(self, arg: str) -> None:
        self.system = arg or None
        click.echo("system message set" if arg else "system message removed")

    def _cmd_clear(self, arg: str) -> None:
        self.history.clear()
        click.echo("conversation cleared")

    def _cmd_set(self, arg: str) -> None:
        name, _, value = arg.partition(" ")
        name = {"repeat_penalty": "repetition_penalty"}.get(name, name)
        if name not in SETTABLE or not value.strip():
            click.echo(f"usage: /set NAME VALUE with NAME one of {', '.join(SETTABLE)}")
            return
        try:
            parsed = None if name == "seed" and value.strip() == "none" else \
                SETTABLE[name](value.strip())
        except ValueError:
            click.echo(f"{name} takes a {SETTABLE[name].__name__}; got {value.strip()!r}")
            return
        updated = {**self.params, name: parsed}
        try:
            if name == "max_tokens" and (parsed is None or parsed < 1):
                raise VexelError("max_tokens must be at least 1")
            _sampling({k: v for k, v in updated.items() if k != "max_tokens"})
        except VexelError as err:
            click.echo(f"not set: {err}")
            return
        self.params = updated
        click.echo(f"{name} = {parsed}")

    def _cmd_save(self, arg: str) -> None:
        if not arg:
            click.echo("usage: /save FILE")
            return
        record = {"model": self.backend.name, "settings": self.params,
                  "messages": self.messages()}
        try:
            Path(arg).expanduser().write_text(json.dumps(record, indent=2, ensure_ascii=False))
        except OSError as err:
            click.echo(f"cannot write {arg}: {err.strerror}")
            return
        click.echo(f"saved {len(self.messages())} messages to {arg}")

    def _cmd_stats(self, arg: str) -> None:
        t = self.totals
        click.echo(f"session: {t.answers} answers, {t.prompt_tokens} prompt tokens "
                   f"({t.cached_tokens} cached), {t.completion_tokens} generated in "
                   f"{t.total_s:.2f} s")
        state = self.backend.describe_state()
        if state:
            click.echo(state)


def read_message(prompt: str = ">>> ", more: str = "... ") -> str:
    """One message: a line, a backslash-continued run of lines, or a triple-quoted block."""
    first = input(prompt)
    if first.strip() == BLOCK:
        lines = []
        while (line := input(more)).strip() != BLOCK:
            lines.append(line)
        return "\n".join(lines)
    lines = [first]
    while lines[-1].endswith("\\"):
        lines[-1] = lines[-1][:-1]
        lines.append(input(more))
    return "\n".join(lines)


def repl(session: ChatSession) -> None:
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401  # line editing and history for input()
    click.echo(f"chatting with {session.backend.name}; /help lists commands, /exit leaves")
    while True:
        try:
            text = read_message()
            if not text.strip():
                continue
            if text.startswith("/"):
                if not session.command(text.strip()):
                    return
                continue
            session.ask(text)
        except EOFError:
            click.echo("")
            return
        except KeyboardInterrupt:  # Ctrl-C outside an answer drops the line, as shells do
            click.echo("")


@click.command()
@click.option("-m", "--model", type=click.Path(dir_okay=False), default=None,
              help="GGUF file to load here (default: the shipped vexel-tiny).")
@click.option("--url", default=None, help="Chat with a running `vexel serve` instead.")
@click.option("--api-key", default=None, help="API key for --url.")
@click.option("--system", default=None, help="System message.")
@click.option("-n", "--max-tokens", type=click.IntRange(min=1), default=512,
              show_default=True, help="Tokens per answer at most.")
@click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=30.0,
              show_default=True, help="Seconds to wait for --url to become ready.")
@click.option("--warm-up/--no-warm-up", "warm_up", default=True, show_default=True,
              help="With -m: run a few short requests before the first prompt, so that GPU "
              "kernels compile before the first answer does (as llama.cpp's CLI warms up).")
@sampling_options
@engine_options
@common_options
def chat(model: str | None, url: str | None, api_key: str | None, system: str | None,
         max_tokens: int, wait_s: float, warm_up: bool, **kw: Any) -> None:
    """Talk to a model: streaming answers, history, /commands (/help lists them)."""
    from vexel_core.cli.options import sampling_from_cli, settings_from_cli

    sampling = sampling_from_cli(kw)
    params = {"temperature": sampling.temperature, "top_k": sampling.top_k,
              "top_p": sampling.top_p, "min_p": sampling.min_p,
              "repetition_penalty": sampling.repetition_penalty,
              "presence_penalty": sampling.presence_penalty,
              "frequency_penalty": sampling.frequency_penalty, "seed": sampling.seed,
              "max_tokens": max_tokens}
    if url is not None and model is not None:
        raise click.UsageError("give either -m MODEL (load it here) or --url (a server)")
    settings = settings_from_cli(model=model, **kw)
    backend: Backend = (RemoteBackend(url, api_key, wait_s) if url is not None
                        else LocalBackend(settings, warm_up))
    try:
        repl(ChatSession(backend, params, system))
    finally:
        backend.close()
    sys.stdout.flush()
