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
# Written at the end of session 29. Main now: session 28's code with q kept raw in the paged
# decode's prologue (merged, 0.15-0.35 us a layer). Session 29 measured and set aside
# two lanes a token (slower) and the feed-forward kernel's grouped down offsets (level); found
# no tiling of the 4,096-column products more than ~0.5 us faster; and found those products
# no faster with their whole weight already in L2 (benchmarks/l2_prefetch.py: output 6.0 us
# either way): their time is a chain of dependent steps, not bytes. Its three one-request
# runs fell on a slow host (329.6-379.0 tok/s, mlx-lm 81.1-89.3, 3.9-4.4x; build + submit
# ~2.4 ms set the pace). Device budget left at the end: 223 s (none usable).
#
# A: (~250 s) `s30_a.sh` (ready): Nsight Compute's full set and SASS warp samples on the
#    engine's output product (plain and with its AddNorm, 4096x4096) and q/k/v product
#    (6144x4096): which links of the chain hold the ~6-9 us (launch and ramp, x's load and
#    rounding, the barrier after it, the first stage's wait, the reduction, the AddNorm's last
#    CTA). Decide B's shape from it.
# B: the q/k/v product inside the paged decode's launch (design in gpu-kernels.md, "Next",
#    session 29): product CTAs first in the grid, each a share of one KV head's 768 rows,
#    counting its rows done into that head's counter; the head's attention CTAs last in the
#    grid, issuing everything that does not need the new token (parameters, tables, the rope's
#    frequencies, the history's first rows) before they wait for the counter. Product CTAs
#    never wait, so no order of CTA scheduling deadlocks. It removes a launch a layer (the
#    GPU's ramp and tail, ~7-11 us of MLX's host time a kernel: ~0.3 ms a step of host time)
#    and hides the attention's prologue behind the product. One request (one row) only;
#    batches keep the two launches. First `s30_b.sh` (ready, ~100 s):
#    benchmarks/fused_boundary.py (written in session 29, compiled locally, never run) times
#    the q/k/v product and a stand-in attention in one launch against two. Build the kernel
#    only if "fused" is clearly ahead; then its emulated and GPU tests, alternate.py.
# C: llama.cpp beside Vexel and mlx-lm: a call of its own for the build (s25_e.sh, ~5.5
#    minutes; carry .devkit/peers, notes/bench moved out of the tree), the benches right
#    after on the same warm machine. Never build beside a timed run (session 29's calls D-E).
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
