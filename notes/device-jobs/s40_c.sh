# Session 40, call C: main with the swapped gemm_packed: the GPU tests of gemm_packed and the
# feed-forward, the kernel table, `vexel bench --compare mlx-lm` at 8 requests of 512 + 128
# (mlx-lm's BatchGenerator, 4-bit), Vexel at 4 and 16. (llama.cpp's batched-bench was planned
# here too: three refused starts left no room for its 5.5-minute build.)
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s40_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
  tests/test_gemm_packed.py tests/test_feed_forward.py > $OUT/gpu_tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR) " $OUT/gpu_tests.txt | cut -c1-220 | head -6
(cd benchmarks && timeout 150 python3 -u gemm_packed.py --rows 2,3,4,8,12,16) > $OUT/kern.txt 2>&1
echo "== gemm_packed.py rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/kern.txt | tail -25
B="bench --random llama3-8b --dtype q4_0 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
timeout 150 vexel $B -n 8 --compare mlx-lm --json-out $OUT/b8.json > $OUT/b8.txt 2>&1
echo "== 8 requests, vexel and mlx-lm: rc $? after $(( $(date +%s) - t0 )) s"
grep -E "engine|generated tok/s|ITL|rror" $OUT/b8.txt | sed 's/│//g' | tr -s ' '
for n in 4 16; do
  timeout 60 vexel $B -n $n > $OUT/b$n.txt 2>&1
  echo "== $n requests: rc $? after $(( $(date +%s) - t0 )) s"
  grep -E "generated tok/s|ITL|rror" $OUT/b$n.txt | sed 's/│//g' | tr -s ' '
done
