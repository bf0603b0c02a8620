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
# Written at the end of session 38. Main then: session 36's feed-forward kernel, session 38's
# paged decode (the first table entries in round trip 1); the step ~2.08 ms where the GPU paces
# it (alternate.py). A layer (session 37, call D): feed-forward 34-35 us, q/k/v 7, paged decode
# 11, output + AddNorm 9; the lm_head 80 us a step. Session 38 ran the whole suite on the GPU
# (1,228 passed; only the shipped model's tests failed, its files moved out for the carry).
#
# A: (~330 s) `s39_a.sh`: the two prepared paged-decode patches (round trip 1 in one batch;
#    the value rows fenced below 16 warps), their GPU tests, each timed in the engine against
#    main and against the first alone. Its header says how to make the branches and the
#    `.ab_*` folders. Merge what is shorter in most rounds with the same greedy tokens.
# B: three engines on one fast host: s35_d.sh (build llama.cpp, ~270 s) then s31_c.sh at once
#    on the warm machine (carry adds ".devkit/peers"). Sessions 37-38's pairs fell on slow or
#    different hosts.
# C: the largest gaps over the bytes' pace a layer: paged decode ~10 us (call D's profile:
#    half its samples before the first chunk, the merge barrier's idle warps at 128 tokens),
#    feed-forward ~8.5, output + AddNorm ~6.5, q/k/v ~3.3. Look at each kernel's device SASS
#    (ncu's source page) for loads in branches: a branch ends ptxas's batch (session 38).
#    Where the host paces the step (a slow host), fewer launches a layer decide.
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
