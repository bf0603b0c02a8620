# Session 23, call E (main with the whole-step compile merged): llama.cpp builds in the
# background while one Q4_0 request runs in Vexel and mlx-lm, then the engine's Hypothesis
# searches at a tenth of their size, then llama.cpp on the same file. Carry
# [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] with notes/bench moved out.
#   source .devkit/setup.sh && bash notes/device-jobs/s23_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx
t0=$(date +%s)
(timeout 400 bash .devkit/peers/llamacpp.sh > /tmp/lc/build-run.log 2>&1
 echo "llama.cpp build rc $? after $(( $(date +%s) - t0 )) s") &
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 200 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
VEXEL_SEARCH=0.1 timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/test_engine_interleavings.py tests/test_async_engine_leaving.py --durations=5 \
  > $OUT/hypothesis.txt 2>&1
echo "searches rc $? after $(( $(date +%s) - t0 )) s"; tail -10 $OUT/hypothesis.txt | cut -c1-200
wait
timeout 120 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1
echo "llama.cpp rc $? after $(( $(date +%s) - t0 )) s"; grep -E "tg128|pp512|^\| +512 \| +128 \| +1 " $OUT/llamacpp-q4_0.log
