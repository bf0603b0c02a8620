"""The training text: the Python standard library's own source (PSF licence).

Every machine with Python has it, so the corpus needs no download. Files are split into
train and held-out by a hash of their path relative to the library root, so the split does not
depend on the order a directory lists files in, nor on the Python version (a module keeps its
side of the split across versions).
"""

from __future__ import annotations

import hashlib
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from vexel_core.errors import VexelError

# Skipped: third-party packages installed into the interpreter are not the standard library.
_EXCLUDED_DIRS = {"site-packages", "dist-packages", "__pycache__"}


@dataclass(frozen=True)
class SourceFile:
    relpath: str  # relative to the library root, with forward slashes
    text: str


@dataclass(frozen=True)
class Corpus:
    root: Path
    train: list[SourceFile]
    heldout: list[SourceFile]

    def describe(self) -> dict[str, object]:
        return {
            "root": str(self.root),
            "train_files": len(self.train),
            "train_bytes": sum(len(f.text.encode()) for f in self.train),
            "heldout_files": len(self.heldout),
            "heldout_bytes": sum(len(f.text.encode()) for f in self.heldout),
        }


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def is_heldout(relpath: str, heldout_percent: float) -> bool:
    """Whether a file belongs to the held-out side: a stable hash of its relative path."""
    digest = hashlib.sha256(relpath.encode()).digest()
    bucket = int.from_bytes(digest[:4], "big") / 2**32 * 100
    return bucket < heldout_percent


def load_corpus(
    root: Path | None = None,
    *,
    heldout_percent: float = 4.0,
    limit_bytes: int | None = None,
) -> Corpus:
    """Read every ``*.py`` under *root* (default: this interpreter's stdlib), split in two.

    *limit_bytes* caps the train and the held-out side each (files taken in sorted path order),
    for quick runs on small machines. Files that are not UTF-8 are skipped.
    """
    root = stdlib_root() if root is None else root
    if not root.is_dir():
        raise VexelError(f"corpus root {root} is not a directory")
    if not 0 < heldout_percent < 100:
        raise VexelError(f"heldout_percent must be in (0, 100), got {heldout_percent}")
    train: list[SourceFile] = []
    heldout: list[SourceFile] = []
    sizes = {"train": 0, "heldout": 0}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if _EXCLUDED_DIRS.intersection(rel.parts[:-1]):
            continue
        relpath = rel.as_posix()
        side = "heldout" if is_heldout(relpath, heldout_percent) else "train"
        if limit_bytes is not None and sizes[side] >= limit_bytes:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if not text.strip():
            continue
        (heldout if side == "heldout" else train).append(SourceFile(relpath, text))
        sizes[side] += len(text.encode())
    if not train or not heldout:
        raise VexelError(
            f"corpus root {root}: found {len(train)} train and {len(heldout)} held-out .py files;"
            " both sides need at least one"
        )
    return Corpus(root, train, heldout)
