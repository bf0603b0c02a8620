"""Chat templates: rendered as llama.cpp formats them, unchanged by the sandbox, and safe."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
import pytest
import structlog

from tests.builders.vocab import (
    CHATML_TEMPLATE,
    LLAMA3_CHAT_TEMPLATE,
    LlamaCppVocab,
    bpe_vocab,
    llama_cpp_chat,
    spm_vocab,
    write_vocab_only_gguf,
)
from vexel_core.errors import RequestError, TemplateError
from vexel_core.tokenizer import ChatTemplate, Tokenizer

MESSAGES = [
    {"role": "system", "content": "You are terse. "},
    {"role": "user", "content": " Héllo 👋\nwhat's 2+2?"},
    {"role": "assistant", "content": "4."},
    {"role": "user", "content": "日本語で?"},
]


def _plain_render(template: str, messages: list[dict[str, Any]], **context: Any) -> str:
    """The same template in an ordinary (unsandboxed) Jinja2 environment."""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True,
                             extensions=["jinja2.ext.loopcontrols"])
    return env.from_string(template).render(messages=messages, **context)


@pytest.fixture(scope="module")
def llama3(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tokenizer, LlamaCppVocab]:
    vocab = bpe_vocab(chat_template=LLAMA3_CHAT_TEMPLATE)
    path = write_vocab_only_gguf(tmp_path_factory.mktemp("llama3") / "v.gguf", vocab)
    return Tokenizer.from_metadata(vocab, str(path)), LlamaCppVocab(path)


@pytest.fixture(scope="module")
def chatml(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tokenizer, LlamaCppVocab]:
    vocab = spm_vocab(chat_template=CHATML_TEMPLATE)
    path = write_vocab_only_gguf(tmp_path_factory.mktemp("chatml") / "v.gguf", vocab)
    return Tokenizer.from_metadata(vocab, str(path)), LlamaCppVocab(path)


@pytest.mark.parametrize("add_generation_prompt", [True, False])
def test_llama3_renders_as_llama_cpp(llama3: tuple[Tokenizer, LlamaCppVocab],
                                     add_generation_prompt: bool) -> None:
    tok, _ = llama3
    text = tok.apply_chat_template(MESSAGES, add_generation_prompt=add_generation_prompt)
    assert text == _plain_render(LLAMA3_CHAT_TEMPLATE, MESSAGES, bos_token="<|begin_of_text|>",
                                 eos_token="<|end_of_text|>",
                                 add_generation_prompt=add_generation_prompt)
    # llama.cpp's built-in LLaMA-3 format leaves BOS to the tokenizer
    assert text == "<|begin_of_text|>" + llama_cpp_chat(
        LLAMA3_CHAT_TEMPLATE, MESSAGES, add_generation_prompt=add_generation_prompt)
    assert text.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n") \
        == add_generation_prompt


def test_chatml_renders_as_llama_cpp(chatml: tuple[Tokenizer, LlamaCppVocab]) -> None:
    tok, _ = chatml
    text = tok.apply_chat_template(MESSAGES)
    assert text == _plain_render(CHATML_TEMPLATE, MESSAGES, add_generation_prompt=True)
    assert text == llama_cpp_chat(CHATML_TEMPLATE, MESSAGES)


def test_encode_chat_has_one_bos(llama3: tuple[Tokenizer, LlamaCppVocab],
                                 chatml: tuple[Tokenizer, LlamaCppVocab]) -> None:
    # LLaMA 3's template writes BOS itself: it must not be doubled
    tok, ref = llama3
    ids = tok.encode_chat(MESSAGES)
    text = tok.apply_chat_template(MESSAGES)
    assert ids == ref.tokenize(text, add_special=False, parse_special=True)
    assert ids.count(tok.bos_id) == 1 and ids[0] == tok.bos_id
    # ChatML writes none: the tokenizer adds it, as llama.cpp does
    tok, ref = chatml
    ids = tok.encode_chat(MESSAGES)
    assert ids == ref.tokenize(tok.apply_chat_template(MESSAGES), add_special=True)
    assert ids.count(tok.bos_id) == 1 and ids[0] == tok.bos_id


def test_content_parts_become_text(llama3: tuple[Tokenizer, LlamaCppVocab]) -> None:
    tok, _ = llama3
    parts = [{"role": "user", "content": [{"type": "text", "text": "first"},
                                          {"type": "text", "text": "second"}]}]
    assert tok.apply_chat_template(parts) == tok.apply_chat_template(
        [{"role": "user", "content": "first\nsecond"}])


@pytest.mark.parametrize(("messages", "param"), [
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
     "messages[0].content[0]"),
    ([{"content": "no role"}], "messages[0].role"),
    ([{"role": "user", "content": 5}], "messages[0].content"),
    ("just a string", "messages"),
])
def test_bad_messages_name_the_field(llama3: tuple[Tokenizer, LlamaCppVocab], messages: Any,
                                     param: str) -> None:
    with pytest.raises(RequestError) as info:
        llama3[0].apply_chat_template(messages)
    assert info.value.param == param


def test_template_features() -> None:
    template = ChatTemplate(
        "{% for m in messages %}{% if loop.index > 2 %}{% break %}{% endif %}"
        "{{ m.content | tojson }} {% endfor %}{{ tools | tojson }} {{ strftime_now('%Y-%m-%d') }}"
        "{% if missing is defined %}!{% endif %}{{ bos_token }}{{ eos_token }}"
    )
    tools = [{"name": "météo", "city": "東京"}]
    messages = [{"role": "user", "content": "naïve 日本"}, {"role": "user", "content": "b"},
                {"role": "user", "content": "never shown"}]
    text = template.render(messages, bos_token="<s>", eos_token="</s>", tools=tools)
    today = datetime.now().strftime("%Y-%m-%d")
    assert text == f'"naïve 日本" "b" {json.dumps(tools, ensure_ascii=False)} {today}<s></s>'


def test_raise_exception_becomes_template_error() -> None:
    template = ChatTemplate("{{ raise_exception('Conversation roles must alternate') }}",
                            "model.gguf")
    with pytest.raises(TemplateError, match=r"^model.gguf: chat template raised: "
                                            r"Conversation roles must alternate$"):
        template.render(MESSAGES)


def test_syntax_error_becomes_template_error() -> None:
    with pytest.raises(TemplateError, match=r"model.gguf: chat template has a syntax error at "
                                            r"line 2"):
        ChatTemplate("{% for m in messages %}\n{{ m.content }\n{% endfor %}", "model.gguf")


def test_runtime_failure_becomes_template_error() -> None:
    with pytest.raises(TemplateError, match=r"chat template failed: TypeError"):
        ChatTemplate("{{ messages[0].content + 1 }}").render(MESSAGES)


# Server-side template injection: each walks from an object the template can reach to `os`,
# `open` or a subprocess. In plain Jinja2 the ones with PROOF create the file.
MALICIOUS = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os.popen('touch PROOF').read() }}",
    "{{ joiner.__init__.__globals__.os.system('touch PROOF') }}",
    "{{ namespace.__init__.__globals__.os.system('touch PROOF') }}",
    "{{ lipsum.__globals__['os'].system('touch PROOF') }}",
    "{{ self.__init__.__globals__.__builtins__.open('PROOF', 'w').write('x') }}",
    "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system('touch PROOF') }}",
    "{% for c in ().__class__.__base__.__subclasses__() %}{% if c.__name__ == 'Popen' %}"
    "{{ c('touch PROOF', shell=True).wait() }}{% endif %}{% endfor %}",
    "{{ (cycler|attr('__init__')|attr('__globals__'))['os'].system('touch PROOF') }}",
    "{{ '{0.__init__.__globals__[os]}'.format(cycler) }}",
    "{{ request.application.__globals__.__builtins__.__import__('os').system('touch PROOF') }}",
    "{{ messages.append({'role': 'system', 'content': 'injected'}) }}",
    "{% set x = messages.pop() %}",
    "{{ 'A' * 100000000 }}",
    "{{ 9 ** 99999999 }}",
]


@pytest.mark.parametrize("payload", MALICIOUS)
def test_malicious_template_fails_without_effect(payload: str, tmp_path: Path) -> None:
    proof = tmp_path / "pwned"
    source = payload.replace("PROOF", str(proof))
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(TemplateError, match=r"^evil.gguf: chat template"):
        ChatTemplate(source, "evil.gguf").render(messages, bos_token="<s>")
    assert not proof.exists()
    assert messages == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("payload", [p for p in MALICIOUS[1:7] if "PROOF" in p])
def test_the_payloads_work_outside_the_sandbox(payload: str, tmp_path: Path) -> None:
    """The attacks are real: plain Jinja2 runs them (the file appears)."""
    proof = tmp_path / "pwned"
    _plain_render(payload.replace("PROOF", str(proof)), [])
    assert proof.exists()


def test_no_template_falls_back_to_chatml() -> None:
    tok = Tokenizer.from_metadata(spm_vocab(), "base.gguf")
    assert tok.chat_template is None
    with structlog.testing.capture_logs() as logs:
        text = tok.apply_chat_template([{"role": "user", "content": "hi"}])
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert any("ChatML" in entry["event"] and entry.get("source") == "base.gguf"
               for entry in logs)
