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
# Written at the end of session 46. Main then: gemv_int8 takes 2-4 activation rows (XROWS;
# INT8_ROWS: packed Q4_0 2, Q8_0/Q4_K/Q5_K/Q6_K 4): two Q4_K_M requests 537-563 tok/s against
# 366. Q4_0 one request 446.0 (session 39): the 600 tok/s goal is the only acceptance item not
# met. Only 294 s of session 46's device time were left.
#
# A: (~250 s) the whole test_quant_kernels.py on the GPU (300 s at -n 6): session 46 ran only
#    `-k several_rows` and `-k product_equals` after the XROWS change.
# B: (~200 s) the engine on the final routing, old routing set with importlib (never
#    `import vexel_core.quant.kernels.library as l`: that binds the package's `library`
#    function): two and four requests of Q4_0, Q4_K_M, Q8_0 (`s46_2.sh`'s arm, fixed), and one
#    request to check nothing moved. Rerun Q6_K's 2 rows of 6144x4096 (27.0 us in
#    `gemv_rows.py`, slower than 3 rows' 16.3). Time 4096x4096 too: the 6144-row product lost
#    from 3-4 rows for every format while the large ones won, so INT8_ROWS by output rows as
#    well as format may take another ~0.1 ms a step at 3-4 requests.
# C: (~300 s) branch next/int8-legacy (`git checkout -b next/int8-legacy 0f9a828 && git apply
#    notes/patches/int8-legacy.patch`, rebased on XROWS already): `s46_4.sh` from a checkout
#    of it (its GPU tests, then one row against the float kernel), then INT8_ROWS for the
#    three formats from `gemv_rows.py --formats Q4_1,Q5_0,Q5_1`. Merge if it wins.
# D: XROWS for Q4_0 at 3-4 rows lost to gemm_packed: the WHOLE formats re-read a block's words
#    a row. notes/patches/whole-once.patch (against main at session 46's end; emulated tests
#    198 passed) reads them once for every row (Int8Format<2>/<1002>::quants, then q4_0_dot
#    a row). Time it with gemv_rows.py --formats Q4_0 against main's header (each arm its
#    own MLX_PTX_CACHE_DIR), one row included: it is the one-request path too.
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
