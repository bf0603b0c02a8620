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
# Written at the end of session 48. Main then: gemv_int8 takes one row of every format but
# Q2_K/Q3_K, and a few rows by `INT8_ROWS` (format, weight size): Q4_0 2; the others 2 of a
# weight of at most 2^25 elements, 4 of a larger one. Two Q4_0 requests 592-615 tok/s, two Q8_0
# 498, four Q4_K_M 726-738 (session 47-48). Q4_0 one request 446.0 (session 39): the 600 tok/s
# goal is still the only acceptance item not met. Session 48 spent 1,583 of 1,800 s.
#
# A and B are written out as `s49_1.sh` (~500 s with a cold start; checked with bash -n and
# its old arm's importlib line on the CPU, never run).
# A: (~250 s) the whole test_quant_kernels.py on the GPU at -n 8 on main as it is (session 47's
#    552 passed ran before INT8_ROWS by weight size; session 48's routing subset passed 83).
#    Use `gpu_tests.sh` or a -k without "product" (it matches ~1,500 tests: session 48's 240 s
#    ran out at 73%).
# B: (~150 s) one Q4_0 request at the README's [k] settings (128-token prompt, 256 out, -n 1)
#    to place session 39's 446 beside today's main; then the legacy formats in the engine
#    (`--dtype q4_1`, `q5_0`, `q5_1`, added in session 48), 1 and 2 requests, against the float
#    kernel's one row (importlib: INT8_TYPES without them, INT8_ROWS emptied).
# C: the 600 tok/s goal: only a persistent whole-layer kernel with phase overlap looks able to
#    reach it (closing notes s39-s46). Prototype on CPU emulation first; one GPU call to time.
# D: gemv_rows.py's first-measurement effect (21.4 us for Q4_0 2 rows of 6144x4096 in one pass
#    against 11.7-11.8 in the others; Q6_K's 27.0 in session 46): a warm-up over every row
#    count before the first shape, then rerun the small shapes.
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
