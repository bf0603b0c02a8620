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
# Written at the end of session 28. Main now: one request 415.9 tok/s beside mlx-lm's 107.6
# (call A; step interval 2.31 ms, build 0.54 + submit 0.99: the GPU sets the pace), then the
# paged decode's prologue in two round trips (1-2 us a layer faster at 128-256 tokens in three
# alternated calls; GPU tests passed). Device budget left at the end: 227 s (none usable).
#
# A: (~150 s) branch `next/prologue-q` (prepared, untested on the GPU): q kept raw until
#    after round trip 1's fence (local SASS: q's loads now go out with the parameters').
#    Its attention GPU tests (`pytest -m gpu tests/test_attention_kernels.py`, ~100 s), then
#    `attention_ncu.py --contexts 128 256 384 --time 5` against main's kernel alternated
#    (s28_g.sh's loop, main's two files in .ab_old). Merge if faster at 128-256 tokens.
# B: the 4,096-row products at one row were never tuned at their own shapes: q/k/v
#    (6144x4096, 9.9 us for 14 MB, ~3.7 at copy bandwidth) and the output product with its
#    AddNorm (4096x4096, 9.6 us for 9.4 MB). INT8_TILINGS' 4/2/4/924 gives them 768 and 512
#    CTAs of 2 rows a warp, each CTA rounding all of x first. `s29_b.sh` (ready:
#    `kernel_ncu.py --int8-sweep --rows`, new in session 28) sweeps both shapes at one row,
#    the sweep's candidates and fewer CTAs (132-396), each also on x rounded beforehand. Then
#    Nsight Compute on the best: how much of ~6 us over the bytes is the per-CTA rounding of x
#    (x rounded beforehand, `x_rounded="global"`, measures it: the feed-forward kernel's
#    last CTA could write that copy for the next layer's q/k/v product), the launch, the tail.
#    ~13 us a layer over the bytes together: the largest lever left (0.4 ms a step).
# C: the paged decode's token phase at short contexts: at 128 tokens only 4 of 8 warps hold
#    a chunk, each with ~1,000 FMAs and REP x 10 shuffles in a chain. Branch `next/two-lanes`
#    (prepared in session 28, CPU emulation 182 passed, 96 registers where main has 130/119):
#    two lanes a token (half of D each, one shuffle to add), chunks of 16 tokens, so every
#    warp works and each chain halves. s29_a.sh on it, then decode_attention.py's grid for
#    batches (16-token chunks cost more shuffles a token: keep it for small grids only if
#    batches lose). It does not contain next/prologue-q's change: merge one, rebase the other.
# D: (from session 27) the feed-forward kernel's down phase (33 MB in ~15 us, 2.2 TB/s; the
#    kernel is level with the two launches on call A's machine, 37.8-37.9 against 37.6);
#    first candidate, prepared on branch `next/ff-group-rot` (emulated feed-forward tests 8
#    passed): the 16 CTAs sharing a super-block of a down row walk the rows from one offset,
#    the groups from different ones. Its GPU tests (test_feed_forward.py -m gpu), then
#    benchmarks/feed_forward.py on main and on it (the probe for further variants: `git show
#    a345f4512210:benchmarks/mlp_probe.py` and its .cuh). Then argmax inside the head
#    product's last CTA (15.9 us a token), and Q4_K / Q6_K feed-forward (measure first).
# E: llama.cpp beside Vexel and mlx-lm in one session (s25_e.sh: carry .devkit/peers, with
#    notes/bench moved out of the tree): not run since session 25 (343.6 tok/s tg128).
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
