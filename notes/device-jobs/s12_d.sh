# Session 12, calls D1 and D2 on one warm machine (main with the gated gate/up product merged).
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"].
#   source .devkit/setup.sh && bash notes/device-jobs/s12_d.sh 1    (fresh machine, ~420 s)
#   source .devkit/setup.sh && bash notes/device-jobs/s12_d.sh 2    (at once after, ~220 s)
# 1: llama.cpp built (kept in /tmp/lc for call 2) while the GPU tests of what the merge
#    changed run beside it (correctness only: the build slows them, nothing is timed).
# 2: nothing else running: one Q4_0 request (128 + 256 tokens) in Vexel and mlx-lm, then
#    llama.cpp on the same file: the three engines on the final code.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx
t0=$(date +%s)
case "$1" in
1)
  (timeout 380 bash .devkit/peers/llamacpp.sh > /tmp/lc/build-run.log 2>&1
   echo "llama.cpp build rc $? after $(( $(date +%s) - t0 )) s") &
  timeout 390 python3 -m pytest -q -p no:cacheprovider --tb=short -rP \
    tests/test_quant_kernels.py tests/test_linear.py tests/test_compiled_decode.py \
    -k "(gated or compiled or Gated) and not emulated" > $OUT/tests.txt 2>&1
  echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
  echo "outputs equal to the unfused path's: $(grep -oE '[0-9.]+ of outputs equal' $OUT/tests.txt | sort -n | sed -n 1p) (lowest) in $(grep -c 'of outputs equal' $OUT/tests.txt) comparisons"
  grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,10p
  wait
  ;;
2)
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 200 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
    > $OUT/bs1.txt 2>&1
  echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
  [ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1
  echo "llama.cpp rc $? after $(( $(date +%s) - t0 )) s"; grep -E "tg128|pp512|^\| +512 \| +128 \| +1 " $OUT/llamacpp-q4_0.log
  ;;
esac
