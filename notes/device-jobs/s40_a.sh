# Prepared in session 39 for session 40 (not run): gemm_packed's two prepared changes
# (notes/patches/gemm-two-acc-gated.patch, branch next/gemm-two-acc): two accumulators a tile
# (two chains of four mma where one accumulator made one of eight; 131 registers, 128 before),
# and its gated mode (act(g) * u of a fused gate/up weight in the same launch, taken by
# gguf_gated for 3-16 rows; 168 registers). CPU tests of both pass (emulated, nvcc for sm_90).
# Before the call: `git checkout --detach next/gemm-two-acc` in the checkout that the device
# tool sends (or `git apply notes/patches/gemm-two-acc-gated.patch` on main at session 39's
# end), then `bash notes/device-jobs/tree_slim.sh out`.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s40_a.sh
# Then, on main in a second call at once (warm machine, /tmp/vx kept): benchmarks/gemm_packed.py
# with the same --rows for the kernels before the change (CUPTI: separate processes are fine
# for kernel times; the engine arms below run in one call each).
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 90 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
  tests/test_gemm_packed.py > $OUT/gpu_tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR) " $OUT/gpu_tests.txt | cut -c1-220 | head -8
(cd benchmarks && timeout 90 python3 -u gemm_packed.py --rows 3,4,8,12,16) > $OUT/gemm_packed.txt 2>&1
echo "== gemm_packed.py rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/gemm_packed.txt | tail -22
for n in 4 8 16; do  # the branch against the float kernel / dequantized path (--no-gemm)
  B="bench --random llama3-8b --dtype q4_0 -n $n --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
  for arm in gemm no-gemm; do
    flag=$([ $arm = no-gemm ] && echo --no-gemm)
    timeout 70 python3 benchmarks/ab.py $flag $B --trace-steps $OUT/steps-$n-$arm.jsonl \
      > $OUT/b$n-$arm.txt 2>&1
    echo "== $n requests, $arm: rc $? after $(( $(date +%s) - t0 )) s"
    grep -E "generated tok/s|ITL|rror" $OUT/b$n-$arm.txt | sed 's/│//g' | tr -s ' '
  done
done
ls $OUT/steps-*.jsonl > /dev/null 2>&1 && python3 benchmarks/step_summary.py $OUT/steps-*.jsonl
gzip -f $OUT/steps-*.jsonl 2>/dev/null
