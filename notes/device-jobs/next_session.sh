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
# Written at the end of session 37. Main then: session 36's feed-forward kernel (33-35 us a
# block); the step on the H200 ~2.1 ms where the GPU paces it (a layer: feed-forward 34-35 us,
# q/k/v 7, paged decode 11, output + AddNorm 9; the lm_head 80 us a step: session 37, call D).
# Set aside in session 37: the next layer's q/k/v rows in the feed-forward launch
# (notes/patches/ff-next-qkv.patch; its phase ~8 us against the q/k/v launch's 7 in the step).
#
# A: (~600 s, cold) the whole suite but test_quant_kernels, not yet run with session 36's kernel:
#    `s34_b.sh`, carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/extra"] after
#    `tree_slim.sh out --model` (then `tree_slim.sh back`). Session 35: 1,227 passed.
# B: three engines on one fast host: s35_d.sh (build llama.cpp, ~270 s) then s31_c.sh at once
#    on the warm machine. Session 37's pair fell on a slow host (build + submit 2.4 ms a step):
#    llama.cpp 343.85, Vexel 308.4, mlx-lm 99.4.
# C: where the fused q/k/v phase's ~8 us go (gpu-kernels.md, session 37): apply the patch on a
#    branch (it holds `ff_phases.py --next`: the phase cut in five parts), then run
#    `s37_g.sh` (prepared, ~90 s; session 37's device time ran out before it), or profile the
#    kernel under Nsight Compute (kernel_ncu.py's way).
#    Time any variant in the engine (`alternate.py --separate-qkv`), not only in
#    feed_forward.py --next: its chain made the q/k/v launch 11.8 us where the step's is 7.
# D: the largest gaps over the bytes' pace a layer: paged decode ~10.6 us, feed-forward ~8.5,
#    output + AddNorm ~6.5, q/k/v ~3.3. Where the host paces the step (a slow host), MLX's
#    host time per launch decides: fewer launches a layer (the patch above: 32 fewer a step).
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
