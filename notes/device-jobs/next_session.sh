# Proposed device calls of the next session (written at the end of session 17). Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT; give an ncu run twice its expected time and have its workload
# write its map as it goes (benchmarks/packed_ncu.py does). Carry [".devkit/wheels",
# ".devkit/setup.sh"] (add ".devkit/peers" for llama.cpp, with notes/bench moved out of the
# tree: the carry is limited to 64 MiB). Session 17's checkout held main only: earlier
# sessions' branches are gone, their records are in notes/.
#
# 00: (~120 s, first) BlockWeight's repack moved onto the device after session 17's last call:
#    its GPU tests, then one Q4_0 request (vexel bench as s17_d.sh) to see the load and decode:
#      source .devkit/setup.sh && timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu \
#        tests/test_quant_kernels.py -k "packed or packs"
# 0: (~400 s alone) the engine's Hypothesis searches on CUDA, which calls A and B of session 17
#    cut at 200-240 s (test_engine.py: 22 passed; the sdpa interleavings search passed):
#      source .devkit/setup.sh && timeout 550 python3 -m pytest -q -p no:cacheprovider \
#        tests/test_engine_interleavings.py tests/test_async_engine_leaving.py --durations=5
# 1: (~300 s) after x's int8 copy is written by add_rms_norm and taken by the q/k/v and gate/up
#    products (gemv_packed for packed Q4_0, gemv_int8(x_rounded=...) for the others; not yet
#    written: notes/gpu-kernels.md, "Next"): the GPU tests of the norm and the products, then
#    one Q4_0 request with and without it in alternated rounds (five, judged by the median of
#    the per-run medians; ab_rounds.sh), since the GPU gain (~0.2 us a product at 4,096
#    columns, ~0.9 at 14,336) is small beside the host's share of a token.
# 2: (~600 s, two calls) the three engines on main: s14_a.sh 1 builds llama.cpp beside GPU
#    tests; s14_a.sh 2 runs one Q4_0 request in Vexel, mlx-lm and llama.cpp.
# 3: (~150 s) gemv_packed's gated mode at 2x14336x4096 in both orders (call C's were cut):
#      timeout 200 ncu --clock-control none --kernel-name regex:vx_ --csv --metrics $M \
#        python3 benchmarks/packed_ncu.py --shapes Q4_0/gated --map $OUT/map.tsv > $OUT/ncu.csv
export VEXEL_CACHE=/tmp/vx
echo "see the comment above: each call runs its own script"; exit 2
