# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). A machine left idle for 30 s is given back: a call
# that needs the last one's state (llama.cpp's build in /tmp/lc) must follow at once.
#
# Written at the end of session 20. Main's one request: median step 2.65-2.71 ms (build 1.11 +
# submit 1.40-1.45; host-bound). The one-step array is merged (the paged decode's slow launches
# are gone; the step's page fault, ~100 us, is now layer 0's rope's). The AddNorm epilogue
# (branch next/add-norm, notes/patches/add-norm.patch against c1084e7) measured ~15 us a launch
# slower than the plain product. Its fences were __threadfence() (MEMBAR.SC.GPU) in every
# warp; now thread 0's release/acquire alone, as cooperative groups' grid sync: unmeasured.
#
# 0: (~450 s) the AddNorm epilogue again: `git checkout next/add-norm` (or `git apply
#    notes/patches/add-norm.patch` on c1084e7), then in one call (s21_a.sh):
#      a. python3 benchmarks/add_norm.py (the branch's: the product, the product then
#         add_rms_norm, and the fused launch, each chained through the residual, at 4096x4096
#         and 4096x14336 Q4_0 packed)
#      b. gpu_timeline.py --top 12 --where gemv_int8_norm -- $W (W as in s20_c.sh)
#      c. arms_rounds.sh 2 "vexel" "python3 benchmarks/ab.py --separate-add-norm"
#    If the fused launch is still ~15 us slower: Nsight Compute on one launch
#    (benchmarks/packed_ncu.py shows how), looking at the last CTA's tail and the fences.
# 1: (~430 s alone, s21_b.sh) the branch's GPU tests: timed out twice at 130-170 s (NVRTC):
#      timeout 380 python3 -m pytest -q -p no:cacheprovider tests/test_quant_kernels.py -k add_norm
# 2: (~500 s, two calls back to back) the three engines on main: s14_a.sh 1 builds llama.cpp
#    beside GPU tests; s14_a.sh 2 runs one Q4_0 request in Vexel, mlx-lm and llama.cpp.
# 3: the paged decode's split with the merge inside the kernel (the last CTA of a KV head to
#    finish merges; the same count-and-reset as the AddNorm epilogue, once its cost is known).
# 4: (~550 s alone) the engine's Hypothesis searches on CUDA, never finished on a GPU:
#      source .devkit/setup.sh && timeout 550 python3 -m pytest -q -p no:cacheprovider \
#        tests/test_engine_interleavings.py tests/test_async_engine_leaving.py --durations=5
# Alternated A/Bs: notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the
# runs' median steps; one slow host episode must not decide a round).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
