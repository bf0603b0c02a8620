# Session 39, call F: gemm_packed v2 (k split over a CTA's warps, x a round ahead) (a few activation rows times packed Q4_0 on the tensor cores,
# branch next/gemm-packed): its GPU tests, benchmarks/gemm_packed.py against the path it
# replaces and MLX's bf16 matmul, then 8 requests of 512 + 128 tokens with and without it
# (benchmarks/ab.py --no-gemm; separate processes, one after the other).
# Carry [".devkit/wheels", ".devkit/setup.sh"] with notes/bench moved out (tree_slim.sh out).
#   source .devkit/setup.sh && bash notes/device-jobs/s39_f.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 45 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
  tests/test_gemm_packed.py > $OUT/gpu_tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR) " $OUT/gpu_tests.txt | cut -c1-220 | head -8
(cd benchmarks && timeout 70 python3 -u gemm_packed.py --rows 2,8,16) > $OUT/gemm_packed.txt 2>&1
echo "== gemm_packed.py rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/gemm_packed.txt | tail -18
for n in 8; do
  B="bench --random llama3-8b --dtype q4_0 -n $n --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
  for arm in gemm no-gemm; do
    flag=$([ $arm = no-gemm ] && echo --no-gemm)
    timeout 55 python3 benchmarks/ab.py $flag $B --trace-steps $OUT/steps-$n-$arm.jsonl \
      > $OUT/b$n-$arm.txt 2>&1
    echo "== $n requests, $arm: rc $? after $(( $(date +%s) - t0 )) s"
    grep -E "generated tok/s|TTFT|ITL|rror" $OUT/b$n-$arm.txt | sed 's/│//g' | tr -s ' '
  done
done
ls $OUT/steps-*.jsonl > /dev/null 2>&1 && python3 benchmarks/step_summary.py $OUT/steps-*.jsonl
gzip -f $OUT/steps-*.jsonl 2>/dev/null
