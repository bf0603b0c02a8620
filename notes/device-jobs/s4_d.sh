# Session 4, call D: the lane-per-token paged decode kernel: GPU tests, kernel time in the bf16
# timeline, bf16 64 x 512/128 beside mlx-lm (new defaults: 8192-token steps), q4_0 one request.
export VEXEL_CACHE=/tmp/vx
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_attention_kernels.py -k device 2>&1 | tail -4
timeout 200 python3 benchmarks/gpu_timeline.py --bin-ms 100 --top 12 -- bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB > $OUT/timeline-bf16.txt 2>&1
grep -v "━" $OUT/timeline-bf16.txt | grep -v Warn | grep -E "tok/s|TTFT|ITL|span|paged|sdpa|total ms" | cut -c1-200
timeout 200 vexel bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --compare mlx-lm --json-out $OUT/bf16.json 2>&1 | grep -v "━"
timeout 150 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --json-out $OUT/q4_0-bs1.json 2>&1 | grep -E "tok/s|ITL|TTFT"
