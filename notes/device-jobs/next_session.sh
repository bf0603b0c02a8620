# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail or grep (a limit kill loses it: session
# 34's probe printed nothing after 300 s; write to $OUT and read the file after); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB; `notes/device-jobs/tree_slim.sh` moves it). A
# machine left idle for 30 s is given back: a call that needs the last one's state
# (llama.cpp's build in /tmp/lc) must follow at once. A refused start costs ~120 s of the
# budget (session 35); do not start one with under ~240 s left.
# .devkit is not in git. In a fresh checkout: `bash notes/device-jobs/devkit_fill.sh` (from
# ../shared and PyPI: setup.sh, wheels, peers, extra for the whole suite, pyspy).
#
# Written at the end of session 35. Main then: session 34's code, every module passed on the
# H200 (s35 A, B, F; s34's test_quant_kernels run), plus one change not yet run on a GPU:
# vexel_core sets MLX_ENABLE_TF32=0 unless the user set it, and tests/conftest.py no longer
# sets it (so the suite's float32 comparisons on the GPU now test the package's default).
#
# A: (~250 s, cold) `s36_a.sh` (its header: the carry and `tree_slim.sh out --model`): the
#    modules that compare float32 results, test_linear's new GPU test among them; they now
#    pass only if the package's MLX_ENABLE_TF32 default holds.
#    Then at once on the warm machine (`tree_slim.sh back`, then `out`): `s34_b.sh`, carry
#    [".devkit/setup.sh", ".devkit/extra"]: the whole suite but test_quant_kernels (session 35:
#    1,227 passed, none failed).
# B: the feed-forward kernel, if the budget allows. Session 35's ff_phases.py (notes/
#    gpu-kernels.md, session 35): by rows the down loop waits on its loads' pattern, tiled
#    (notes/patches/ff-tiled.patch) on its 917,504 int64 atomics: tiled without atomics 31.1 us
#    a block against main's 37.5-38.1. CTA pairs halve the atomics but also the multiplying
#    CTAs (45.4 us): set aside. `ff_phases.py --rounds 3` (s35_g.sh) now also times the
#    `acq_rel count` variant (the count as one acquire-release atomic; the AddNorm epilogue
#    counts the same way): cheap, ~40 s on a warm machine. What is untried: fewer atomics with all 224 CTAs multiplying
#    (a two-level sum through memory, wait-free), and the last CTA's ~3.3 us tail. Any
#    candidate: `ff_phases.py --rounds 3` with its kernel beside main's (`--rows-kernel`, as
#    s35_h.sh), before touching the engine's weights (every reader of a down matrix would have
#    to take a tiled layout: the multi-row float kernel and the dequantization staging 16
#    tiles a chunk, the one-row kernels refusing it, the prefill's slices aligned to 256 rows).
# Keep one llama.cpp run a session if the budget allows: s35_d.sh (build) then s31_c.sh at once
# on the warm machine (three engines; session 35: Vexel 426.4, mlx-lm 138.7, llama.cpp 350.5).
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
