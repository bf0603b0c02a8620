# Session 5, call A1: GPU tests (in-place cache writes, split context, the engine's equality
# tests with the empty-array fix), the split sweep, bf16 64 x 512/128 beside mlx-lm.
export VEXEL_CACHE=/tmp/vx
timeout 220 python3 -m pytest -q -p no:cacheprovider tests/test_kv_pool.py tests/test_engine.py \
  tests/test_attention_kernels.py tests/test_attention_backends.py tests/test_sampling.py \
  tests/test_kv_blocks.py 2>&1 | tail -15
timeout 90 python3 benchmarks/decode_attention.py --json $OUT/s5a-decode-split.json 2>&1 | tail -30
B="vexel bench --random llama3-8b -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
timeout 200 $B --dtype bf16 --compare mlx-lm --json-out $OUT/s5a-bf16.json 2>&1 | grep -v "━"
