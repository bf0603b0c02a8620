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
# Written at the end of session 31. Main now: session 30's code with the decode step's array
# made on the device (merged: -0.097 ms a step, eight alternated rounds; its engine test fixed
# after failing on the GPU for its own host arm). One warm machine, three engines: Vexel 431.0
# tok/s, mlx-lm 94.4 (4.57x), llama.cpp tg128 343.95 (Vexel 1.25x); interval 2.22 ms, the GPU's
# pace there (build 0.52 + submit 1.06 ms). Set aside: the down matrix in slices (0.9 us a
# layer), and twice the output product's norm left to the feed-forward kernel (product -2.1
# us, reader +2.2-2.5). Device budget left at the end: 233 s (none usable).
#
# A: (~350 s) `s32_a.sh` on branch next/pending-norm (or `git apply
#    notes/patches/pending-norm.patch` on main): the pending norm's third variant (the
#    reader asks h and w into L1 before its weight loads; the producer asks the norm weight
#    into L2), its GPU tests, pending_norm.py, the engine (the branch carries it there:
#    PreNormBlock.leave, GatedMLP.reads_pending_norm) alternated against ab.py
#    --epilogue-norm, then Nsight Compute on both feed-forward kernels if time is left.
#    Merge if the step is shorter; else delete the branch, keep the patch.
# B: (~250 s, main) the q/k/v product's Nsight Compute run (the third part of s30_a.sh, which
#    call A of session 31 did not reach: `packed_ncu.py --shapes Q4_0/qkv`). Session 31: x's
#    load and rounding are 40% of the plain 4,096-column product's warp samples; the q/k/v
#    product reads the feed-forward kernel's normed x. If the same, x rounded by its writer
#    (the feed-forward kernel's last CTA writing round_x's buffer beside normed; gemv_int8's
#    XPRE 1/2 read it) is the lever to try: ~0.2 us a product was session 17's estimate.
# C: the host (1.6-2.0 ms of build + submit, by host): fewer kernels a layer
#    (notes/patches/fused-attention.patch: 32 launches; its GPU cost +0.064 ms a step).
#    Worth re-running with alternate.py now that the GPU's step is 2.2 ms and the host's
#    1.6-2.0: on a slow host it should win.
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
