# Session 29, call D (main at 6d504de: the prologue-q change merged), right after call C on the
# same machine: one request beside mlx-lm (vexel bench --compare mlx-lm), then llama.cpp's
# llama-bench on a random Q4_0 Llama-3-8B file if call C's background build finished.
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"], notes/bench moved out.
#   source .devkit/setup.sh && bash notes/device-jobs/s29_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
echo "llama.cpp build: $(ls /tmp/lc/llama.cpp/build/bin 2>&1 | tr '\n' ' ' | cut -c1-120)"
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 260 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
L=/tmp/lc/llama.cpp/build/bin/llama-bench
if [ -x $L ]; then
  G=/tmp/vx/random-llama3-8b-q4_0.gguf
  [ -s $G ] || python3 .devkit/peers/make_random_gguf_fast.py $G --qtype Q4_0
  timeout 200 $L -m $G -p 512 -n 128 -ngl 99 -fa 1 -r 3 > $OUT/llamacpp.txt 2>&1
  echo "llama.cpp rc $? after $(( $(date +%s) - t0 )) s"; grep -E "tg128|pp512" $OUT/llamacpp.txt
fi
