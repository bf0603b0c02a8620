# Session 9, paged decode attention for small batches (branch attn-small-batch): the kernel's
# tests on the GPU (every warp count, one and three spans; fresh machine: NVRTC compiles ~40
# variants), then GPU kernel time per layer by launch shape (benchmarks/decode_attention.py:
# old choice, new choice with and without the L2 prefetch, and warps x splits in
# {4, 8, 16} x {1, 2, 4, 8}, for batches 1/4/16 at contexts 128-4096).
timeout 250 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_attention_kernels.py 2>&1 | tail -5
timeout 200 python3 benchmarks/decode_attention.py --json $OUT/decode_attention.json \
  > $OUT/decode_attention.txt 2> $OUT/decode_attention.err
echo "benchmark exit $?"
cat $OUT/decode_attention.txt
tail -5 $OUT/decode_attention.err
