# Session 4, call C: the lane-group paged decode kernel: GPU tests, first-call cost of fused
# attention per shape, bf16 64 x 512/128 timeline, q4_0 one request.
export VEXEL_CACHE=/tmp/vx
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_attention_kernels.py -k device 2>&1 | tail -4
timeout 60 python3 benchmarks/attention_first_call.py 2>&1 | tail -12
timeout 200 python3 benchmarks/gpu_timeline.py --bin-ms 100 --top 16 -- bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --max-batched-tokens 8192 --json-out $OUT/bf16.json > $OUT/timeline-bf16.txt 2>&1
grep -v "━" $OUT/timeline-bf16.txt | grep -v Warn | tail -32 | cut -c1-400
timeout 150 python3 benchmarks/gpu_timeline.py --bin-ms 20 --top 12 -- bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 64 --json-out $OUT/q4_0-bs1.json > $OUT/timeline-q4_0-bs1.txt 2>&1
grep -v "━" $OUT/timeline-q4_0-bs1.txt | grep -E "tok/s|ITL|span|paged|gemv|total ms"
