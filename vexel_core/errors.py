"""The project's error types.

Every error a user can cause ends in a `VexelError`: the CLI prints its message on one line
and exits non-zero, the server turns it into an OpenAI-style error object. Anything else that
escapes is a bug.
"""

from __future__ import annotations


class VexelError(Exception):
    """Base of every error caused by input (files, settings, requests)."""


class ConfigError(VexelError):
    """A setting has a value that is not allowed."""


class PluginError(VexelError):
    """A plugin failed to load, or registered something invalid or twice."""


class RegistryMiss(VexelError, KeyError):
    """A name was looked up in a registry that does not hold it."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class GGUFError(VexelError):
    """A GGUF file is malformed or does not describe a model we can run.

    The message names the file, what inside it is wrong (key, tensor, offset) and why.
    """

    def __init__(self, path: object, where: str, reason: str) -> None:
        self.path = str(path)
        self.where = where
        self.reason = reason
        super().__init__(f"{self.path}: {where}: {reason}" if where else f"{self.path}: {reason}")


class TensorDataError(VexelError):
    """A tensor's bytes do not fit its declared type and shape (size, block alignment, rank).

    The message names the tensor (when known), its type and shape, and what was expected.
    """


class TokenizerError(VexelError):
    """The vocabulary in a file cannot be built, or text cannot be tokenized."""


class TemplateError(VexelError):
    """A chat template failed to render (raised, or tried something the sandbox forbids)."""


class RequestError(VexelError):
    """A generation request is invalid (parameters, prompt too long, ...).

    `param` names the offending request field, as OpenAI's error objects do.
    """

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.param = param
        self.code = code
