"""The plugin system: entry points, registries, failures, selection by settings."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from vexel_core import hookimpl
from vexel_core.cli import cli
from vexel_core.errors import PluginError, RegistryMiss
from vexel_core.plugins import PluginHost, load_plugins, set_host


def _install_dist(site: Path, dist: str, entry_points: dict[str, str],
                  modules: dict[str, str]) -> None:
    """A throwaway distribution: a .dist-info with entry points, plus its modules."""
    info = site / f"{dist}-1.2.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[vexel]\n{lines}\n")
    for name, source in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(source))


GOOD = """
    from vexel_core import hookimpl

    class Shout:
        name = "shout"
        def __call__(self, q, k, v, **kw):
            raise NotImplementedError

    @hookimpl
    def register_attention_backends(register):
        register(Shout())
"""
BROKEN = "raise ImportError('this plugin is broken on purpose')\n"
DUPLICATE = """
    from vexel_core import hookimpl

    @hookimpl
    def register_attention_backends(register):
        register("sdpa", object())
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for mod in ("thirdparty_good", "thirdparty_broken", "thirdparty_dup"):
        sys.modules.pop(mod, None)
    set_host(None)


def test_builtins_register_through_the_same_hooks() -> None:
    host = load_plugins(strict=True)
    assert {"sdpa", "paged"} <= set(host.attention_backends)
    assert "llama" in host.architectures
    assert host.attention_backends.entry("sdpa").plugin == "core"
    assert "Q4_K" in host.quant_formats and "F16" in host.quant_formats


def test_third_party_plugin_is_listed_and_selectable(site: Path) -> None:
    _install_dist(site, "thirdparty-good", {"good": "thirdparty_good"}, {"thirdparty_good": GOOD})
    host = load_plugins()
    assert host.attention_backends.entry("shout").plugin == "good"
    assert host.plugins["good"].version == "1.2.3"
    set_host(None)
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    listed = {p["name"]: p for p in json.loads(result.stdout)}
    assert listed["good"]["registered"] == {"attention backend": ["shout"]}
    assert listed["good"]["version"] == "1.2.3"


def test_plugin_selected_by_settings(site: Path, tmp_path: Path) -> None:
    from vexel_core.config import load_settings

    _install_dist(site, "thirdparty-good", {"good": "thirdparty_good"}, {"thirdparty_good": GOOD})
    cfg = tmp_path / "vexel.toml"
    cfg.write_text('[engine]\nattention_backend = "shout"\n')
    settings = load_settings(cfg)
    host = load_plugins()
    backend = host.attention_backends.get(settings.engine.attention_backend)
    assert type(backend).__name__ == "Shout"


def test_broken_plugin_is_skipped_and_logged(site: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _install_dist(site, "thirdparty-broken", {"broken": "thirdparty_broken"},
                  {"thirdparty_broken": BROKEN})
    host = load_plugins()
    assert host.plugins["broken"].error is not None
    assert "sdpa" in host.attention_backends  # everything else still loaded
    err = capsys.readouterr().err
    assert "broken" in err and "1.2.3" in err and "broken on purpose" in err
    with pytest.raises(PluginError, match="broken.*1.2.3.*broken on purpose"):
        load_plugins(strict=True)


def test_duplicate_name_is_refused_naming_both_plugins(site: Path) -> None:
    _install_dist(site, "thirdparty-dup", {"dup": "thirdparty_dup"}, {"thirdparty_dup": DUPLICATE})
    host = load_plugins()
    assert "registered twice" in (host.plugins["dup"].error or "")
    assert "'core'" in host.plugins["dup"].error and "'dup'" in host.plugins["dup"].error
    assert host.attention_backends.entry("sdpa").plugin == "core"
    with pytest.raises(PluginError, match="sdpa.*registered twice.*'core'.*'dup'"):
        load_plugins(strict=True)


def test_allow_and_block_lists(site: Path) -> None:
    _install_dist(site, "thirdparty-good", {"good": "thirdparty_good"}, {"thirdparty_good": GOOD})
    assert "good" not in load_plugins(block=["good"]).plugins
    only = load_plugins(allow=["good"])
    assert set(only.plugins) == {"good"}


def test_registry_miss_lists_what_is_available() -> None:
    host = load_plugins()
    expected = "no attention backend named 'nope'; available: .*paged.*sdpa"
    with pytest.raises(RegistryMiss, match=expected):
        host.attention_backends.get("nope")


def test_misspelt_hook_fails_loudly_and_registers_nothing() -> None:
    class Misspelt:
        @hookimpl
        def register_atention_backends(self, register):  # type: ignore[no-untyped-def]
            register("x", object())

    host = PluginHost()
    with pytest.raises(Exception, match="register_atention_backends"):
        host.add_plugin("misspelt", Misspelt())
    assert "misspelt" not in host.plugins and not host.pm.has_plugin("misspelt")


def test_plugin_failing_halfway_leaves_no_trace() -> None:
    class Halfway:
        @hookimpl
        def register_samplers(self, register):  # type: ignore[no-untyped-def]
            register("first", object())
            raise RuntimeError("boom")

    host = PluginHost()
    with pytest.raises(RuntimeError):
        host.add_plugin("halfway", Halfway())
    assert "first" not in host.samplers
