# Proposed device calls of the next session (written at the end of session 15; session 16
# had no device time, and added 0 below). Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; an ncu run gets twice its expected time. The working tree with
# .devkit/wheels (35 MB) and .devkit/peers (9 MB) is over the 64 MiB a call carries: move
# notes/bench (3.7 MB) out of the tree for a call that carries both, and back after.
# A branch runs from the git-ignored wt/NAME overlay (notes/device-jobs/branch_tree.sh); rebase
# it onto main first, or the overlay runs main's newer files at the branch's older state:
#   rm -rf wt/NAME && mkdir -p wt/NAME && git diff --name-only --diff-filter=d -z main BRANCH \
#     | xargs -0 git archive BRANCH | tar -x -C wt/NAME
#
# 0: (~150 s, may share call 1's machine) session 16's engine fixes on CUDA, where the paged
#    backend runs the real kernels: the engine's tests and the interleavings search (needs
#    .devkit/wheels to hold hypothesis, sortedcontainers and attrs; session 16 put them there):
#      source .devkit/setup.sh && timeout 300 python3 -m pytest -q -p no:cacheprovider \
#        tests/test_engine.py tests/test_engine_interleavings.py tests/test_async_engine_leaving.py
#    Expect bf16 near-ties to be allowed by assert_same_runs; a block count or a finish
#    count failing is a bug.
# 1: (fresh machine, ~200 s) session 15's sweep found 8/2/4/512 faster than the
#    default 4/2/4/792 at 4096x14336 (Q4_0 16.0 vs 16.3 us, Q4_K 15.5 vs 16.3) in one order;
#    its second order was lost to a 60 s ncu limit. Run the two in both orders, then, if it
#    holds, merge branch next/eight-warps-long-rows (that default beyond 4,096 columns for
#    Q4_0 and Q4_K; its emulated tests pass) after its GPU tests at the longest rows, from its
#    tree (test_quant_kernels -k "gguf_kernel and (Q4_0 or Q4_K) and (longest or gated)
#    and not emulated"). Give each ncu run 120 s:
#      timeout 120 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
#        python3 benchmarks/kernel_ncu.py --int8-sweep --cols 14336 --formats Q4_0,Q4_K \
#        --launches 3 --tilings 8/2/4/512,4/2/4/792 --map $OUT/map.tsv > $OUT/ncu.csv 2>&1
#    (and --tilings 4/2/4/792,8/2/4/512; $M as in s15_sweep.sh).
# 1b: (~400 s; a fresh machine compiles every variant) branch next/packed-q4_0 (rebased onto
#    session 15's main): gemv_packed with x rounded beforehand (ROUNDED mode, written after
#    session 15's last call; never on a GPU) beside the same kernel rounding x in each CTA
#    (13.4 us) and gemv_int8 (13.8). Does the real kernel reach the probe's 11.8 us (73%)?
#      rm -rf wt && mkdir -p wt/packed && git diff --name-only --diff-filter=d -z main \
#        next/packed-q4_0 | xargs -0 git archive next/packed-q4_0 | tar -x -C wt/packed
#      source .devkit/setup.sh && source notes/device-jobs/branch_tree.sh && tree packed \
#        && cd /tmp/packed && bash notes/device-jobs/packed_rounded.sh
#    The script times the probe's rounded-beforehand variants in the same call. If packed-r
#    comes near the probe, Q4_0 at 70% is: x rounded once where it is made (the norm) and the
#    packed layout wired through every Q4_0 path. If not: the SASS comparison on the branch
#    (notes, "ROUNDED beside the probe") found 60 registers against the probe's 46 (32 warps
#    an SM against 40) and ~180 more stall cycles a row with no weight load in flight; its two
#    suggested changes (one dp4a chain a block; the row's reduction deferred under the next
#    row's loads) are compile-checked patches on the branch (notes/patches/).
# 1c: (~350 s) branch next/q5k-int8 (written after session 15's last call, never on a GPU):
#    one row of Q5_K (Q5_K_M files) on gemv_int8 instead of the float kernel, Q4_K's head and
#    16-byte reads shared, the fifth bit from qh by one rotate (nvdisasm: 328 instructions an
#    aligned chunk against Q4_K's 227). Its GPU tests, then gemv_int8 against the float kernel
#    on the same Q5_K weight, and Q4_K beside it at both shapes and gated:
#      rm -rf wt && mkdir -p wt/q5k && git diff --name-only --diff-filter=d -z main \
#        next/q5k-int8 | xargs -0 git archive next/q5k-int8 | tar -x -C wt/q5k
#      source .devkit/setup.sh && bash wt/q5k/notes/device-jobs/q5k_int8_check.sh
#    Merge if the tests pass and gemv_int8 beats the float kernel for Q5_K at both shapes.
# 2: (~600 s, two calls back to back) the three engines on main: s14_a.sh 1 builds llama.cpp
#    beside GPU tests; s14_a.sh 2 runs one Q4_0 request in Vexel, mlx-lm and llama.cpp. Carry
#    [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] with notes/bench moved out.
# The work that remains for issue 8's goals (notes/gpu-kernels.md, "Where things stand"):
#  * Q4_0 at 70%: the packed layout (next/packed-q4_0: 13.4 us, 64%, session 15) wired in for
#    every Q4_0 path on CUDA, and x rounded once where it is made (add_rms_norm writing the
#    int8 copy; next/rounded-x has round_x and the product side) for the rest.
#  * 600 tok/s for one request: the host (build ~1.15 + submit ~1.75 ms of a ~3.0 ms step) and
#    the GPU (~2.3-2.9 ms of kernels a token) both stand above 1.67 ms.
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
