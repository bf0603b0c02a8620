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
# Written at the end of session 43. Main then: session 42's kernels and memory bound, prompt
# steps paced a layer at a time (16 Q4_0 requests peak 23.83 GiB, TTFT 183 ms, 2,512-2,554
# tok/s), gemm_blocks' Metal twin (emulated only). One request unchanged (446.0 beside
# llama.cpp's 348.87, session 39); Q4_K: one request 355.0 against llama.cpp's 290.85, 8
# requests 990.4 against 984.24, **16 requests 1,645.2 against llama.cpp's 2,065.40**.
#
# A: (~350 s) gemm_blocks at 16 rows, where llama.cpp's K-quant batch now leads. Its time
#    hardly moves with the rows (Q4_K 28672x4096: 78-79 us from 2 to 8 rows, 95 at 16; 66 MB,
#    ~18 us at the copy bandwidth), so it is paced by its decoding or its latency, not its
#    bytes. First Nsight Compute on Q4_K 28672x4096 at 8 and 16 rows (occupancy: 24 KiB of
#    static shared memory a 4-warp CTA; registers; the stall reasons; shared-memory bank
#    conflicts of the 2-byte piece reads), then the change it points to, and an engine A/B of
#    16 Q4_K requests (`ab.py`) beside llama-batched-bench -npl 16. A first candidate is
#    ready: branch next/blocks-issue stages a chunk's 16 rows as one list of 16-byte words in
#    a loop left rolled. Per local nvcc (sm_90a) every format then needs 67-86 registers a
#    thread, against main's 127-167: 6-7 CTAs of 4 warps an SM instead of 3-4. Most of that
#    comes from the rolled loop alone: main's loop over the rows with `#pragma unroll 1`
#    needs 72-100, a one-line alternative to time beside it. Its emulated tests pass. s43_e.sh
#    times it beside main at 8 and 16 rows; s44_a.sh (prepared) profiles both with Nsight
#    Compute at 8 and 16 rows.
# B: (~100 s) s43_e.sh if it did not run: the pacing's GPU test (32 layers, paced within the
#    limit + three layers, built whole past it) three times, with the peaks it asserts on;
#    gemm_blocks at 5 and 6 rows for Q8_0 and Q6_K. At 4 rows gemm_blocks lost 13.9 us a
#    layer for Q8_0, was level for Q6_K and won 12.6 for Q4_K (gpu-kernels.md, session 43):
#    BLOCKS_ROWS by format, and the two shapes of 4096 rows (where it always lost at 4 rows)
#    kept on the float kernel, are the candidates.
# C: the rest of test_quant_kernels.py's GPU tests: session 43's call D ran 201 (passed) of
#    them in 400 s; give the remainder its own call (`-k` on the parts not reached: the
#    tests after the gated mode's).
# D: one request (the only acceptance goal not met: 446 tok/s of 600): the levers in
#    notes/closing-note-s38.md; a layer is ~61 us against ~33 us of bytes, every gap a chain of
#    latencies inside a launch.
# E: one request of Q4_K, the format most users' files hold (Q4_K_M): 355.0 tok/s against
#    Q4_0's 446, and llama.cpp's 290.85 (session 43; measured while llama.cpp compiled at nice
#    19, so perhaps paced by a busy host: measure it alone first). The one-launch
#    feed-forward kernel and gemv_packed serve packed Q4_0 only; a timeline of the Q4_K step
#    (`gpu_timeline.py`) would say which of its launches to take on first.
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
