"""The training text: the Python standard library's own source (PSF licence).

Every machine with Python has it, so the corpus needs no download. Files are split into
train and held-out by a hash of their path relative to the library root, so the split does not
depend on the order a directory lists files in, nor on the Python version (a module keeps its
side of the split across versions).
"""

from __future__ import annotations

import hashlib
import sysconfig
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from vexel_core.errors import VexelError

# Skipped: third-party packages installed into the interpreter are not the standard library.
_EXCLUDED_DIRS = {"site-packages", "dist-packages", "__pycache__"}


@dataclass(frozen=True)
class SourceFile:
    relpath: str  # relative to the library root, with forward slashes
    text: str


SIDES = ("train", "validation", "heldout")


@dataclass(frozen=True)
class Corpus:
    """Three disjoint sets of files: to train on, to choose the checkpoint by, to report on."""

    root: Path
    train: list[SourceFile]
    validation: list[SourceFile]
    heldout: list[SourceFile]

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {"root": str(self.root)}
        for side in SIDES:
            files: list[SourceFile] = getattr(self, side)
            out[f"{side}_files"] = len(files)
            out[f"{side}_bytes"] = sum(len(f.text.encode()) for f in files)
        return out


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def _bucket(relpath: str) -> float:
    """A stable number in [0, 100) from a file's relative path."""
    digest = hashlib.sha256(relpath.encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 * 100


def side_of(relpath: str, heldout_percent: float, validation_percent: float) -> str:
    bucket = _bucket(relpath)
    if bucket < heldout_percent:
        return "heldout"
    if bucket < heldout_percent + validation_percent:
        return "validation"
    return "train"


def load_corpus(
    root: Path | None = None,
    *,
    heldout_percent: float = 4.0,
    validation_percent: float = 2.0,
    limit_bytes: int | None = None,
    sides: Collection[str] = SIDES,
) -> Corpus:
    """Read every ``*.py`` under *root* (default: this interpreter's stdlib), split in three.

    *limit_bytes* caps each side (files taken in sorted path order), for quick runs on small
    machines. Only the files of *sides* are read (the others stay empty). Files that are not
    UTF-8 are skipped.
    """
    root = stdlib_root() if root is None else root
    if not root.is_dir():
        raise VexelError(f"corpus root {root} is not a directory")
    for name, pct in (("heldout_percent", heldout_percent),
                      ("validation_percent", validation_percent)):
        if not 0 < pct < 50:
            raise VexelError(f"{name} must be in (0, 50), got {pct}")
    files: dict[str, list[SourceFile]] = {side: [] for side in SIDES}
    sizes = dict.fromkeys(SIDES, 0)
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if _EXCLUDED_DIRS.intersection(rel.parts[:-1]):
            continue
        relpath = rel.as_posix()
        side = side_of(relpath, heldout_percent, validation_percent)
        if side not in sides:
            continue
        if limit_bytes is not None and sizes[side] >= limit_bytes:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if not text.strip():
            continue
        files[side].append(SourceFile(relpath, text))
        sizes[side] += len(text.encode())
    empty = [side for side in sides if not files[side]]
    if empty:
        raise VexelError(f"corpus root {root}: no .py files fell on the {' and '.join(empty)} "
                         "side; every side needs at least one")
    return Corpus(root, files["train"], files["validation"], files["heldout"])
