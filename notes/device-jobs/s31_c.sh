# Session 31, call C, at once after s31_b.sh on the same warm machine: the three engines on one
# Q4_0 request, each alone: llama.cpp's tg128 (llama-bench), then `vexel bench` beside mlx-lm
# (the workload of session 30's call H).
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] with notes/bench moved out.
#   source .devkit/setup.sh && bash notes/device-jobs/s31_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
M=/tmp/vx/random-llama3-8b-q4_0.gguf
[ -s $M ] || python3 .devkit/peers/make_random_gguf_fast.py $M --qtype Q4_0 > /dev/null 2>&1
B=/tmp/lc/llama.cpp/build/bin
timeout 150 $B/llama-bench -m $M -p 512 -n 128 -ngl 99 -fa 1 -r 3 > $OUT/llamacpp-q4_0.log 2>&1
echo "llama.cpp rc $? after $(( $(date +%s) - t0 )) s"; grep -E "tg128|pp512" $OUT/llamacpp-q4_0.log
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 260 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
