# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). A machine left idle for 30 s is given back: a call
# that needs the last one's state (llama.cpp's build in /tmp/lc) must follow at once.
# .devkit is not in git. In a fresh checkout: `bash notes/device-jobs/devkit_fill.sh` (from
# ../shared and PyPI: setup.sh, wheels, peers, extra for the whole suite, pyspy).
#
# Written at the end of session 33 (device budget then: 182 s, all of 1,800 spent). Main now:
# session 32's code, the tests' tolerances by the activations' dtype (the suite's first run on
# the H200 found the CPU's float32 bounds in tests not marked gpu), warm-up counters reset at
# their sources, `vexel chat` warming up. Measured and not merged: next/argmax (14.7 us a step
# in the engine against MLX's ~16: 1.4 us) and next/ff-pass8 (37.8 us a block at PASS 4 and 8:
# no difference). Prepared: benchmarks/down_layout.py and the branch next/ff-pairs.
#
# A: (~300 s, cold) `s34_a.sh` on main, carry as its header says (the wheels, setup.sh and
#    the two xdist wheels of .devkit/extra):
#    down_layout.py (the down phase's loads four ways: the engine's, CTA pairs reading 64
#    bytes a row each half the rows, one CTA a pair reading 64 bytes of every row, rows
#    regrouped by CTA), then test_quant_kernels.py spread over eight workers (never finished
#    on the GPU as a whole: s33_b2 left 550 of its cases).
# B: (~560 s) `s34_b.sh` at once after A (the warm machine keeps the installed wheels), carry
#    [".devkit/setup.sh", ".devkit/extra"], notes/bench moved out of the tree: the rest of the
#    suite on the GPU, with the failures' tracebacks; the script says what .devkit/extra
#    holds. Every failure is either a GPU-only bug or a test's CPU assumption: say which.
# C: (~300 s) if down_layout.py shows "a pair's one" reading well under the engine's way:
#    `git checkout next/ff-pairs && source .devkit/setup.sh && bash notes/device-jobs/s34_c.sh`
#    (or `git apply notes/patches/ff-pairs.patch` on main): the feed-forward kernel whose CTA
#    pairs' second multiplies the pair's 128 down columns (prepared in session 33: emulated,
#    89 registers). Its GPU tests, feed_forward.py (one launch against the two it replaced:
#    37.8 us both on main in session 33), and the one-request figure beside s34_a's of main.
#    Merge if its block is shorter and its tests pass. If instead "tiled by CTA" is the fast
#    way, the repack needs the down matrices stored by CTA at load, and the kernels that read
#    them otherwise (gemv_int8 for batches, the dequantization for prefill) taught that
#    layout. If no way is faster, record that neither the round trips nor the pattern explain
#    the down phase (gpu-kernels.md, session 27: 33 MB in ~15 us).
# Keep one llama.cpp run a session if the budget allows: s31_b.sh (build, with the engine's
# GPU tests beside it) then s31_c.sh at once on the warm machine (three engines). Their carry
# needs notes/bench and vexel_core/assets/vexel-tiny.gguf moved out of the tree (64 MiB).
# Setup trap (session 25): setup.sh installs .devkit/wheels once per machine; wheels added
# later never reach a warm machine. Start a call that needs a newly added wheel with
# `source .devkit/setup.sh && bash notes/device-jobs/devkit_sync.sh && ...`
# (serve_startup.sh runs it itself).
# Alternated A/Bs: benchmarks/alternate.py CHANGE (one process, any ab.py change; session 23
# found separate processes too noisy for a 1 ms change), or for whole commands
# notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the runs' medians).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
