# Session 22, calls D1 and D2 on one warm machine (main: the segment not merged). Carry
# [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] with notes/bench moved out of the tree.
#   source .devkit/setup.sh && bash notes/device-jobs/s22_d.sh 1    (fresh machine, ~400 s)
#   source .devkit/setup.sh && bash notes/device-jobs/s22_d.sh 2    (at once after, ~200 s)
# 1: llama.cpp built (kept in /tmp/lc) while the engine's Hypothesis searches run on CUDA
#    (never finished on a GPU before). 2: one Q4_0 request in Vexel, mlx-lm and llama.cpp.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx
t0=$(date +%s)
case "$1" in
1)
  (timeout 390 bash .devkit/peers/llamacpp.sh > /tmp/lc/build-run.log 2>&1
   echo "llama.cpp build rc $? after $(( $(date +%s) - t0 )) s") &
  timeout 370 python3 -m pytest -q -p no:cacheprovider --tb=short \
    tests/test_engine_interleavings.py tests/test_async_engine_leaving.py --durations=5 \
    > $OUT/hypothesis.txt 2>&1
  echo "searches rc $? after $(( $(date +%s) - t0 )) s"; tail -10 $OUT/hypothesis.txt | cut -c1-200
  wait
  ;;
2)
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 200 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
    > $OUT/bs1.txt 2>&1
  echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
  [ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
  timeout 120 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1
  echo "llama.cpp rc $? after $(( $(date +%s) - t0 )) s"; grep -E "tg128|pp512|^\| +512 \| +128 \| +1 " $OUT/llamacpp-q4_0.log
  ;;
esac
