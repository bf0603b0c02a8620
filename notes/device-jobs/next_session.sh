# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). A machine left idle for 30 s is given back: a call
# that needs the last one's state (llama.cpp's build in /tmp/lc) must follow at once.
#
# Written at the end of session 21. Main: the AddNorm epilogue merged (the output and down
# products add the residual and write the next norm); its session-20 slowness was a 4-byte eps
# in MLX's small managed pool, read by every CTA (gpu.float_constant now makes 16 bytes).
# Alternated rounds: median step 2.62 ms against 2.81 for the separate launches (one machine).
# Host (build ~1.16 + submit ~1.32 ms) and GPU (~2.4 ms of kernels) are both at the step.
#
# 0: (~450 s, s22_a.sh) the decode segment (a compiled segment's four products in one launch,
#    one CTA a part taken by ticket) with the norms formed by their readers. On main:
#      git apply notes/patches/decode-segment.patch notes/patches/segment-consumer-norm.patch
#    (or check out branch next/segment-consumer-norm, if it survived, then copy s22_a.sh from
#    main). Its GPU tests (the looping first version passed bit for bit in session 21; this
#    one and the engine test have not run on a GPU), arms_rounds 2 "vexel" "python3
#    benchmarks/ab.py --separate-segment", and its timeline. Merge if its median step is
#    shorter in both rounds. If not: decode-segment.patch alone (the last CTA writes the norms)
#    the same way, to tell the two changes apart. If the GPU became the pace (wait > 0.3 ms):
#    the timeline's decode_segment against the four kernels' sum (~58 us a layer: 9.8 + 20.2
#    + 18.6 + 9.8), and Nsight Compute on one launch.
#    Then, CPU work if the segment is merged: the rope as its fifth phase (a few CTAs rotate
#    q and k in place once the q/k/v parts have counted: MLX's rope_single computes
#    theta = (scale * pos) * inv_freq, inv_freq = exp2(-(i / (dims / 2)) * log2(base)) or
#    1 / freqs[i], accurate cos and sin, in float32), one MLX launch and ~3 views a layer
#    fewer, its step's page fault then paid by the segment.
# 1: (~500 s, two calls back to back) the three engines on main: s14_a.sh 1 builds llama.cpp
#    beside GPU tests; s14_a.sh 2 runs one Q4_0 request in Vexel, mlx-lm and llama.cpp.
# 2: the paged decode's split with the merge inside the kernel (the last CTA of a KV head to
#    finish merges; the AddNorm's count-and-reset, which now costs ~3 us of tail).
# 3: (~550 s alone) the engine's Hypothesis searches on CUDA, never finished on a GPU:
#      source .devkit/setup.sh && timeout 550 python3 -m pytest -q -p no:cacheprovider \
#        tests/test_engine_interleavings.py tests/test_async_engine_leaving.py --durations=5
# Alternated A/Bs: notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the
# runs' median steps; one slow host episode must not decide a round).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
