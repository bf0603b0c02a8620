# Proposed device calls of the next session. Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). Session 17's checkout held main only: earlier
# sessions' branches are gone, their records are in notes/.
#
# Written at the end of session 18. MLX's whole-step CUDA graphs are Vexel's default on CUDA
# now; the norm inside the products is on branch next/normed-mode (measured slower). Host and
# GPU are even at ~2.5-2.6 ms a token: a gain on one side shows only up to the other.
#
# 0: (~600 s, two calls) the three engines on main, since whole-step graphs changed the host's
#    share: s14_a.sh 1 builds llama.cpp beside GPU tests; s14_a.sh 2 runs one Q4_0 request in
#    Vexel, mlx-lm and llama.cpp (carry .devkit/peers, notes/bench moved out of the tree).
# 1: (~200 s) the paged decode at one sequence and short contexts (17.7-18.3 us a layer in
#    session 18's timelines, 0.57 ms a token, against ~15.7 us in session 9's benchmark):
#    its grid of (warps, splits) at one sequence, then whether a wider split than {1,2,4,8}
#    (more CTAs, the same merge) pays; a split's merge launch costs ~6 us of host time a layer,
#    which host and GPU being even now makes visible:
#      source .devkit/setup.sh && timeout 180 python3 benchmarks/decode_attention.py \
#        --batches 1 --contexts 128 256 512 1024 --json $OUT/decode.json
# 2: (~550 s alone) the engine's Hypothesis searches on CUDA, never finished on a GPU (cut at
#    200-240 s in session 17):
#      source .devkit/setup.sh && timeout 550 python3 -m pytest -q -p no:cacheprovider \
#        tests/test_engine_interleavings.py tests/test_async_engine_leaving.py --durations=5
# 3: (~150 s) gemv_packed's gated mode at 2x14336x4096 in both orders (session 17's call C
#    was cut):
#      timeout 200 ncu --clock-control none --kernel-name regex:vx_ --csv --metrics $M \
#        python3 benchmarks/packed_ncu.py --shapes Q4_0/gated --map $OUT/map.tsv > $OUT/ncu.csv
# Alternated A/Bs: notes/device-jobs/arms_rounds.sh ROUNDS "arm command" ... (median of the
# runs' median steps; one slow host episode must not decide a round).
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
