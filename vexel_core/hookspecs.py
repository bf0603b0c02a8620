"""Vexel's extension points: one hook per kind of thing a plugin can supply.

Each hook receives a `register` callable owned by the core. A plugin calls it once per thing
it provides; the core validates the entry, records which plugin gave it and refuses a name
that is already taken. Built-in implementations register through these same hooks
(`vexel_core.builtins`), so a third-party plugin is no different from ours.

A plugin is a module (or object) exposed under the entry-point group ``vexel``::

    [project.entry-points.vexel]
    my_arch = "my_package.vexel_plugin"

with functions decorated by `vexel_core.hookimpl` and named exactly like the specs below
(a misspelt name fails loudly at load time).
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

hookspec = pluggy.HookspecMarker("vexel")
hookimpl = pluggy.HookimplMarker("vexel")

Register = Callable[..., None]


@hookspec
def register_architectures(register: Register) -> None:
    """Register model graphs.

    Call ``register(name, architecture)`` where *name* is the GGUF ``general.architecture``
    value (``"llama"``, ``"phi3"``, ...) and *architecture* is a
    `vexel_core.model.Architecture`: it builds the model from a GGUF file.
    """


@hookspec
def register_quant_formats(register: Register) -> None:
    """Register tensor formats.

    Call ``register(fmt)`` with a `vexel_core.quant.QuantFormat`; it is keyed by its GGML
    tensor type (``fmt.ggml_type``) and supplies the reference dequantization and the MLX
    representation used by `Linear` and `Embedding`.
    """


@hookspec
def register_attention_backends(register: Register) -> None:
    """Register attention implementations.

    Call ``register(name, backend)`` with a `vexel_core.attention.AttentionBackend`;
    the setting ``engine.attention_backend`` chooses one by name.
    """


@hookspec
def register_samplers(register: Register) -> None:
    """Register logits processors and samplers.

    Call ``register(name, processor)`` with a `vexel_core.sampling.LogitsProcessor`;
    request parameters decide which run and in what order.
    """


@hookspec
def register_speculators(register: Register) -> None:
    """Register speculative-decoding strategies.

    Call ``register(name, factory)``; the setting ``speculation.strategy`` chooses one.
    """
