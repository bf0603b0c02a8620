"""`vexel ARGS` with the KV pool written by MLX's scatter instead of the in-place kernel
(session 5's A/B of the two cache writes)."""

import sys

import vexel_core.kvcache.pool as pool

pool.kernel_backend = lambda: None  # the pool's own lookup only; attention keeps its kernel
from vexel_core.cli import console_main  # noqa: E402

sys.argv = ["vexel", *sys.argv[1:]]
console_main()
