# Proposed device calls of the next session (written at the end of session 13). Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; an ncu run gets twice its expected time (ncu writes its CSV only
# at the end: session 13's call 1 lost 40 launches to a 150 s limit).
#
# Two branches were written after session 13's last call and have never run on a GPU. Make
# their changed files into wt/ first (branch_tree.sh says how), carry
# [".devkit/wheels", ".devkit/setup.sh", "wt"]:
#   rm -rf wt && mkdir -p wt/q4kw wt/packed
#   git diff --name-only --diff-filter=d -z main next/q4k-wide-smem \
#     | xargs -0 git archive next/q4k-wide-smem | tar -x -C wt/q4kw
#   git diff --name-only --diff-filter=d -z main next/packed-q4_0 \
#     | xargs -0 git archive next/packed-q4_0 | tar -x -C wt/packed
#
# 1: (fresh machine, ~400 s) next/q4k-wide-smem: gemv_int8 reads Q4_K's quants and scales with
#    16-byte shared-memory loads (~28 a chunk of four sub-blocks where there were ~104;
#    benchmarks/sass_loads.py) and Q6_K's two scales with one load. Its GPU tests, then main
#    against it under Nsight Compute (Q4_0 the control) at both shapes:
#      source .devkit/setup.sh && bash wt/q4kw/notes/device-jobs/wide_smem_check.sh
#    Merge if Q4_K is faster at both shapes by more than the control moves and Q6_K is not
#    slower. Q4_K's goal is 14.4 us (60%); it stands at 18.3-18.5.
# 2: (~350 s) next/packed-q4_0: the packed prototype now has the probe's fastest structure
#    (fenced coherent loads, the first pass in registers while the CTA rounds x four lanes a
#    block; default 8/1/4/1056, 46 registers). The probe measured 12.7-12.8 us for it against
#    gemv_int8's 14.6:
#      source .devkit/setup.sh && source notes/device-jobs/branch_tree.sh && tree packed \
#        && cd /tmp/packed && bash notes/device-jobs/packed_check.sh
#    If it holds, the packed layout's wiring (notes/gpu-kernels.md, "Session 13", the plan)
#    is the next engine change; with x rounded once where it is made (11.8 us, 73%) it meets
#    Q4_0's goal.
# 3: the three engines on one request after the session-13 merges (the fused cache write,
#    the fenced decode): s12_d.sh 1 (llama.cpp built beside the GPU tests, ~420 s) then
#    s12_d.sh 2 at once (~220 s), carrying [".devkit/wheels", ".devkit/setup.sh",
#    ".devkit/peers"]. Host episodes move the Python engines by 1.5x: run 2 twice if time
#    allows.
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
