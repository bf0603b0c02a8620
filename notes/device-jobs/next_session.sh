# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail or grep (a limit kill loses it: session
# 34's probe printed nothing after 300 s; write to $OUT and read the file after); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench and the shipped model
# moved out of the tree: the carry is limited to 64 MiB; `notes/device-jobs/tree_slim.sh out
# --model`). A machine left idle for 30 s is given back: a call that needs the last one's state
# (llama.cpp's build in /tmp/lc, /tmp/vx's random models) must follow at once. A refused start
# costs ~105 s of the budget, and a call answered "none asked for" 15 s: wait the minutes the
# answer names, not less. Do not start one with under ~240 s left.
# .devkit is not in git. In a fresh checkout: `bash notes/device-jobs/devkit_fill.sh` (from
# ../shared and PyPI: setup.sh, wheels, peers, extra for the whole suite, pyspy).
#
# Written at the end of session 44. Main then: gemm_blocks stages a chunk as one list of
# 16-byte words (67-94 registers a thread, not 127-167), 8 k-warps and one stage, from 3 rows
# for every format. Session 44's figures (README [q]): Q4_K 16 requests 2,043.9 tok/s against
# llama.cpp's S_TG 2,090.20, 8 requests 1,316.1 against 963.22, one request 424.7 against
# 294.44; Q8_0 8 requests 1,229.7 against 1,045.12, one request 291.2 against 253.98. Q4_0 one
# request 446.0 (session 39): the 600 tok/s goal is the only acceptance item not met.
#
# A: (~250 s) Q5_K on gemv_int8 (branch next/q5k-int8, written by a helper in session 44 from
#    session 15's lost branch; emulated only). Its GPU tests (`test_quant_kernels.py -m gpu -k
#    Q5_K -n 6`), then `benchmarks/kernels.py` for Q5_K at one row against the float kernel
#    (session 39: 43.5 us at 14336x4096, 25% of the copy bandwidth; Q4_K's gemv_int8 21.5), then
#    `vexel bench --random llama3-8b --dtype q5_k -n 1` on the branch and on main (one PTX cache
#    an arm, or two checkouts). Q5_K is Q5_K_M files' main format. Merge if it wins.
# B: (~150 s) gemm_blocks at 1 and 2 rows: `benchmarks/gemm_blocks.py --rows 1,2 --formats
#    Q4_K,Q6_K,Q8_0` and the float-kernel formats (Q5_K, Q3_K, Q2_K, Q4_1, Q5_0) at 1-3 rows.
#    Session 44 moved BLOCKS_ROWS' start to 3 from the 3-row table; 2 rows (float kernel
#    there, session 41: 0.54-0.88 of the old gemm_blocks' time) was not measured with the new
#    staging. For the formats without gemv_int8 one row of gemm_blocks may beat the float
#    kernel (gemm_blocks' time hardly moves with the rows).
# C: (~300 s) one Q4_0 request, toward 600 tok/s. Session 44's lesson: gemm_blocks was paced
#    by registers and idle lanes in a staging loop, not by bytes. The one-launch feed-forward
#    kernel (34-35 us a layer against ~25 at the copy bandwidth) and gemv_int8's q/k/v and
#    output products (7 and 9 us against ~3.5 and ~2.5) are the candidates: their registers
#    per local nvcc (`pytest -s tests/test_quant_kernels.py -k compile_for_sm90`), then Nsight
#    Compute on one decode step's launches (stall reasons, achieved occupancy).
# E: (~400 s, peers carried) `s45_mix.sh`: a random Q4_K_M Llama-3-8B (`--dtype q4_k_m`, mixed
#    as llama-quantize mixes it: Q6_K output, attn_v and ffn_down in 16 of 32 layers), the
#    format most users' files hold, Vexel 16 / 8 / 1 requests beside llama.cpp on the same
#    file. Those 16 layers' q, k and v take three products (WeightTensor.stack needs one
#    format): if that shows, stack q and k and keep v apart (Attention's fused path hands the
#    attention kernel the q/k heads unrotated, `Unrotated(..., heads)`: v would need its place).
# F: the float kernel (kernels.cuh's gemv: 2 rows of every format, one row of Q2_K, Q3_K,
#    Q4_1, Q5_0, Q5_1 and Q5_K) stages its rows with the loop gemm_blocks dropped in session 44
#    (`for r < ROWS: stage_bytes(...)`, lanes idle past each row's words, the row pointers kept
#    live): one list of words as gemm_blocks' `issue` now does, timed with benchmarks/kernels.py.
# D: the pacing's GPU test once more with the whole GPU suite (`gpu_tests.sh`), and
#    `test_quant_kernels.py tests/test_gemm_blocks.py -m gpu -n 6` (session 44: 402 passed,
#    118 skipped, 168 s).
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change), or for
# whole commands notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ...; for a kernel
# header's two versions in one call, copy the old header aside and give each arm its own
# MLX_PTX_CACHE_DIR (s44_c.sh): MLX keys its PTX cache by kernel name, not by the headers.
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
