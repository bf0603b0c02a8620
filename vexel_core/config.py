"""One settings tree for the whole engine.

Sources, highest precedence first: command-line flags (passed in as overrides), ``VEXEL_*``
environment variables (nested with ``__``: ``VEXEL_ENGINE__MAX_BATCH_SIZE=8``), a TOML file
(``--config vexel.toml``), then the defaults below.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from vexel_core.errors import ConfigError


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelSettings(_Group):
    path: str | None = Field(None, description="GGUF file; the shipped vexel-tiny when unset")
    name: str | None = Field(None, description="name served on /v1/models (default: file stem)")


class EngineSettings(_Group):
    max_batch_size: int = Field(64, ge=1, le=4096, description="running sequences at most")
    context_len: int | None = Field(
        None, ge=16, description="tokens per sequence at most (default: the model's)"
    )
    attention_backend: str = Field(
        "auto", min_length=1,
        description="registered backend name, or auto (paged where its GPU kernel runs, "
                    "else sdpa)")
    kv_block_size: Literal[8, 16, 32, 64, 128] = Field(16, description="tokens per KV block")
    kv_cache_memory: str = Field(
        "0.5", description="KV pool size: bytes with a unit ('2GiB') or a fraction of memory"
    )
    # 8192: on the H200, 64 prompts of 512 tokens served 1,474 tok/s with 2048-token steps and
    # 2,286 with 8192 (bf16 Llama-3-8B shape; notes/engine-gpu.md, session 4).
    max_batched_tokens: int = Field(8192, ge=1, description="tokens per engine step at most")
    prefill_chunk: int = Field(512, ge=1, description="prompt tokens per chunk")
    enable_prefix_cache: bool = True
    seed: int | None = None
    compiled_decode_rows: int | None = Field(
        None, ge=0, description="decode steps of at most this many sequences replay compiled "
        "graphs, traced once per row count (default: max_batch_size on a GPU, 0 on the CPU, "
        "where MLX compiles fused kernels with the C++ compiler and a step is not host-bound)")
    quant_path: Literal["auto", "kernel", "affine"] = Field(
        "auto", description="quantized products: measured choice, GGUF kernels or MLX affine "
        "(on CUDA, Q2_K, Q3_K and Q6_K keep the kernels: MLX cannot launch their affine form)"
    )


class SpeculationSettings(_Group):
    strategy: str | None = Field(None, description="registered speculator name, or none")
    draft_model: str | None = None
    num_speculative_tokens: int = Field(4, ge=1, le=32)


class ServerSettings(_Group):
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    api_key: str | None = None
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    keepalive_seconds: float = Field(10.0, gt=0)
    graceful_shutdown_seconds: int = Field(
        30, ge=0, description="on SIGINT/SIGTERM, wait this long for open requests to finish"
    )
    warm_up: bool = Field(
        True, description="before /health answers 200, run a few short requests so that GPU "
        "kernels compile before the first user's request does (as llama.cpp's server warms up)"
    )


class LoggingSettings(_Group):
    level: Literal["debug", "info", "warning", "error"] = "warning"
    format: Literal["console", "json"] = "console"


class PluginSettings(_Group):
    strict: bool = Field(False, description="a plugin that fails to load is fatal")
    allow: list[str] | None = Field(None, description="load only these entry points")
    block: list[str] = Field(default_factory=list, description="never load these entry points")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="VEXEL_", env_nested_delimiter="__", extra="forbid", validate_assignment=True
    )

    model: ModelSettings = Field(default_factory=ModelSettings)
    engine: EngineSettings = Field(default_factory=EngineSettings)
    speculation: SpeculationSettings = Field(default_factory=SpeculationSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    plugins: PluginSettings = Field(default_factory=PluginSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        toml = _toml_path.get("path")
        if toml is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml))
        return tuple(sources)


_toml_path: dict[str, Path | None] = {"path": None}


def _describe(err: ValidationError, origin: str, group: str | None = None) -> str:
    lines = []
    for e in err.errors():
        field = ".".join(str(p) for p in ((group,) if group else ()) + tuple(e["loc"]))
        field = field or "settings"
        given = e.get("input")
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            lines.append(f"unknown setting {field!r}{origin}")
        else:
            lines.append(f"invalid setting {field} = {given!r}{origin}: {msg}")
    return "; ".join(lines)


def load_settings(
    config_file: str | os.PathLike[str] | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
) -> Settings:
    """Build settings from defaults, the TOML file, the environment and *overrides*.

    *overrides* holds command-line values by group (``{"engine": {"max_batch_size": 8}}``);
    ``None`` values are ignored so unset flags do not mask the file or the environment.
    Raises `ConfigError` naming the field, the value and what is allowed.
    """
    path = Path(config_file) if config_file is not None else None
    if path is not None and not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    _toml_path["path"] = path
    origin = f" (from {path}, the environment or flags)" if path else ""
    try:
        # Overrides are applied after the other sources, group by group, so a flag
        # replaces one field without discarding the rest of the group from file or env.
        settings = Settings()
        for group, values in (overrides or {}).items():
            target = getattr(settings, group)
            for key, value in values.items():
                if value is None:
                    continue
                try:
                    setattr(target, key, value)
                except ValidationError as err:
                    raise ConfigError(_describe(err, " (command line)", group)) from None
    except ValidationError as err:
        raise ConfigError(_describe(err, origin)) from None
    except ConfigError:
        raise
    except Exception as err:  # malformed TOML and the like
        raise ConfigError(f"cannot read settings{origin}: {err}") from None
    finally:
        _toml_path["path"] = None
    return settings


_settings: Settings | None = None


def get_settings() -> Settings:
    """The process-wide settings (defaults plus environment until the CLI sets others)."""
    global _settings
    if _settings is None:
        _settings = load_settings()
    return _settings


def set_settings(settings: Settings | None) -> None:
    global _settings
    _settings = settings


def parse_memory(value: str, total_bytes: int) -> int:
    """'2GiB', '512MB', '1073741824' or a fraction like '0.5' of *total_bytes* -> bytes."""
    text = value.strip().lower().replace(" ", "")
    units = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "kb": 10**3, "mb": 10**6, "gb": 10**9,
             "k": 2**10, "m": 2**20, "g": 2**30, "b": 1}
    try:
        for suffix, mult in units.items():
            if text.endswith(suffix):
                return int(float(text[: -len(suffix)]) * mult)
        number = float(text)
    except ValueError:
        raise ConfigError(
            f"invalid setting engine.kv_cache_memory = {value!r}: expected bytes with a unit "
            "('2GiB', '512MB') or a fraction of memory between 0 and 1"
        ) from None
    if 0 < number <= 1:
        return int(number * total_bytes)
    if number > 1:
        return int(number)
    raise ConfigError(f"invalid setting engine.kv_cache_memory = {value!r}: must be positive")
