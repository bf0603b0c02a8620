# Session 42: the engine's memory bound with the model's pacing between layers
# (`keep_within_memory_limit`: past MLX's limit each layer's output is computed before the
# next is built; s42_c2.sh found MLX's own wait let a prompt step run 11.6 GiB past the
# limit), then the float kernel's GPU tests (through kernels.cuh's staged_loop since session
# 41, never run on a GPU: s42_a.sh's test run ended at its time limit after gemm_blocks'
# tests) and gguf_matmul's at 4 rows (BLOCKS_ROWS starts at 4 since this session), then 16
# Q4_0 requests of 512 + 128 (peak memory beside s42_c2.sh's 36.1 and 67.2 GiB).
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s42_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 90 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
  tests/test_device_memory.py > $OUT/memory-tests.txt 2>&1
echo "== memory tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/memory-tests.txt)"
grep -E "^(FAILED|ERROR|E ) " $OUT/memory-tests.txt | cut -c1-240 | head -8
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
  tests/test_quant_kernels.py tests/test_gemm_blocks.py \
  -k "product_equals_reference or half_precision or gguf_matmul_on_the_gpu" \
  > $OUT/float-tests.txt 2>&1
echo "== float kernel tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/float-tests.txt)"
grep -E "^(FAILED|ERROR) " $OUT/float-tests.txt | cut -c1-240 | head -8
timeout 100 vexel bench --random llama3-8b --dtype q4_0 --prompt-len 512 --output-len 128 \
  --kv-cache-memory 16GiB -n 16 --log-level info > $OUT/paced.txt 2>&1
echo "== paced, 16 requests: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -oE "memory_limit_gib=[0-9.]+" $OUT/paced.txt | head -1) \
  $(grep -E "generated tok/s|TTFT|ITL|peak memory|rror" $OUT/paced.txt | sed 's/│//g' | tr -s ' ')
