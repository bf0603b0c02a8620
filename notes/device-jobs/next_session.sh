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
# Written at the end of session 52. Main then: session 50's engine (one Q4_0 request 453.1
# tok/s beside llama.cpp's 347.74 and mlx-lm's 112.6 in session 52's call E; step interval
# 2.08 ms where the GPU paces it). Issue 8's 600 tok/s goal (a 1.67 ms step) was marked
# blocked in session 52: every lever measured, summed at its best, leaves ~1.8-1.85 ms
# (gpu-kernels.md, session 52). If the goal is taken up again, in this order:
# A: the gate/up rows staged beside the *real* output product + AddNorm, through registers with
#    the L2 evict-first hint (staged_attention.cu's EVICT 1 form; cp.async's cache-hint form is
#    an illegal instruction on the H200): staged_prefix.py measured 3.9 us with a stand-in that
#    touched no memory; the attention's case kept 1.5 of its stand-in's 3.5. If it keeps >= 2.5
#    us, the layer as one launch (output + AddNorm + feed-forward, then the next q/k/v staged
#    during the feed-forward's tail) is worth building; the sum decides, not one piece.
# B: the fused attention + output launch into the engine (staged_attention.cu's arm 8 form:
#    -1.4-1.5 us a layer at 128 tokens, -0.8-0.9 at 256, one request), only as part of A's
#    one-launch layer: alone it is ~2% of a step for a third attention path on CUDA.
# C: gemv_rows.py's first-measurement effect (21.4 us for Q4_0 2 rows of 6144x4096 in one pass
#    against 11.7-11.8 in the others): a warm-up over every row count before each shape.
# New facts (session 52): a custom kernel can be given a thread block cluster and launch bounds
# through its header (benchmarks/kernel_attributes.py); programmatic dependent launch cannot.
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
