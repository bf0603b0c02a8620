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
# Written at the end of session 40. Main then: `gemm_packed` with the weights as the tensor
# cores' A operand (16 weight rows a tile, x's rows B's 8 columns) for 2-16 activation rows,
# with its gated mode (act(g) * u of the fused gate/up weight in the launch): 8 requests of
# 512 + 128 at 1,602 tok/s (`vexel bench`, call C; ab.py in call B: 1,444 against session 39's
# 1,216 and --no-gemm's 741). One request unchanged (446.0 beside llama.cpp's 348.87, s39).
#
# A: (~550 s) `s41_a.sh`: main against branch next/gemm-scaled (q - 8 exact in x's type, the
#    block's scale applied after the mma: ~260 instructions a warp's round against ~400, SASS
#    counted here; the kernel is issue-bound: 42 us at 2 rows and at 8 of 28672x4096), GPU
#    tests of both (main's gated mode at 2 rows not yet run on a GPU), kernel tables, engine at
#    8 and 16 requests. Merge the branch if the engine says faster.
# B: (~750 s) `s41_b.sh`: Nsight Compute on gemm_packed (where do 42 us go, when the bytes'
#    pace is ~18 us and 2 rows cost as much as 8?) beside llama.cpp's build at nice 19; then the
#    three engines at 8 requests: llama-batched-bench -npl 1,8 and `vexel bench --compare
#    mlx-lm` (400 s: mlx-lm's batch did not finish in 150 s in session 40). The README's
#    8-request row has no peer until this runs.
# C: `s41_c.sh` (next/gemm-tilings: the tiling by shape, against main in the engine; choose the
#    tilings again from A's table first if the scaled kernel merged). Then gemm_packed toward
#    its bytes, from B's profile. Candidates beyond A's: the short life of each CTA (8 rounds a warp at 4,096 columns, 4.5 waves at 28672 rows: the load pipeline
#    drains and refills per CTA; a persistent grid, as gemv_packed's 1,056 CTAs, keeps it full);
#    x through L2 (each 16-row CTA reads all of x: 1.8x the weight's bytes at 8 rows).
#    Q4_K / Q6_K / Q8_0 at 2-16 rows still take the float kernel.
# D: the one-request step (2.08 ms where the GPU paces it; 600 tok/s needs 1.67): the levers
#    left are in notes/closing-note-s38.md ("Why 600 tok/s is not reached").
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
