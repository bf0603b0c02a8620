# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). A machine left idle for 30 s is given back: a call
# that needs the last one's state (llama.cpp's build in /tmp/lc) must follow at once.
#
# Written at the end of session 22. Main: unchanged engine (session 21's AddNorm merged). The
# decode segment (branch next/decode-segment) was measured: 78.5 us a launch against 54.6 for
# its four launches once its norms' readers loaded the stream by 8-byte loads (184 us before);
# one request's step 3.41-3.66 against 2.98 ms: not merged. Three engines (slow host): Vexel
# 267.1, mlx-lm 145.3, llama.cpp 341.5 tok/s. After the device time: the whole-step compile
# (branch next/whole-step), CPU-tested.
#
# 0: (~460 s, s23_c.sh) the whole-step compile (branch next/whole-step, CPU-tested only): one
#    compiled graph a decode step, attention included, instead of 33 segments with the
#    attention built in Python between them (~1.1 ms of build a step on a fast host):
#      git checkout next/whole-step    (it holds s23_c.sh)
#    Its GPU tests (the in-place writes through a compiled replica, compiled against eager,
#    the engine), then arms_rounds 2 "vexel" "python3 benchmarks/ab.py --segment-compile".
#    Merge if the median step is shorter in both rounds. Expected: build ~1.16 -> ~0.5 ms; the
#    GPU (~2.4 ms) then sets the pace (~400 tok/s), so every GPU microsecond counts after it.
# 0b: (~470 s, s23_a.sh) the segment with the exit count gone (CPU only so far):
#      git checkout next/decode-segment    (it holds s23_a.sh too)
#    (or git apply notes/patches/decode-segment.patch on main). Its GPU tests, then
#    benchmarks/segment.py --variants (exit-count, block-order: what the per-CTA atomics cost),
#    then arms_rounds 2. It hooks the 33 segments (`_compiled_segments`): with the whole step
#    merged it must move into the step's trace (DecoderLM._forward, fused per block pair).
#    Merge only if the launch is no slower than the four launches and the
#    median step is shorter in both rounds. If the floor (no-wait) stays ~10 us above them:
#    s23_b.sh (Nsight Compute on one segment launch and one step of the four launches, stalls
#    by SASS line), then rms_inv once per phase (the last part writes the inverse beside its
#    count), or the PARTS arm that won.
# 1: the paged decode's split with the merge inside the kernel (the last CTA of a KV head to
#    finish merges), ~11.8 us a layer now.
# 2: llama.cpp (~270 s build) beside GPU tests whenever a call has room, e.g. the engine's
#    Hypothesis searches, shortened (they did not finish in 370 s at CI's size):
#      VEXEL_SEARCH=0.1 timeout 370 python3 -m pytest -q -p no:cacheprovider \
#        tests/test_engine_interleavings.py tests/test_async_engine_leaving.py --durations=5
# Alternated A/Bs: notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the
# runs' median steps; one slow host episode must not decide a round).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
