# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail or grep (a limit kill loses it: session
# 34's probe printed nothing after 300 s; write to $OUT and read the file after); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB; `notes/device-jobs/tree_slim.sh` moves it). A
# machine left idle for 30 s is given back: a call that needs the last one's state
# (llama.cpp's build in /tmp/lc) must follow at once.
# .devkit is not in git. In a fresh checkout: `bash notes/device-jobs/devkit_fill.sh` (from
# ../shared and PyPI: setup.sh, wheels, peers, extra for the whole suite, pyspy).
#
# Written at the end of session 34 (all 1,800 s of device time spent: two machines refused
# at start cost ~200 s, a probe call that outran its timeout ~350 s). Main now: session 33's
# code; F32 files compute in float32 on a GPU (as llama.cpp); compile_variants evaluates its
# paged-decode launches one at a time (together, they ran concurrently and left one pair's
# split-merge count at 1); tests that held on the CPU alone fixed (test_quant_kernels' packing
# test, test_client's two computations). None of these has run on the GPU yet.
#
# A: (~330 s, cold) `s35_a.sh` on main, carry and moves as its header says: down_layout.py with
#    each launch evaluated alone (s34_a's ratios were concurrent launches'), then the modules
#    this session changed without a GPU. If "tiled by CTA" or a pair's way reads well under the
#    engine's way, the lever for the down phase is its access pattern (see s34's section of
#    notes/gpu-kernels.md for what each way costs to build; notes/patches/ff-pairs.patch is
#    the pairs' kernel, emulated, never run on the GPU).
# B: (~560 s) at once after A on the warm machine (`tree_slim.sh back`, then `out`: the
#    shipped model back in): `s34_b.sh` (the whole suite but test_quant_kernels, with the
#    failures' tracebacks), carry [".devkit/setup.sh", ".devkit/extra"]. s34_b's failures were
#    all fixed or explained (notes/engine-gpu.md, session 34): expect none.
# C: if A's down_layout favours a way: its kernel (ff-pairs: `git apply
#    notes/patches/ff-pairs.patch`, then s34_c.sh; tiled: a load-time repack, not written).
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
