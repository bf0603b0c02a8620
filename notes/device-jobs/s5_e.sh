# Session 5, call E (last): every test that runs without llama.cpp's binding and the server's
# packages, then the figures of the closing note: bf16 64 x 512/128 beside mlx-lm, q4_0 one
# request beside mlx-lm, q4_0 64 x 512/128.
export VEXEL_CACHE=/tmp/vx
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_attention_backends.py \
  tests/test_attention_kernels.py tests/test_engine.py tests/test_kv_blocks.py tests/test_kv_pool.py \
  tests/test_rope.py tests/test_sampling.py tests/test_linear.py tests/test_quant_formats.py \
  tests/test_bench_cli.py tests/test_config.py 2>&1 | grep -vE "^\.|^$" | tail -12
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | grep -vE "^\.|^$" | tail -6
B="vexel bench --random llama3-8b -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
timeout 170 $B --dtype bf16 --compare mlx-lm --json-out $OUT/s5e-bf16.json 2>&1 | grep -v "━"
timeout 80 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --compare mlx-lm --json-out $OUT/s5e-q4_0-bs1.json 2>&1 | grep -E "tok/s|ITL|TTFT|x$"
timeout 100 $B --dtype q4_0 --json-out $OUT/s5e-q4_0.json 2>&1 | grep -E "tok/s|TTFT|ITL|peak"
