# Session 4, call B: bf16 64 x 512/128 by step size; GPU timelines (torch profiler's CUPTI).
export VEXEL_CACHE=/tmp/vx
B="vexel bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
for mbt in 8192 16384 32768; do
  T0=$(date +%s)
  timeout 150 $B --max-batched-tokens $mbt --json-out $OUT/bf16-mbt$mbt.json 2>&1 | grep -E "tok/s|TTFT|ITL|peak mem|wall"
  echo "mbt $mbt took $(( $(date +%s) - T0 )) s"
done
T0=$(date +%s)
timeout 200 python3 benchmarks/gpu_timeline.py --bin-ms 100 -- bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --max-batched-tokens 8192 > $OUT/timeline-bf16.txt 2>&1
grep -v "━" $OUT/timeline-bf16.txt | tail -45; echo "timeline took $(( $(date +%s) - T0 )) s"
timeout 200 python3 benchmarks/gpu_timeline.py --bin-ms 20 -- bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 64 > $OUT/timeline-q4_0-bs1.txt 2>&1
grep -v "━" $OUT/timeline-q4_0-bs1.txt | tail -45
