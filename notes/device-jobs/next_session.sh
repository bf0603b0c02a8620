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
# Written at the end of session 41. Main then: gemm_packed with the tiling by shape (8 requests
# of 512 + 128 Q4_0 at 1,608-1,717 tok/s, 16 at 2,389; llama.cpp 879 and 1,230 in the same
# session, mlx-lm 22.3), and gemm_blocks (3-16 rows of every other format on the tensor cores:
# 8 Q8_0 requests 869 tok/s against the float kernel's 716). One request unchanged (446.0
# beside llama.cpp's 348.87, session 39).
#
# A: (~450 s) `s42_a.sh`: GPU tests of what merged after session 41's device time ran out
#    (gemm_blocks' 8 k-warp default past 4096 columns; the float kernel through staged_loop),
#    gemm_blocks' table at 3 rows (BLOCKS_ROWS = 3-16 rests on an estimate at 3), and the
#    engine on a random Q4_K Llama-3-8B (`--dtype q4_k`, new) with and without gemm_blocks.
# B: (~500 s) `s42_b.sh`: llama.cpp on the same Q4_K file beside Vexel (a Q4_K_M-like model
#    is what users run): one request (gemv_int8's Q4_K path) and 8 requests while llama.cpp
#    builds at nice 19 (~320 s), then llama-bench tg128 and llama-batched-bench -npl 1,8,16.
# C: peak memory. 8 Q4_0 requests of 512 + 128 peak at 46.7 GiB and 16 at 66.7 (4.5 GB of
#    weights, a 16 GiB KV pool); mlx-lm 38.2. The extra ~26 and ~46 GiB grow with the step's
#    prompt tokens about as every layer's activations (and attention scores) alive at once
#    would. What MLX's source says (ml-explore/mlx at 846d176, read in session 41):
#    backend/cuda/eval.cpp keeps every input of a launched op alive until the GPU has run
#    it ("add_temporary"), committed in graphs of ~20 nodes (MLX_MAX_OPS_PER_BUFFER); and
#    transforms.cpp's eval loop waits for a commit to finish only past 10 tasks in flight or
#    past the memory limit, which the CUDA allocator sets at 95% of the GPU's memory (134 GB
#    here; Metal's is the recommended working set). So nothing bounds the peak below ~134 GB
#    on the H200 but the task count. Probe (~250 s): `s42_c.sh`, `vexel bench -n 16` under
#    mx.set_memory_limit at MLX's default, 32 and 24 GiB: peak memory and TTFT; if it holds,
#    the engine sets a limit from its own budget (weights + KV pool + a step's working set).
#    On Apple Silicon this peak is the user's RAM.
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
