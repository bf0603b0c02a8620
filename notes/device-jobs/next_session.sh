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
# Written at the end of session 42 (whose device time went mostly to five refused starts and
# one ~450 s start). Main then: session 41's kernels, gemm_blocks from 4 rows (8 Q4_K requests
# 973 tok/s against the float kernel's 606), and the engine's memory bound (16 Q4_0 requests
# peak at 36.1 GiB instead of 67.2, same speed). One request unchanged (446.0 beside
# llama.cpp's 348.87, session 39).
#
# A: (~350 s) `s43_a.sh` on branch next/paced-prefill (its header says how to set up
#    mainsrc/): steps too large for the working set evaluated a layer at a time as they are
#    built. GPU tests, then 16 requests alternated with main twice: peak memory (expected
#    near the 24.5 GiB limit + a layer), tok/s and TTFT. Merge if the peak falls and the speed
#    holds.
# B: (~500 s) `s42_b.sh`, not run in session 42: llama.cpp on a random Q4_K file beside
#    Vexel (one request through gemv_int8's Q4_K path, 8 requests through gemm_blocks) while
#    llama.cpp builds at nice 19; then llama-bench tg128 and llama-batched-bench -npl 1,8,16.
# C: gemm_blocks' tiling past 4096 columns: session 42's table had 4 k-warps x 1 stage 2-5 us
#    faster than the default 8 x 1 at 4096x14336 for Q4_K (Q6_K mostly, Q8_0 slower), the
#    opposite of session 41's at some points. An engine A/B on a random Q4_K model decides;
#    also `gemm_blocks.py --rows 4` (BLOCKS_ROWS starts at 4 on an estimate) and the rest of
#    `test_quant_kernels.py`'s GPU tests (s42_a.sh reached 40 of them, s42_d.sh the float
#    kernel's 60; give such a run 400 s).
# D: gemm_blocks toward its bytes (840-1,560 GB/s; gemm_packed reaches 1,565 on Q4_0 at 42 us):
#    Nsight Compute on Q4_K 28672x4096 at 8 rows first (shared-memory bank conflicts of the
#    2-byte piece reads? cp.async waits?), then a gated mode (act(g) * u in the launch).
# E: gemm_packed toward its bytes and the one-request step: session 41's list (B of the last
#    plan: ncu on gemm_packed; a persistent grid; x through L2) and notes/closing-note-s38.md.
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
