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
# Written at the end of session 50. Main then: as session 48 left it (gemv_int8 takes one row
# of every format but Q2_K/Q3_K, a few rows by `INT8_ROWS`), plus two tests fixed for CUDA.
# One Q4_0 request 451.5 tok/s beside llama.cpp's 344.10 and mlx-lm's 122.4 (session 50, call
# 3); step interval 2.07 ms where the GPU paces it, 1.67 ms needed for the 600 tok/s goal, the
# only acceptance item not met. Session 50 ran A and B of session 48's list (s49_1.sh), an A/B
# against session 39's tree (no regression), the three engines, and the whole suite on the H200
# (its three real failures fixed and rerun). 1,776 of 1,800 s spent.
#
# A: the 600 tok/s goal. Each kernel of a layer is within 1-8 us of its bytes and every lever
#    left is latency inside a launch (closing notes s38, s39, s50). What could still move it,
#    largest first, each a multi-session piece of work to prototype on the CPU emulation first
#    (tests/kernel_emulation) and time in one GPU call:
#    - the q/k/v product and the paged decode in one launch: the 8 attention CTAs last in the
#      grid, each waiting on its KV head's 768 rows (a count a head, the taking scheme of
#      session 36), loading its old key and value rows while it waits (they do not depend on
#      the step). Estimated 3-5 us a layer of the 18 the two take now; session 37's
#      feed-forward + next q/k/v fusion estimated 4 and lost 0.5-1 in the engine, so time the
#      phase's parts (ff_phases.py's way) before building the whole.
#    - a persistent whole-layer kernel (session 22's four phases measured slower).
# B: gemv_rows.py's first-measurement effect (21.4 us for Q4_0 2 rows of 6144x4096 in one pass
#    against 11.7-11.8 in the others; Q6_K's 27.0 in session 46): not the first shape of its
#    process, so not only the clocks' ramp; a warm-up over every row count before each shape,
#    then the small shapes again.
# C: the shipped model's tests on the GPU (left out of every whole-suite run since session 34
#    for the carry's 64 MiB): carry .devkit/extra without the wheels on a machine that already
#    has them, or the wheels without extra for those two modules alone.
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
