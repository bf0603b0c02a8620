"""Models that ship inside the package (vexel-tiny), so every command works offline."""

from __future__ import annotations

from pathlib import Path

from vexel_core.errors import VexelError

ASSETS = Path(__file__).parent
DEFAULT_MODEL = "vexel-tiny.gguf"
DRAFT_MODEL = "vexel-tiny-draft.gguf"


def default_model_path() -> Path:
    """The shipped target model, used wherever ``-m`` is not given."""
    path = ASSETS / DEFAULT_MODEL
    if not path.is_file():
        raise VexelError(f"the shipped model {path} is missing; pass -m MODEL.gguf")
    return path


def draft_model_path() -> Path:
    path = ASSETS / DRAFT_MODEL
    if not path.is_file():
        raise VexelError(f"the shipped draft model {path} is missing")
    return path
