"""Helpers for the server, client and chat tests: a tiny model, a real server in a thread,
a pseudo-terminal driver."""

from __future__ import annotations

import fcntl
import os
import re
import select
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.builders.models import LlamaShape, write_llama
from tests.builders.vocab import bpe_vocab
from tests.helpers import fresh_seed
from vexel_core.config import Settings, load_settings
from vexel_core.engine import AsyncEngine
from vexel_core.server import VexelServer
from vexel_core.tokenizer import Tokenizer

# Small enough that a step takes a few milliseconds on the 2-core CPU, big enough to have
# grouped-query attention and a real chat template (LLaMA 3's, from bpe_vocab).
TINY = LlamaShape(hidden=64, layers=2, heads=4, kv_heads=2, ffn=128, context=256)
API_KEY = "test-key"


def write_tiny_model(path: Path, seed: int | None = None, *, endless: bool = False) -> Path:
    """A random-weight LLaMA-3-style file; fresh weights each run unless *seed* is given.
    *endless*: its end-of-generation tokens never win a greedy step, and its context holds
    4,096 tokens, so that only an interruption ends a long greedy answer early, even on a
    busy machine where the interruption arrives late."""
    if seed is None:
        seed = fresh_seed("tiny model seed")
    vocab = bpe_vocab()
    mute = tuple(Tokenizer.from_metadata(vocab).stop_ids) if endless else ()
    shape = replace(TINY, context=4096) if endless else TINY
    return write_llama(path, vocab, shape, seed=seed, name="tiny-chat", mute=mute)


def server_settings(model: Path, *, engine: dict[str, Any] | None = None,
                    **server: Any) -> Settings:
    """Settings for a test server on a free port of 127.0.0.1."""
    return load_settings(overrides={
        "model": {"path": str(model)},
        "engine": {"kv_cache_memory": "16MiB", "max_batch_size": 64, **(engine or {})},
        "server": {"host": "127.0.0.1", "port": 0, **server},
    })


@contextmanager
def running_server(settings: Settings,
                   engine_factory: Callable[[], AsyncEngine] | None = None,
                   wait_ready: bool = True) -> Iterator[VexelServer]:
    """A real uvicorn server in a background thread, stopped (gracefully) on exit."""
    server = VexelServer(settings, engine_factory)
    thread = threading.Thread(target=server.run, name="test-server", daemon=True)
    thread.start()
    # generous: on CI's two cores another worker may hold both (nvcc, emulated kernels), and a
    # load of the shipped model then passed 30 s (session 20); a hung start still fails here
    deadline = time.monotonic() + 120
    while not server.server.started or (wait_ready and server.state.engine is None):
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"server did not start: {server.state.load_error!r}")
        time.sleep(0.01)
    try:
        yield server
    finally:
        server.stop()
        thread.join(timeout=30)


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class Terminal:
    """A command run on a pseudo-terminal, driven like a person (pexpect's idea, stdlib only)."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        master, slave = os.openpty()
        self.fd = master
        # A session of its own with the pty as controlling terminal, so Ctrl-C (\x03) becomes
        # SIGINT as in a real terminal (setsid runs before preexec_fn).
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                                        close_fds=True, start_new_session=True,
                                        preexec_fn=_take_terminal,
                                        env={**os.environ, **(env or {})})
        os.close(slave)
        self.buffer = b""
        self.before = b""
        self.seen = b""

    def expect(self, pattern: bytes, timeout: float = 30.0) -> re.Match[bytes]:
        """Read until *pattern* matches; consume through the match. What came before the
        match is kept in `before`."""
        deadline = time.monotonic() + timeout
        while (match := re.search(pattern, self.buffer)) is None:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.fd], [], [], max(left, 0))
            if not ready:
                raise TimeoutError(f"no {pattern!r} after {timeout} s; output: {self.seen!r}")
            try:
                data = os.read(self.fd, 4096)
            except OSError:  # the other side closed (the process ended)
                data = b""
            if not data:
                raise EOFError(f"ended before {pattern!r}; output: {self.seen!r}")
            self.buffer += data
            self.seen += data
        self.before = self.buffer[:match.start()]
        self.buffer = self.buffer[match.end():]
        return match

    def send(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.fd)


def _take_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
