# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). A machine left idle for 30 s is given back: a call
# that needs the last one's state (llama.cpp's build in /tmp/lc) must follow at once.
#
# Written at the end of session 23. Main: the whole decode step compiled (merged in session
# 23: median step 2.88 against 3.93 ms for the 33 segments, alternated in one process).
# Three engines on a slow host: Vexel 283.3, mlx-lm 92.7, llama.cpp 337.3 tok/s. The host's
# time is now MLX's C++ (~0.6 ms replaying the graph, 1.5-2.3 ms submitting ~200 kernels);
# the GPU's ~2.45 ms a token. Every kernel removed at no GPU cost shortens the step.
#
# A: (~450 s, s24_a.sh) the rope inside the paged decode (branch next/rope-in-attention,
#    CPU-tested only):   git checkout next/rope-in-attention   (it holds s24_a.sh)
#    alternate.py --separate-rope first (8 rounds), then the GPU tests (the writing kernel
#    with rotation, the compiled decode, the engine). Merge if the tests pass and the step is
#    shorter at the median of the rounds' differences.
# B: the decode segment (branch next/decode-segment) was built for the 33 segments: it must
#    move into the whole step's trace (DecoderLM._forward, block pairs) before it can be
#    measured again; its launch (78.5 us) was slower than its four launches (54.6) in
#    session 22, and the GPU now matters as much as the host. s23_a.sh/s23_b.sh on that
#    branch still measure the kernel alone (segment.py --variants; Nsight Compute).
# C: (~300 s, s24_b.sh) the step's operations by primitive (benchmarks/step_graph.py: how
#    much of the 0.6 ms replay is glue: reshapes, slices, casts), then py-spy with native
#    frames at 100 Hz to see what MLX's async_eval spends ~10 us a kernel on (call G's
#    native run fell 48 s behind at 500 Hz), summed by
#    benchmarks/spy_summary.py --under async_eval. notes/mlx-cuda-host-cost.md (MLX's source,
#    read) says what to expect: the graph rebuilt node by node each step, the source hash,
#    per-input bookkeeping.
# D: (~400 s, s24_c.sh; prepare .ab first, as its header says, and delete .ab after) the
#    split paged decode merging its spans inside the kernel on CUDA (branch
#    next/merge-in-kernel, stacked on next/rope-in-attention; CPU-tested only): no merge
#    launch in each layer of a decode step whose context is over 512 tokens. Its GPU tests
#    (three spans, every warp count, the counts back at zero), then a 4,000-token context
#    against the branch below it. Merge after the rope branch if the tests pass and the step
#    is shorter.
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
