# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). A machine left idle for 30 s is given back: a call
# that needs the last one's state (llama.cpp's build in /tmp/lc) must follow at once.
#
# Written at the end of session 24. Main: the whole decode step compiled (session 23), the
# rope inside the paged decode (session 24: median step 2.772 against 3.318 ms) and the
# kernel reading the fused q/k/v product's heads in place (2.591 against 2.756 ms; 396 arrays
# a step down to 236), both alternated in one process. The host's submit costs ~1.1 us an
# array and ~7-11 us a kernel (162 a step); the GPU ~2.3 ms a token.
#
# A: (~450 s, s25_a.sh) the GPU tests session 24 cut at their limits (none failed): the
#    writing kernel, packed on every other case; the compiled decode; the KV pool. If any
#    fails, the packed path is the suspect: `ab.py --sliced-heads` is the way back.
# B: (~420 s, s25_b.sh on branch next/merge-in-kernel: git checkout it first, or `git apply
#    notes/patches/merge-in-kernel.patch` on main if the branch is gone) the split
#    merged inside the kernel lets one request split short contexts on CUDA (spans of 128
#    tokens from 256): the kernel alone by launch shape, then the step alternated against
#    `ab.py --long-spans`. If the step is shorter: C.
# C: (~550 s, s25_c.sh, same branch) its GPU tests (three spans, the compiled decode, the
#    engine); merge the branch if they pass.
# D: (~400 s, s23_e.sh as it is, on main after the merges; carry .devkit/peers, notes/bench
#    moved out of the tree) three engines on one Q4_0 request: Vexel, mlx-lm, llama.cpp
#    (tg128). The last figures (session 23, slow host): 283.3, 92.7, 337.3 tok/s. Update the
#    README's row [f] from it.
# E: (if time is left, ~300 s) start-up on CUDA: session 24's native profile found ~27 s of
#    NVRTC compiles in a fresh process (MLX does not disk-cache custom kernels), paid in the
#    warm-up before a server answers /health. Time `vexel serve` to a healthy server, and
#    find which launches compile (py-spy --native: the Python frames above
#    nvrtcCompileProgram).
# A to D add up to more than the session's 1,800 s: after B, C if the step was shorter,
# else D. Set aside: the decode segment (next/decode-segment: GPU-slower).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
