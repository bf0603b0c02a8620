# Session 52, call D: one sequence's paged decode (writing, as a step launches it) with L2
# flushed before each pass of 32 layers, and left warm (--warm): what a step whose weights
# streamed evict-first could gain in its attention. Carry [".devkit/wheels", ".devkit/setup.sh"]
# after `tree_slim.sh out`.
: "${OUT:?set OUT to the output folder}"
for round in 1 2; do
  for mode in "" --warm; do
    echo "== round $round ${mode:-flushed}"
    timeout 200 python3 benchmarks/decode_attention.py --batches 1 --contexts 128 256 512 --write \
      $mode 2>&1 | grep -v -i warn
  done
done
