# Proposed device calls of the next session (written at the end of session 14). Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; an ncu run gets twice its expected time. The working tree with
# .devkit/wheels (35 MB) and .devkit/peers (9 MB) is over the 64 MiB a call carries: move
# notes/bench (3 MB) out of the tree for a call that carries both, and back after.
#
# 1: (fresh machine, ~250 s) branch next/packed-q4_0 after session 14's nvdisasm comparison
#    with the probe: the first pass's scale conversions no longer wait for their loads before
#    the CTA rounds x, and passes within the row have no bounds checks (no branch after each
#    step). Its kernel and the probe's x-rounding variants on one machine:
#      rm -rf wt && mkdir -p wt/packed
#      git diff --name-only --diff-filter=d -z main next/packed-q4_0 \
#        | xargs -0 git archive next/packed-q4_0 | tar -x -C wt/packed
#    carry [".devkit/wheels", ".devkit/setup.sh", "wt"]:
#      source .devkit/setup.sh && source notes/device-jobs/branch_tree.sh && tree packed \
#        && cd /tmp/packed && bash notes/device-jobs/packed_vs_probe.sh
#    If the packed kernel comes within ~0.3 us of the probe's "+scales fence x:round"
#    (12.7-12.8 us in session 13), wire the packed layout in (notes/gpu-kernels.md, "Session
#    13", the plan): with x rounded once where it is made it reaches the probe's 11.8 us (73%).
# 1b: (~300 s) branch next/q4k-aligned: gemv_int8's Q4_K path without its per-sub-block
#    alignment branches, its scales decoded branch-free and odd nibbles multiplied in place
#    (nvdisasm: 315 -> 219 instructions a chunk; Q4_0 284). Q4_K's goal is 14.4 us (now 14.8):
#      mkdir -p wt/q4ka && git diff --name-only --diff-filter=d -z main next/q4k-aligned \
#        | xargs -0 git archive next/q4k-aligned | tar -x -C wt/q4ka   (beside wt/packed)
#      source .devkit/setup.sh && bash wt/q4ka/notes/device-jobs/q4k_aligned_check.sh
#    Merge if Q4_K is faster at both shapes beyond the control (Q4_0) and Q4_0 is not slower.
#    One call each, back to back on the warm machine (wt holds both trees; 30 s of idle
#    gives the machine back).
# 2: (~450 s) branch next/bodies-in-headers: the paged decode's and add_rms_norm's algorithms in
#    headers, their bodies one call (MLX's per-launch cost grows with a body's text, ~0.3 us a
#    KB): its GPU tests, then ab_rounds.sh against the same code with the bodies padded back.
#      rm -rf wt && mkdir -p wt/bodies && git diff --name-only --diff-filter=d -z main \
#        next/bodies-in-headers | xargs -0 git archive next/bodies-in-headers | tar -x -C wt/bodies
#      source .devkit/setup.sh && source notes/device-jobs/branch_tree.sh && tree bodies \
#        && cd /tmp/bodies && bash notes/device-jobs/bodies_ab.sh
#    Merge if the tests pass and the short bodies' median step is shorter in every round.
# 2b: (~150 s, on call 2's warm machine) the GPU tests of what session 14 merged without a GPU
#    (the paged decode's launch planned once a shape; the same launch arguments, checked on
#    the CPU):
#      source .devkit/setup.sh && timeout 300 python3 -m pytest -q -p no:cacheprovider \
#        tests/test_attention_kernels.py tests/test_attention_backends.py \
#        tests/test_compiled_decode.py -k "not emulated"
# 3: (~300 s, optional) branch next/rope-in-decode, if taken up again: more rounds of its A/B
#    (notes/engine-gpu.md, "Session 14"), after moving its per-layer Python (the `_Rotation`
#    and `_parameters` key) into the step's plan; ab_rounds.sh with
#    "python3 benchmarks/ab.py --separate-rope" as B, from the branch's tree.
# 4: the three engines on a quiet host (s14_a.sh 1 then 2 at once, carrying
#    [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] with notes/bench moved out).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
