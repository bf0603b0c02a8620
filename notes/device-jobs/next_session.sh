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
# Written at the end of session 51. Main then: session 50's engine (one Q4_0 request 451.5
# tok/s beside llama.cpp's 344.10 and mlx-lm's 122.4, step interval 2.07 ms where the GPU paces
# it; 1.67 ms needed for the 600 tok/s goal, the only acceptance item not met), the paged
# decode's CTA index and count named by macros a probe may define (the same cubin), and three
# probes of weights staged in shared memory (benchmarks/staged_*.py; gpu-kernels.md, session
# 51). Session 51 spent 1,548 of 1,800 s in twelve calls; the last was refused for too little
# time left.
#
# A: s51_l.sh first (~60 s): the staged probes as committed (their row dot moved into
#    staged_common.cuh after the runs, and staged_attention.cu tells the paged decode its CTA
#    count through VXA_CTAS where calls G-K passed a parameter; compiled with nvcc 13 here, not
#    run on the GPU since). At 384 tokens (16 warps) local nvcc gives the probe 138-140
#    registers a thread: over the 128 a 512-thread CTA may have, so it may fail to launch there
#    (call G's version had 118).
# B: the 600 tok/s goal. Session 51 closed the last fusion idea in its simple form: staging a
#    phase's weights while the paged decode runs lengthens the attention's memory round trips
#    by 0.5-1.4 us (paced or not), which cancels the 3.5 us the product gains. What remains,
#    each a probe first (staged_attention.py takes new arms in minutes):
#    - the staged copies with an L2 evict-first policy, in case the slowdown is the attention's
#      prefetched key/value rows pushed out of L2 rather than the traffic itself: written and
#      compiled, not run (`staged_attention.py --contexts 128,256 --arms 0,1,8`, ~40 s); and
#      fewer CTAs staging (the 124 CTAs' copies in flight against the 8 attention CTAs' loads);
#    - staging beside phases whose latency is not memory round trips: the q/k/v rows during the
#      feed-forward launch's grid-wide count and norm tail (staged_weights.py --arms stream put
#      it at -1.1 to -3.1 us with a DRAM-bound stand-in; the engine's path is session 37's
#      ff-next-qkv.patch, which needs a rebase and the rows staged instead of loaded after the
#      wait);
#    - a shorter paged decode at one request (7.6-10 us in 8 CTAs: a chain of round trips;
#      sessions 28-39 took its prologue from ~12 trips to ~2).
#    Each is worth at most a few us a layer; 600 tok/s needs ~12.
# C: gemv_rows.py's first-measurement effect (21.4 us for Q4_0 2 rows of 6144x4096 in one pass
#    against 11.7-11.8 in the others): a warm-up over every row count before each shape.
# (Session 50's C, the shipped model's tests on the GPU, ran in session 51: F1 = any call with
# the wheels on a fresh machine, then at once F2 = s51_f.sh carrying [".devkit/setup.sh",
# ".devkit/extra"] with only notes/bench out of the tree: 3 + 15 passed.)
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
