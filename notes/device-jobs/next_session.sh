# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). A machine left idle for 30 s is given back: a call
# that needs the last one's state (llama.cpp's build in /tmp/lc) must follow at once.
# .devkit is not in git. In a fresh checkout: copy ../shared/device/{setup.sh,wheels,peers}
# into .devkit, then add what the shared wheels lack (the test runner's and the server's):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 -d .devkit/wheels hypothesis sortedcontainers attrs \
#     uvicorn starlette h11 anyio sniffio idna prometheus_client
#   pip download --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
#     -d .devkit/pyspy py-spy
#
# Written at the end of session 26. Main: the paged decode's writing is a runtime value
# (iparams[6]): four attention kernels to compile at start-up instead of seven, GPU time
# unchanged; `vexel serve` healthy after ~38 s (alternated: 37.9 against 43.7-46.6 s). GPU
# tests passed (attention + KV pool 142, compiled decode 6). One Q4_0 request on a fast host:
# Vexel 372.8 tok/s, mlx-lm 141.5 (step: build 0.77, submit 1.60 ms, interval 2.55).
#
# A: (~450 s, s27_a.sh, on the branch next/merge-in-kernel, merged with main in session 26)
#    the in-kernel split merge with session 25's grid's shapes (one 8-warp span up to 256
#    tokens, 16-warp spans of 128 beyond): GPU tests, then the step alternated against main's
#    shapes at 128-384 and 1,024-1,280 tokens of context. Merge if neither is slower; the
#    long one also drops a merge launch per layer (~6 us of host time each).
# B: the products that lose most against their bytes (session 26's timeline: down + AddNorm
#    18.2 us against 8.7 at copy bandwidth, q/k/v 9.9 against 3.7, output + AddNorm 9.6
#    against 2.5): `benchmarks/kernels.py` / `kernel_ncu.py` at the step's shapes, a change to
#    the largest loser, alternated with `benchmarks/alternate.py`.
# C: start-up: the kernels left to compile are ~14 at 1.2-2.6 s each (MLX's header alone
#    ~1.3 s; `benchmarks/compile_cost.py`). Fewer variants only where a template value buys no
#    speed (measure each with the kernel grid, as session 26 did for the write; a candidate:
#    `ACTIVATION_TILES` without 2, two-row decodes taking the 4-row kernel, if
#    `benchmarks/kernels.py` times 2 rows alike on both: one kernel fewer); the rest
#    needs MLX to write its disk cache for custom kernels (engine-gpu.md, session 26). Open
#    question, seconds of a call: NVRTC 12.9+ is said to cache through the driver's cache
#    (`CUDA_CACHE_DISABLE`, `CUDA_CACHE_PATH`, `~/.nv/ComputeCache`; NVRTC's guide, section
#    "Caching (CUDA 12.9+)", was not readable here): `s27_b.sh` (~100 s) runs
#    `compile_cost.py` twice and once with the cache disabled, with the cache folder's size.
#    If it keeps most of a compile, users' second start is already short (say so in the
#    README); if not, MLX writing its disk cache for custom kernels is the one way.
# D: greedy sampling's argmax is MLX's `arg_reduce_general`, 15.9 us of GPU a token for
#    128,256 logits: one CTA's chain. A multi-CTA argmax (or the head product's epilogue, the
#    AddNorm's last-CTA pattern) would take ~3 us, and in the epilogue one launch fewer.
#    Either is one more kernel to compile at start-up (~1.5 s): ~0.5% of a step against ~4%
#    of start-up, so only with C's cache in hand.
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
