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
# An arm run with PYTHONPATH=<tree> must keep the devkit's site: PYTHONPATH=<tree>:$PYTHONPATH
# (session 45's first s45_a.sh run lost its engine arms to it).
#
# Written at the end of session 45. Main then: Q5_K's one row on gemv_int8 (21.4 us at
# 14336x4096 against the float kernel's 40.7; one Q5_K_M request 345.4 against 315.4 tok/s);
# gemm_blocks from two rows of Q2_K, Q4_K, Q5_K and Q6_K (two Q4_K requests 397.0 / 394.3
# against 382.4); q and k stacked where v's format differs (untimed). Session 45's Q4_K_M
# figures beside llama.cpp (README [r]): 16 requests 1,989.6 against S_TG 2,002.87, 8
# 1,234.4 against 959.51, one 359.4 against tg128 274.36. Q4_0 one request 446.0 (session 39):
# the 600 tok/s goal is the only acceptance item not met.
#
# A: (~300 s) `s46_a.sh`: q and k stacked where v's format differs (3f11408), Q4_K_M one and
#    two requests, main against the tree before it, alternated. Keep it if it is not slower.
# B: (~250 s) Q5_K's gemv_int8 tilings under Nsight Compute (`FORMATS=Q5_K bash
#    notes/device-jobs/s8_kernel_sweep.sh 4096 100`, then `... 14336 100`;
#    `benchmarks/ncu_summary.py` reads the CSV with its map). Its defaults are Q4_K's at 4,096
#    columns and 396 CTAs of 8/2/4 at 14,336, never swept; kernels.py (host-paced) gave 21.4 us
#    and 23.0 us, 50% and 46% of the copy bandwidth, where Q4_K's Nsight figures are 13.1-13.3
#    and 15.5.
# C: (~300 s) the whole GPU suite on main (`gpu_tests.sh`, each file under its own limit; give
#    test_quant_kernels.py 300 s at -n 6: it needed ~220 s in session 45 and was cut at 200),
#    the pacing test among them. Session 45 changed routing (two rows of four K formats to
#    gemm_blocks, one row of Q5_K to gemv_int8) and the attention's projections (qk + v).
# D: (~400 s, peers carried) one Q4_0 request, all three engines, on today's main
#    (`s35_d.sh`, then `s31_c.sh` at once on the same warm machine): README [k] is session
#    39's, and every change since touched batches or the K formats. 600 tok/s stays out of
#    reach of the levers tried (notes/gpu-kernels.md, "What is left" and sessions 29-39): each
#    of a layer's small launches is a chain of latencies, and fusing launches (sessions 30
#    and 37) bought nothing on the GPU.
# E: the float kernel (kernels.cuh's gemv) is now the path of one row of Q2_K, Q3_K, Q4_1,
#    Q5_0, Q5_1 and two rows of Q8_0, Q3_K, Q4_1, Q5_0, Q5_1: `gemv_int8` for Q4_1/Q5_0/Q5_1
#    (Int8Format; llama.cpp's mmvq covers them) would take their one row from ~50% of the
#    copy bandwidth (gemv_float.py: Q5_0 14336-row shapes ~1.5 TB/s) toward Q4_0's ~70%.
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change), or for
# whole commands notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ...; for a kernel
# header's two versions in one call, copy the old header aside and give each arm its own
# MLX_PTX_CACHE_DIR (s44_c.sh, s45_f.sh): MLX keys its PTX cache by kernel name, not by the
# headers.
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
