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
# A: (~400 s) `s30_c.sh` (ready) on branch next/fused-attention (check it out first; or
#    `git apply notes/patches/fused-attention.patch` on main at 1b6ef97): the q/k/v product
#    inside the paged decode's launch for one request (prepared in session 29 after the device
#    time: CPU emulation equal to the two launches bit for bit, nvcc compiles it, never run on
#    a GPU). Its GPU tests, the compiled decode's, then the engine alternated against the two
#    launches (ab.py --separate-qkv-product). Then at once (the machine stays warm 30 s)
#    `s30_d.sh`: its GPU time a layer against the two launches (benchmarks/after_product.py)
#    and `vexel bench` one request beside mlx-lm. Merge if correct and shorter in the
#    rounds. If it is slower, `s30_b.sh` (stand-ins:
#    benchmarks/fused_boundary.py) says whether the boundary or the product's fewer CTAs is
#    the cost, and `s30_a.sh` (Nsight Compute on the 4,096-column products) where their
#    chain's time goes. Its extension, the output product as a third role (gpu-kernels.md,
#    "Next"), waits for A's verdict.
# B: (~250 s) `s30_a.sh` (ready): Nsight Compute's warp samples on the two 4,096-column
#    products, which session 29 found no faster with their weight in L2.
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
