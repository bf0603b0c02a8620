# Session 29, call E, right after call D on the same machine: call D's vexel bench ran beside
# call C's llama.cpp build, still compiling (host time up: build 0.79, submit 1.54 ms). Wait
# for the build, then llama-bench (tg128) and the one-request bench beside mlx-lm again, on an
# idle host. Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"], notes/bench out.
#   source .devkit/setup.sh && bash notes/device-jobs/s29_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
L=/tmp/lc/llama.cpp/build/bin/llama-bench
while [ ! -x $L ] && [ $(( $(date +%s) - t0 )) -lt 150 ]; do sleep 5; done
while pgrep -f "cmake --build" > /dev/null && [ $(( $(date +%s) - t0 )) -lt 170 ]; do sleep 3; done
echo "build waited $(( $(date +%s) - t0 )) s; $(tail -2 /tmp/lc/build.log | tr '\n' ' ' | cut -c1-160)"
if [ -x $L ]; then
  G=/tmp/vx/random-llama3-8b-q4_0.gguf
  [ -s $G ] || python3 .devkit/peers/make_random_gguf_fast.py $G --qtype Q4_0
  timeout 150 $L -m $G -p 512 -n 128 -ngl 99 -fa 1 -r 3 > $OUT/llamacpp.txt 2>&1
  echo "llama.cpp rc $? after $(( $(date +%s) - t0 )) s"; grep -E "tg128|pp512" $OUT/llamacpp.txt
fi
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 240 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
