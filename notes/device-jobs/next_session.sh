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
# Written at the end of session 30. Main now: session 29's code, with the split merge's counts
# and the paged decode's placeholders out of MLX's small pool (attention GPU tests 136 passed,
# 8 skipped) and tests/test_kernel_arrays.py guarding that rule. Session 30 ran session 29's
# fused launch (the q/k/v product inside the paged decode's launch): first 163 us a layer,
# because its counts were 8 bytes of managed memory; fixed, correct (5 of 5 GPU test runs)
# but not faster (GPU level at 128 tokens, +0.3-1.6 us a layer beyond; the step +0.064 ms in
# alternate.py): set aside as notes/patches/fused-attention.patch (a host lever for later:
# gpu-kernels.md). One request: 409.7 tok/s against mlx-lm's 108.5 (3.78x); build 0.71 +
# submit 1.35 ms a step, the GPU ~2.3 ms: level. Device budget left at the end: 143 s (none usable).
#
# D and F together first: `s31_df.sh` on branch next/s31-probes (both branches merged onto
#    main; ~550 s, one machine start). Or each alone:
# D: (~200 s) `s31_d.sh` (ready) on branch next/ff-slices (or `git apply
#    notes/patches/ff-slices.patch` on main): the feed-forward kernel reading its down matrix
#    in column slices (`packed.slice_q4_0`), a probe written after call J's Nsight Compute run
#    (below): each CTA streams contiguous 576-byte super-blocks of its own 64 columns instead
#    of two sectors a row. Emulated equal to the packed rows bit for bit; nvcc 13: 108
#    registers either way. Its GPU test, then feed_forward.py's three arms. If it is faster
#    by a few us, the engine needs every reader of a down matrix to take the layout (the float
#    kernel for 2-8 rows, the prefill's tiles, the CPU path), or the loader to pick it only
#    where the one-row kernel applies and the others dequantize from it: a design to write
#    before code (gpu-kernels.md, "Next").
# A: (~250 s) `s30_a.sh` (ready, main): Nsight Compute's warp samples on the three 4,096-column
#    launches (output + AddNorm, plain output, q/k/v). Together ~16-18 us a layer (0.5 ms a
#    step) at 30-45% of the copy bandwidth, and no faster with their weight in L2 (session 29):
#    read the samples by phase (launch, x's rounding and its barrier, the first stage's wait,
#    the loop, the reduction, the AddNorm's last CTA) and shorten the longest.
# B: llama.cpp beside Vexel and mlx-lm: the build in a call of its own (s25_e.sh, ~5.5
#    minutes; carry .devkit/peers, notes/bench moved out of the tree), then at once on the
#    same warm machine `vexel bench` one request beside mlx-lm (s30_d.sh's second half). Never
#    build beside a timed run (session 29's calls D-E).
# F: (~300 s) `s31_f.sh` (ready) on branch next/device-step (or `git apply
#    notes/patches/device-step.patch`): the decode step's array made on the device as the
#    last one plus one (runner.StepArrayMaker), so that 15 steps in 16 at one request have no
#    host-made array and no page fault (session 20: ~100 us a step, ~4%). CPU tests: the same
#    tokens and log-probs bit for bit. The engine alternated against ab.py
#    --host-step-arrays, then the paged decode's launches in order. Merge if shorter.
#    (`s31_e.sh` is the same question asked of main alone; F answers it too.)
# C: done in session 30 (call J, `s31_c.sh`): the feed-forward launch's down phase waits on
#    its weight loads (notes/bench/s30/j); D is what it suggested.
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
