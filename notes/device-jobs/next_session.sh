# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail or grep (a limit kill loses it: session
# 34's probe printed nothing after 300 s; write to $OUT and read the file after); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB; `notes/device-jobs/tree_slim.sh` moves it). A
# machine left idle for 30 s is given back: a call that needs the last one's state
# (llama.cpp's build in /tmp/lc) must follow at once. A refused start costs ~105 s of the
# budget, and a call answered "none asked for" 15 s (session 36 lost ~650 s to five refusals:
# wait the minutes the answer names, not less). Do not start one with under ~240 s left.
# .devkit is not in git. In a fresh checkout: `bash notes/device-jobs/devkit_fill.sh` (from
# ../shared and PyPI: setup.sh, wheels, peers, extra for the whole suite, pyspy).
#
# Written at the end of session 36. Main then: the feed-forward kernel summing whole down rows
# after the grid's count of done slices (cuda/feed_forward.cuh; 33.3 us a block, step -0.15
# ms, 437.3 tok/s beside mlx-lm's 144.7). Run on the H200 with it: test_feed_forward (13),
# test_compiled_decode (6), the AddNorm tests of test_quant_kernels (15), test_kernel_arrays
# and test_gemv_packed (101). Not run with it: the rest of the suite (session 35 ran all of it
# on the code before), and llama.cpp.
#
# A: (~600 s, cold) the whole suite but test_quant_kernels: `s34_b.sh`, carry
#    [".devkit/wheels", ".devkit/setup.sh", ".devkit/extra"] after `tree_slim.sh out --model`
#    (then `tree_slim.sh back`). Session 35: 1,227 passed, none failed.
# B: three engines, one request: s35_d.sh (build llama.cpp, ~300 s) then s31_c.sh at once on
#    the warm machine (session 35: Vexel 426.4, mlx-lm 138.7, llama.cpp 350.5; session 36 with
#    the new kernel, no llama.cpp: Vexel 437.3, mlx-lm 144.7).
# C: the grid's count in one launch is now safe (notes/gpu-kernels.md, session 36, "What the
#    count opens"): the next layer's q/k/v rows after the feed-forward part's norm, in the
#    same launch, is the largest untried lever (q/k/v 9.6 us a layer against ~3.7 of bytes).
#    Probe it as ff_phases.py probes (a variant of feed_forward.cuh's text) before the engine.
# D: the feed-forward kernel's next parts (notes/gpu-kernels.md, session 36): the wait for the
#    last slice (~1.5 us) and the last CTA's norm tail (~3 us). A second count after the rows,
#    each CTA normalizing its own rows, was measured and set aside (notes/patches/
#    ff-norm-count.patch: 35.4 us a block against main's 33.3). Time any variant with `ff_phases.py --rounds 3` (a cut or variant of feed_forward.cuh's text)
#    before the engine's A/B (`alternate.py --separate-feed-forward`).
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
