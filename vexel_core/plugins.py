"""Loading plugins and the typed registries they fill.

`PluginHost` is the only place that touches pluggy: it loads the entry points of group
``vexel`` one by one, calls every registration hook once with a `register` callable bound to
the plugin being called, and exposes what was registered as typed `Registry` objects. Core
code asks ``host.architectures.get("llama")``; it never calls ``pm.hook.*``.
"""

from __future__ import annotations

import importlib.metadata as md
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import pluggy

from vexel_core import hookspecs
from vexel_core.errors import PluginError, RegistryMiss
from vexel_core.logs import get_logger

T = TypeVar("T")
ENTRY_POINT_GROUP = "vexel"
log = get_logger(__name__)


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    value: T
    plugin: str


class Registry(Generic[T]):
    """Things of one kind, by name, each remembering which plugin registered it."""

    def __init__(self, kind: str, validate: Callable[[str, Any], None] | None = None) -> None:
        self.kind = kind
        self._validate = validate
        self._entries: dict[str, Entry[T]] = {}

    def validate(self, name: str, value: Any) -> None:
        if self._validate is not None:
            self._validate(name, value)

    def check_free(self, name: str, plugin: str) -> None:
        if name in self._entries:
            first = self._entries[name].plugin
            raise PluginError(
                f"{self.kind} {name!r} is registered twice: by plugin {first!r} and by "
                f"plugin {plugin!r}"
            )

    def add(self, name: str, value: T, plugin: str) -> None:
        self.check_free(name, plugin)
        self.validate(name, value)
        self._entries[name] = Entry(name, value, plugin)

    def get(self, name: str) -> T:
        try:
            return self._entries[name].value
        except KeyError:
            available = ", ".join(sorted(self._entries)) or "none"
            raise RegistryMiss(f"no {self.kind} named {name!r}; available: {available}") from None

    def entry(self, name: str) -> Entry[T]:
        self.get(name)
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def by_plugin(self, plugin: str) -> list[str]:
        return sorted(n for n, e in self._entries.items() if e.plugin == plugin)


@dataclass
class PluginInfo:
    name: str
    version: str
    module: str
    hooks: list[str] = field(default_factory=list)
    error: str | None = None


# One registry per hook: (attribute on PluginHost, kind shown to users, hook name).
_KINDS = (
    ("architectures", "architecture", "register_architectures"),
    ("quant_formats", "quant format", "register_quant_formats"),
    ("attention_backends", "attention backend", "register_attention_backends"),
    ("samplers", "sampler", "register_samplers"),
    ("speculators", "speculator", "register_speculators"),
)


class PluginHost:
    """Loads plugins and holds the registries. Build one with `load_plugins`."""

    architectures: Registry[Any]
    quant_formats: Registry[Any]
    attention_backends: Registry[Any]
    samplers: Registry[Any]
    speculators: Registry[Any]

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager("vexel")
        self.pm.add_hookspecs(hookspecs)
        self.plugins: dict[str, PluginInfo] = {}
        for attr, kind, _ in _KINDS:
            setattr(self, attr, Registry(kind))

    def registries(self) -> dict[str, Registry[Any]]:
        return {kind: getattr(self, attr) for attr, kind, _ in _KINDS}

    def add_plugin(self, name: str, module: object, version: str = "unknown") -> None:
        """Register one plugin with pluggy and collect what it registers.

        Everything the plugin registers is staged first and committed only if all of it is
        valid, so a plugin that fails halfway leaves no trace in the registries.
        """
        if self.pm.has_plugin(name):
            raise PluginError(f"two plugins are named {name!r}")
        self.pm.register(module, name=name)
        try:
            self.pm.check_pending()  # a hook function whose name matches no spec fails loudly
            info = PluginInfo(name, version, getattr(module, "__name__", type(module).__name__))
            staged: list[tuple[Registry[Any], str, Any]] = []
            for attr, _, hook_name in _KINDS:
                registry: Registry[Any] = getattr(self, attr)
                for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                    if impl.plugin_name == name:
                        impl.function(register=_stage_into(registry, name, staged))
                        info.hooks.append(hook_name)
            for registry, key, _ in staged:
                registry.check_free(key, name)
        except Exception:
            self.pm.unregister(name=name)
            raise
        for registry, key, value in staged:
            registry.add(key, value, name)
        self.plugins[name] = info

    def registered_by(self, plugin: str) -> dict[str, list[str]]:
        return {kind: reg.by_plugin(plugin) for kind, reg in self.registries().items()
                if reg.by_plugin(plugin)}


def _stage_into(
    registry: Registry[Any], plugin: str, staged: list[tuple[Registry[Any], str, Any]]
) -> Callable[..., None]:
    """The `register` callable handed to one plugin's hook for one registry."""

    def register(*args: Any) -> None:
        if len(args) == 1:  # registered objects that carry their own name
            value = args[0]
            name = getattr(value, "name", None)
        elif len(args) == 2:
            name, value = args
        else:
            raise PluginError(f"plugin {plugin!r}: register() takes (name, value) or (value,)")
        if not isinstance(name, str) or not name:
            raise PluginError(f"plugin {plugin!r} registered a {registry.kind} without a name")
        registry.validate(name, value)
        if any(r is registry and n == name for r, n, _ in staged):
            raise PluginError(f"plugin {plugin!r} registered {registry.kind} {name!r} twice")
        staged.append((registry, name, value))

    return register


def load_plugins(
    *,
    strict: bool = False,
    allow: Sequence[str] | None = None,
    block: Sequence[str] = (),
    extra: Sequence[tuple[str, object]] = (),
) -> PluginHost:
    """Load every entry point of group ``vexel`` (then *extra* plugins, used by tests).

    A plugin that fails to import or to register is logged with its name, version and error,
    and skipped; with *strict* the failure is raised instead. *allow* (when given) and
    *block* filter by entry-point name.
    """
    host = PluginHost()
    for ep in sorted(md.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in block or (allow is not None and ep.name not in allow):
            log.debug("plugin skipped by settings", plugin=ep.name)
            continue
        version = ep.dist.version if ep.dist is not None else "unknown"
        try:
            host.add_plugin(ep.name, ep.load(), version)
        except Exception as exc:  # a broken plugin must not take the engine down
            host.plugins[ep.name] = PluginInfo(ep.name, version, ep.value, error=repr(exc))
            if strict:
                raise PluginError(f"plugin {ep.name!r} ({version}) failed to load: {exc}") from exc
            log.error("plugin failed to load; skipped", plugin=ep.name, version=version,
                      error=repr(exc))
    for name, module in extra:
        host.add_plugin(name, module)
    return host


_default_host: PluginHost | None = None


def get_host() -> PluginHost:
    """The process-wide plugin host, loaded on first use with the current settings."""
    global _default_host
    if _default_host is None:
        from vexel_core.config import get_settings

        p = get_settings().plugins
        _default_host = load_plugins(strict=p.strict, allow=p.allow, block=p.block)
    return _default_host


def set_host(host: PluginHost | None) -> None:
    """Replace the process-wide host (tests; the CLI after reading --config)."""
    global _default_host
    _default_host = host
