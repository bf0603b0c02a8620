"""Chat templates: the Jinja2 text in ``tokenizer.chat_template``, rendered in a sandbox.

The environment is the one HuggingFace ``transformers`` renders templates in (so templates
written for it work unchanged): Jinja2's ``ImmutableSandboxedEnvironment`` with
``trim_blocks``, ``lstrip_blocks``, loop controls, ``raise_exception(message)``,
``strftime_now(format)`` and a ``tojson`` that keeps non-ASCII characters.

A template comes from a model file, so it is untrusted. The sandbox forbids underscore
attributes (``__class__``, ``__globals__``, ...), unsafe callables and mutating the inputs;
here any such attempt raises at once (plain Jinja2 would render an empty string and carry on),
and ``*`` / ``**`` cannot build huge strings or numbers. Every failure is a `TemplateError`.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, NoReturn

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from vexel_core.errors import RequestError, TemplateError

# Used when a file has no template: ChatML, as llama.cpp falls back to.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

MAX_PRODUCT_LENGTH = 1 << 20  # the longest string or list a template may build with *
MAX_POWER_BITS = 1 << 16  # the largest integer a template may build with **


class _TemplateRaised(Exception):
    """raise_exception() inside a template."""


def _raise_exception(message: object) -> NoReturn:
    raise _TemplateRaised(str(message))


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


class _StrictSandbox(ImmutableSandboxedEnvironment):
    """The sandbox, failing loudly on forbidden access and bounding * and **."""

    intercepted_binops = frozenset({"*", "**"})

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} "
                            "object is unsafe")

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "**":
            if isinstance(left, int) and isinstance(right, int) \
                    and max(left.bit_length(), 1) * right > MAX_POWER_BITS:
                raise SecurityError(f"{left} ** {right} is too large")
            return operator.pow(left, right)
        for count, seq in ((left, right), (right, left)):
            if (isinstance(count, int) and isinstance(seq, (str, list, tuple))
                    and count * len(seq) > MAX_PRODUCT_LENGTH):
                raise SecurityError(f"a product of {count} x {len(seq)} items is too large")
        return operator.mul(left, right)


def _environment() -> _StrictSandbox:
    env = _StrictSandbox(trim_blocks=True, lstrip_blocks=True,
                         extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


class ChatTemplate:
    """A compiled chat template. *source* names where it came from, for error messages."""

    def __init__(self, template: str, source: str = "<chat template>") -> None:
        self.text = template
        self.source = source
        try:
            self._template = _environment().from_string(template)
        except jinja2.TemplateSyntaxError as err:
            raise TemplateError(f"{source}: chat template has a syntax error at line "
                                f"{err.lineno}: {err.message}") from None

    def render(self, messages: Iterable[Mapping[str, Any]], *, bos_token: str = "",
               eos_token: str = "", add_generation_prompt: bool = True, **extra: Any) -> str:
        context = {
            "bos_token": bos_token,
            "eos_token": eos_token,
            **extra,
            "messages": normalize_messages(messages),
            "add_generation_prompt": add_generation_prompt,
        }
        try:
            return self._template.render(context)
        except _TemplateRaised as err:
            raise TemplateError(f"{self.source}: chat template raised: {err}") from None
        except SecurityError as err:
            raise TemplateError(f"{self.source}: chat template tried something the sandbox "
                                f"forbids: {err}") from None
        except Exception as err:  # any other failure inside template code
            raise TemplateError(f"{self.source}: chat template failed: "
                                f"{type(err).__name__}: {err}") from None


def normalize_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages as templates expect them: ``content`` a string.

    OpenAI-style content lists of text parts (``[{"type": "text", "text": ...}]``) are joined
    with newlines; ``None`` content (an assistant turn with tool calls) stays ``None``.
    Other keys (``name``, ``tool_calls``, ...) pass through.
    """
    if isinstance(messages, (str, bytes, Mapping)):
        raise RequestError("messages must be a list of {role, content} objects",
                           param="messages")
    result = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise RequestError(f"{where} must be an object with role and content", param=where)
        role = message.get("role")
        if not isinstance(role, str) or not role:
            raise RequestError(f"{where}.role must be a non-empty string", param=f"{where}.role")
        content = message.get("content")
        result.append({**message, "content": _content_text(content, f"{where}.content")})
    return result


def _content_text(content: Any, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, (list, tuple)):
        raise RequestError(f"{where} must be a string or a list of text parts", param=where)
    texts = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and part.get("type") == "text" \
                and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
            raise RequestError(f"{where}[{j}]: content part of type {kind!r} is not supported; "
                               "only text parts are", param=f"{where}[{j}]")
    return "\n".join(texts)
