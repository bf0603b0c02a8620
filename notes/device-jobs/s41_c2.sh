# Session 41, call 3: next/gemm-tilings (the tiling by shape) against main in the engine,
# arms alternated twice; the branch's GPU tests first.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
  tests/test_gemm_packed.py tests/test_feed_forward.py > $OUT/gpu_tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR) " $OUT/gpu_tests.txt | cut -c1-220 | head -6
B="bench --random llama3-8b --dtype q4_0 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
for round in 1 2; do
  for arm in tilings main; do
    [ $arm = main ] && cp -r mainkern/. . || cp -r tilkern/. .
    for n in 8 16; do
      timeout 80 vexel $B -n $n > $OUT/$arm-b$n-r$round.txt 2>&1
      echo "== $arm, $n requests, round $round: rc $? after $(( $(date +%s) - t0 )) s:" \
        $(grep -E "generated tok/s|ITL" $OUT/$arm-b$n-r$round.txt | sed 's/│//g' | tr -s ' ')
    done
  done
done
