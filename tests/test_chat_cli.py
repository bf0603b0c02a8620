"""`vexel chat` driven through a pseudo-terminal, as a person would use it.

With ``/set temperature 0`` the answer must be the greedy continuation that llama.cpp
computes on the same file for the same chat prompt (decoded by llama.cpp too).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.serving import Terminal, running_server, server_settings, write_tiny_model
from vexel_core.engine import load_model

MAX_TOKENS = 12
STATS = rb"\r\n\[(\d+) prompt tokens \((\d+) cached\) \| (\d+) tokens in [0-9.]+ s, " \
        rb"[0-9.]+ tok/s \| first token [0-9.-]+ ?s? \| finish: (\w+)\]"
PROMPT = b">>> "
# A dumb terminal: readline then writes no escape sequences (bracketed paste) around input.
ENV = {"TERM": "dumb", "PYTHONUNBUFFERED": "1"}


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("chat") / "tiny.gguf")


def greedy_tokens(model: Path, messages: list[dict[str, str]], limit: int) -> list[int]:
    """llama.cpp's greedy answer to *messages*: up to *limit* tokens or an end-of-turn."""
    import llama_cpp

    tokenizer = load_model(model).tokenizer
    prompt = tokenizer.encode_chat(messages)
    # One thread: on a busy 2-core machine llama.cpp's threads spin-wait on each other.
    llm = llama_cpp.Llama(str(model), logits_all=True, verbose=False,
                          n_ctx=max(256, len(prompt) + limit + 1), n_threads=1,
                          type_k=0, type_v=0)
    llm.eval(prompt)
    tokens: list[int] = []
    while len(tokens) < limit:
        token = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        if token in tokenizer.stop_ids:
            break
        tokens.append(token)
        llm.eval([token])
    llm.close()
    return tokens


def greedy_answer(model: Path, messages: list[dict[str, str]]) -> str:
    import llama_cpp

    tokens = greedy_tokens(model, messages, MAX_TOKENS)
    llm = llama_cpp.Llama(str(model), vocab_only=True, verbose=False)
    return llm.detokenize(tokens).decode("utf-8", "replace")


def answer(term: Terminal, text: str, timeout: float = 30.0) -> tuple[str, re.Match[bytes]]:
    """Send one message (lines after the first get the "... " prompt); the streamed answer,
    as printed, and its stats line, within *timeout* seconds."""
    term.expect(PROMPT)
    term.send(text + "\n")
    stats = term.expect(STATS, timeout)
    lines = text.split("\n")
    echo = "".join([lines[0], *("\r\n... " + line for line in lines[1:]), "\r\n"]).encode()
    assert term.before.startswith(echo), term.before
    # The terminal turns each "\n" into "\r\n"; undo that to get the bytes the program wrote.
    return term.before[len(echo):].replace(b"\r\n", b"\n").decode("utf-8"), stats


def command(term: Terminal, line: str, reply: bytes) -> re.Match[bytes]:
    term.expect(PROMPT)
    term.send(line + "\n")
    return term.expect(reply)


def chat_command(*args: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    return [sys.executable, "-m", "vexel_core.cli", "chat", "-n", str(max_tokens), *args]


def test_local_chat_answers_obeys_set_and_exits(model_path: Path, tmp_path: Path) -> None:
    question = "Tell me about foxes."
    expected = greedy_answer(model_path, [{"role": "user", "content": question}])
    term = Terminal(chat_command("-m", str(model_path), "--kv-cache-memory", "16MiB"), ENV)
    try:
        # Loading and warming up: on a GPU the kernels compile (the first answer took over
        # 30 s on the H200 beside seven other test processes, before the chat warmed up).
        term.expect(rb"chatting with tiny-chat", timeout=120)
        # default sampling (temperature 0.8): its operations compile at their first use
        _, stats = answer(term, question, timeout=60)
        assert stats.group(4) in (b"stop", b"length")
        assert int(stats.group(3)) <= MAX_TOKENS

        command(term, "/set temperature 0", rb"temperature = 0\.0")
        command(term, "/set top_p 7", rb"not set: top_p must be")
        command(term, "/clear", rb"conversation cleared")
        greedy, stats = answer(term, question)
        assert greedy == expected
        prompt_tokens = int(stats.group(1))
        assert int(stats.group(2)) > 0  # the same prompt again: its blocks come from the cache

        # history: the second turn's prompt holds the first turn
        follow_up, stats = answer(term, '"""\nline one\nline two\n"""')
        assert int(stats.group(1)) > prompt_tokens + 4

        command(term, "/system Answer in French.", rb"system message set")
        saved = tmp_path / "conversation.json"
        command(term, f"/save {saved}", rb"saved 5 messages")
        record = json.loads(saved.read_text())
        assert record["settings"]["temperature"] == 0.0
        assert [m["role"] for m in record["messages"]] == [
            "system", "user", "assistant", "user", "assistant"]
        assert record["messages"][2]["content"] == expected
        assert record["messages"][3]["content"] == "line one\nline two"
        assert record["messages"][4]["content"] == follow_up
        stats_line = command(term, "/stats", rb"KV cache (\d+)/(\d+) blocks in use")
        assert stats_line.group(1) == b"0"  # nothing left allocated between answers
        assert b"session: 3 answers" in term.before
        command(term, "/exit", rb"")
        assert term.process.wait(timeout=30) == 0
    finally:
        term.close()


@pytest.mark.parametrize("warm_up", [True, False], ids=["warm-up", "no-warm-up"])
def test_local_chat_warms_up_before_its_prompt(model_path: Path, warm_up: bool) -> None:
    flag = "--warm-up" if warm_up else "--no-warm-up"
    proc = subprocess.run(
        chat_command("-m", str(model_path), "--kv-cache-memory", "16MiB", "--log-level", "debug",
                     "--log-format", "json", flag),
        input="/stats\n/exit\n", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    rounds = [e["round"] for e in events if e["event"] == "warm-up round"]
    assert rounds[:1] == (["batch 1"] if warm_up else [])  # one conversation: one row
    # the warm-up's requests are not the session's
    assert "prefix cache 0/0 hits, 0 preemptions, 0 prompt tokens computed" in proc.stdout


def test_chat_with_a_server(model_path: Path) -> None:
    question = "What is a fox?"
    expected = greedy_answer(model_path, [{"role": "user", "content": question}])
    with running_server(server_settings(model_path, api_key="chat-key")) as server:
        term = Terminal(chat_command("--url", server.url, "--api-key", "chat-key"), ENV)
        try:
            term.expect(rb"chatting with tiny-chat", timeout=60)
            command(term, "/set temperature 0", rb"temperature = 0\.0")
            text, stats = answer(term, question)
            assert text == expected
            assert stats.group(4) in (b"stop", b"length")
            term.expect(PROMPT)
            term.send("\x04")  # Ctrl-D leaves too
            assert term.process.wait(timeout=30) == 0
        finally:
            term.close()


def test_ctrl_c_stops_an_answer_and_frees_its_blocks(tmp_path: Path) -> None:
    long = 2000
    question = "Tell me everything."
    # A model that never ends a greedy answer by itself, so only Ctrl-C can stop it early:
    # with 150 tokens, a loaded machine once delivered Ctrl-C after the last (session 41).
    model_path = write_tiny_model(tmp_path / "endless.gguf", endless=True)
    assert len(greedy_tokens(model_path, [{"role": "user", "content": question}], long)) == long
    term = Terminal(chat_command("-m", str(model_path), "--kv-cache-memory", "16MiB",
                                 "--temperature", "0", max_tokens=long), ENV)
    try:
        term.expect(PROMPT, timeout=60)
        term.send(question + "\n")
        term.expect(re.escape(question.encode()) + rb"\r\n(?s:.)")  # the answer has begun
        term.send("\x03")
        stats = term.expect(STATS)
        assert stats.group(4) == b"interrupted" and int(stats.group(3)) < long

        def pool_free() -> bool:  # the abort reaches the engine thread a moment later
            time.sleep(0.05)
            return command(term, "/stats", rb"KV cache (\d+)/").group(1) == b"0"

        assert any(pool_free() for _ in range(100))
        command(term, "/exit", rb"")
        assert term.process.wait(timeout=30) == 0
    finally:
        term.close()


def test_ctrl_c_between_items_cancels_the_next_step_and_closes_the_iterator() -> None:
    # SIGINT while the consumer holds an item (the loop is not running) must not surface
    # wherever Python happens to be: the loop owns it, the next step is cancelled, and the
    # iterator is closed before KeyboardInterrupt leaves the iteration.
    import asyncio
    import os
    import signal

    from vexel_core.cli.chat import _sync_iter

    events: list[str] = []

    async def numbers():  # type: ignore[no-untyped-def]
        try:
            for i in range(100):
                await asyncio.sleep(0)
                yield i
        finally:
            events.append("closed")

    loop = asyncio.new_event_loop()
    got = []
    with pytest.raises(KeyboardInterrupt):
        for item in _sync_iter(loop, numbers()):
            got.append(item)
            if item == 2:
                os.kill(os.getpid(), signal.SIGINT)
    loop.close()
    assert got == [0, 1, 2] and events == ["closed"]
