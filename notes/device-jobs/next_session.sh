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
# Written at the end of session 27. Main now: the paged decode merges split spans inside the
# kernel on CUDA (merged: 2.371 against 2.416 ms a step at 128 tokens), and a block's gated
# feed-forward part is one launch for packed Q4_0 (cuda/feed_forward.cuh: 37.7 us of GPU
# against the two launches' 37.8-39.0; step 2.329 against 2.345 ms alternated; deterministic
# int64 sums). GPU tests passed (feed-forward 9, compiled decode 6, attention 136).
# In alternate.py the step is the GPU's now (~2.33 ms).
#
# A: (~200 s, `s28_a.sh`) one request under `vexel bench ... --compare mlx-lm --trace-steps`
#    on main: session 27 ran none. With the step trace (build / submit / wait): is the host or
#    the GPU the pace now? Then `benchmarks/feed_forward.py` (the kernel against the two
#    launches, ~40 s). llama.cpp after it, on the same warm machine (`s25_e.sh`: carry
#    .devkit/peers, notes/bench moved out of the tree), if the session can spare ~6 min.
# B: the feed-forward kernel's down phase: 33 MB in ~15 us (2.2 TB/s; the gate/up phase reads
#    66 MB in ~14). Nsight Compute on session 27's probe (`git show
#    a345f4512210:benchmarks/mlp_probe.py`, and its .cuh; `--variants 64/8/4/0/3/35`)
#    (dram and lts throughput, sectors per request, L2 hit rate of the scale sectors, the
#    atomics' lts ops). First candidate, one line: the rotation by super-block group, so
#    that the 16 CTAs reading one 576-byte super-block of a down row stay in step (DRAM
#    pages read once) while the 14 groups keep their atomics on different rows (today each
#    CTA has its own offset: 1.9 us saved on the atomics, maybe some lost on DRAM pages):
#    rot = ((c / 16) * N / (grid / 16)) & ~15 (a new PIPE bit in the probe). Then: the down
#    columns of a CTA pair or a 4-CTA cluster shared through distributed shared memory (each
#    CTA then reads 128-256 contiguous bytes a row for a quarter of the rows); `cp.async.bulk`
#    of a warp's rows into shared memory. Each ~1 us of the down phase is ~0.03 ms a step.
# C: the same fusion for the attention's side is not possible (the norm needs all of h), but
#    the head: greedy argmax (MLX's arg_reduce_general, 15.9 us a token) inside the head
#    product's last CTA, one launch fewer a step.
# D: Q4_K / Q6_K models (the usual Q4_K_M files) still take the two feed-forward launches:
#    the kernel's slice logic is format-independent, but the down matrix's columns are read a
#    block (256 elements) at a time: a slice of 256 values a CTA, 56 CTAs for F = 14,336, too
#    few; measure before porting.
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
