# Session 9, call C2 (warm machine after C1, llama.cpp built there): one Q4_0 request with the
# session's changes beside mlx-lm and llama.cpp, its GPU timeline, paged decode by launch shape,
# 64 x 512/128 in bf16 (issue 4's workload), and round three of the gemv_int8 sweep.
export VEXEL_CACHE=/tmp/vx
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
timeout 60 vexel $B --trace-steps $OUT/steps-bs1-again.jsonl 2>&1 | grep -E "generated tok/s|rror"
python3 benchmarks/step_summary.py $OUT/steps-*.jsonl
for i in $(seq 1 60); do [ -f /tmp/lc/built ] && break; sleep 5; done
echo "llama.cpp build rc $(cat /tmp/lc/built 2>/dev/null)"
timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1; grep -E "tg128|pp512" $OUT/llamacpp-q4_0.log | head -4
timeout 120 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 14 -- $B > $OUT/timeline-bs1.txt 2>&1; grep -E "^span|^ *[0-9.]+ +[0-9]+ " $OUT/timeline-bs1.txt | cut -c1-150 | head -16
timeout 100 python3 benchmarks/node_cost.py --reps 100 2>&1 | tail -6
timeout 120 python3 benchmarks/decode_attention.py --batches 1 4 --contexts 256 4096 > $OUT/decode_attention.txt 2>&1; tail -12 $OUT/decode_attention.txt | cut -c1-200
timeout 150 vexel bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB 2>&1 | grep -E "generated tok/s|TTFT|ITL|rror"
