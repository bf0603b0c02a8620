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
# Written at the end of session 39. Main then: session 38's paged decode and session 36's
# feed-forward kernel (one request: 446.0 tok/s beside llama.cpp's 348.87 and mlx-lm's 133.7 on
# one warm machine, s39 call C), and new: `gemm_packed`, 3-16 activation rows of packed Q4_0 on
# the tensor cores (8 requests of 512 + 128: 1,180 against 740 tok/s, s39 call F, in the 2 x 4
# tiling; merged with the 1 x 4 default, which tied or beat it at every kernel point).
#
# A: (~450 s) `s40_a.sh` on branch next/gemm-two-acc (notes/patches/gemm-two-acc-gated.patch:
#    two accumulators a tile, and the gated mode for 3-16 rows; CPU-tested, never on a GPU):
#    its GPU tests, gemm_packed.py at 3-16 rows, the engine at 4, 8 and 16 requests against
#    --no-gemm; then gemm_packed.py on main at once on the warm machine, for the kernels
#    before it. Merge what the engine says is faster with the same tokens. This also times
#    session 39's merged 1 x 4 default in the engine (call F ran 2 x 4).
# B: gemm_packed toward its bytes (8 rows of 28672x4096: 68 us, 1 TB/s; the bytes' pace ~18 us):
#    - each warp's eight mma of a round are one dependent chain on one accumulator (prepared:
#      two, call A);
#    - x is re-read by every CTA through L2, 3.56 M / R times the weight's bytes (R = 8 weight
#      rows a CTA): more rows a CTA, x staged once in shared memory;
#    - the gated act(g) * u (prepared, call A) and the AddNorm epilogue, which one row has;
#    - Q4_K, Q6_K and Q8_0 at 2-16 rows still take the float kernel (formats.h's decoding
#      into the same B operands);
#    - 17-64 rows (v1 lost to dequantize + MLX's matmul there: 4096x4096 at 64 rows 21.3 us).
# C: three engines at 8 requests (llama.cpp's llama-batched-bench -npl 8, mlx-lm's batch),
#    after s35_d.sh's build on the same warm machine; and the one-request row again.
# D: the one-request step (2.08 ms where the GPU paces it; 600 tok/s needs 1.67): the levers
#    left are in notes/closing-note-s38.md ("Why 600 tok/s is not reached"); session 39
#    measured the paged decode's last prologue patches level (its prologue is done as a
#    lever).
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
