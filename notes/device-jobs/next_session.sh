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
# Written at the end of session 25. Main as in session 24 (the rope and the fused product's
# heads inside the paged decode), all its GPU tests passed whole in session 25's call A. One
# Q4_0 request, each engine alone on the host: Vexel 352.8 tok/s (step: build 0.81, submit
# 1.71 ms, ITL p50 2.7), mlx-lm 107.5, llama.cpp tg128 343.6. `vexel serve` healthy after
# 55.4 s (46.2 s warm-up), first request 0.13 s.
#
# A: (~350 s, s26_a.sh) the GPU timeline of one request (per-kernel means; the last is
#    session 21's), whose bench writes the model; then start-up twice on it (plain; py-spy
#    native: which Python calls compile).
# B: from A's timeline: the products that lose most against their bytes (session 24: down
#    20.3 us against 8.7 at copy bandwidth, o 9.7 against 2.5, qkv 9.5 against 3.7):
#    `benchmarks/kernels.py` / `kernel_ncu.py` at the step's shapes, then a change to the
#    largest loser, alternated with `benchmarks/alternate.py`.
# C: from A's profile: compile fewer variants at warm-up (each ~1-2 s of NVRTC, serialised by
#    MLX's process-wide JIT lock), e.g. runtime values where template values buy no speed.
# D: the paged decode's launch shapes on the branch next/merge-in-kernel (session 25's grid:
#    16 warps whatever the span, spans of ~128 tokens within the warp budget; 0.08-0.16 ms a
#    step at 384-512 tokens). After B: the products are the larger prize.
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
