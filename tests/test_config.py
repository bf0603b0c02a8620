"""Settings: precedence flag > env > file > default, and clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vexel_core.config import load_settings, parse_memory
from vexel_core.errors import ConfigError


def test_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "v.toml"
    cfg.write_text("[engine]\nmax_batch_size = 3\ncontext_len = 100\nkv_block_size = 32\n")
    s = load_settings(cfg)
    assert (s.engine.max_batch_size, s.engine.context_len, s.engine.kv_block_size) == (3, 100, 32)
    monkeypatch.setenv("VEXEL_ENGINE__MAX_BATCH_SIZE", "5")
    monkeypatch.setenv("VEXEL_ENGINE__CONTEXT_LEN", "200")
    s = load_settings(cfg)
    assert (s.engine.max_batch_size, s.engine.context_len, s.engine.kv_block_size) == (5, 200, 32)
    s = load_settings(cfg, {"engine": {"max_batch_size": 7, "context_len": None}})
    assert (s.engine.max_batch_size, s.engine.context_len) == (7, 200)
    assert s.engine.attention_backend == "auto"  # default untouched


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[engine]\nmax_batch_size = 0\n", "engine.max_batch_size = 0"),
        ("[engine]\nkv_block_size = 17\n", "engine.kv_block_size = 17.*8, 16, 32, 64 or 128"),
        ("[engine]\nbogus = 1\n", "unknown setting 'engine.bogus'"),
        ("[server]\nport = 70000\n", "server.port = 70000"),
        ("[engine\n", "cannot read settings"),
    ],
)
def test_invalid_values_name_field_value_and_rule(tmp_path: Path, toml: str, expected: str) -> None:
    cfg = tmp_path / "v.toml"
    cfg.write_text(toml)
    with pytest.raises(ConfigError, match=expected):
        load_settings(cfg)


def test_env_error_is_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEXEL_LOGGING__LEVEL", "loud")
    with pytest.raises(ConfigError, match="logging.level = 'loud'"):
        load_settings()


def test_missing_config_file() -> None:
    with pytest.raises(ConfigError, match="nope.toml does not exist"):
        load_settings("nope.toml")


def test_memory_sizes() -> None:
    assert parse_memory("2GiB", 0) == 2 * 2**30
    assert parse_memory("512MB", 0) == 512 * 10**6
    assert parse_memory("0.25", 1000) == 250
    with pytest.raises(ConfigError, match="kv_cache_memory = 'lots'"):
        parse_memory("lots", 1000)


def test_cli_reports_a_bad_setting_in_one_line(tmp_path: Path) -> None:
    cfg = tmp_path / "v.toml"
    cfg.write_text("[engine]\nmax_batch_size = -1\n")
    proc = subprocess.run([sys.executable, "-m", "vexel_core.cli", "plugins", "--config", str(cfg)],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "engine.max_batch_size = -1" in lines[0]
    assert "Traceback" not in proc.stderr


def test_cuda_graph_defaults_on_cuda_alone_and_never_over_the_users_choice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # vexel_core.gpu.set_cuda_graph_defaults: MLX's graph limits raised and its graph cache's
    # thrashing error turned off where MLX computes on CUDA, a value already in the
    # environment kept, nothing set elsewhere (Apple GPUs, CPU)
    import vexel_core.gpu as gpu

    keys = ("MLX_MAX_OPS_PER_BUFFER", "MLX_MAX_MB_PER_BUFFER", "MLX_ENABLE_CACHE_THRASHING_CHECK")
    for cuda, preset, expected in [(True, None, ("400", "100000", "0")),
                                   (True, "50", ("50", "100000", "0")),
                                   (False, None, (None, None, None))]:
        for key in keys:  # (set first, so that monkeypatch restores the key's absence too)
            monkeypatch.setenv(key, "")
            monkeypatch.delenv(key)
        if preset is not None:
            monkeypatch.setenv(keys[0], preset)
        monkeypatch.setattr(gpu, "_cuda_available", lambda cuda=cuda: cuda)
        gpu.set_cuda_graph_defaults()
        assert tuple(os.environ.get(key) for key in keys) == expected
