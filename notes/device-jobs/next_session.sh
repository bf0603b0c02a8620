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
# Written at the end of session 32. Main now: session 31's code with embedding rows dequantized
# straight into bfloat16 (one launch a step fewer) and test_quant_formats' one-row products
# reading x as CUDA reads it. Set aside: the pending norm (level three times). Prepared:
# next/argmax (the sampler's argmax as our kernel: 5.9-7.2 us alone against MLX's 15.8, but
# 25.9 in the engine with its output then padded; its GPU test then disagreed with MLX on
# rows with NaN; both addressed, neither measured) and next/ff-pass8 (the feed-forward
# kernel's down phase with twice the rows in flight). Device budget left at the end: 119 s.
#
# A: (~250 s) `git checkout next/argmax && source .devkit/setup.sh && bash
#    notes/device-jobs/s33_a.sh` (or `git apply notes/patches/argmax.patch` on main): its
#    GPU tests (the kernel against mx.argmax and numpy's choice, NaN ranked first),
#    benchmarks/argmax.py with and without --read-back, then the
#    engine's timeline with --where vx_argmax: merge if the tests pass and the engine's
#    launch is near the 6-7 us it takes alone; if it is still ~26 us, the output's buffer is
#    not the cause (look at what runs beside it in the graph).
# B: (~560 s) `s33_b.sh` on main: the whole test suite on the GPU once. Session 32 found
#    test_quant_formats' one-row products failing there, never run on a GPU before (fixed on
#    main, not re-run); other modules not marked `gpu` may hold the same. Carry .devkit/extra
#    too (llama_cpp, pytest-xdist, execnet; the script says how to fill it) with notes/bench
#    moved out of the tree (the 64 MiB limit).
# C: (~400 s) `git checkout next/ff-pass8 && source .devkit/setup.sh && bash
#    notes/device-jobs/s33_c.sh` (or `git apply notes/patches/ff-pass8.patch` on main): the
#    feed-forward kernel's down phase with eight rows in flight a lane (four on main): its
#    GPU tests, feed_forward.py --passes 4 8, then the engine
#    alternated against ab.py --down-pass-4. The down phase (~15 us of the kernel's ~38) is 8
#    dependent round trips a warp at PASS 4, 4 at PASS 8 (109 registers, the loads all issued
#    first). Merge if the block is shorter.
# D: x rounded by its writer for the q/k/v product (the feed-forward kernel's last CTA writes
#    round_x's buffer beside normed; gemv_int8 reads it, XPRE): ceiling ~0.02 ms a step
#    (session 29). Only if A-C leave time: the budget table says why these levers cannot
#    reach 600 tok/s, and what would ("persistent layer", gpu-kernels.md).
# Keep one llama.cpp run a session if the budget allows: s31_b.sh (build, with the engine's
# GPU tests beside it) then s31_c.sh at once on the warm machine (three engines). Their carry
# needs notes/bench and vexel_core/assets/vexel-tiny.gguf moved out of the tree (64 MiB).
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
