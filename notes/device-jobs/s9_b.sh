# Session 9, call B: GPU tests of the fused add + RMS norm and the one-rope projection, then one
# Q4_0 request: default against --plain-norm-add (the add and the norm as two operations),
# alternating, and the GPU timeline (busy time, kernels per token) of the default.
export VEXEL_CACHE=/tmp/vx
timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_norm_kernels.py 2>&1 | tail -3
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_compiled_decode.py tests/test_engine.py 2>&1 | tail -3
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
for round in 1 2 3; do
  timeout 60 vexel $B --trace-steps $OUT/steps-default-$round.jsonl 2>&1 | grep -E "generated tok/s|rror" | sed 's/^/default: /'
  timeout 60 python3 benchmarks/ab.py --plain-norm-add $B --trace-steps $OUT/steps-plain-$round.jsonl 2>&1 | grep -E "generated tok/s|rror" | sed 's/^/plain norm add: /'
done
python3 benchmarks/step_summary.py $OUT/steps-*.jsonl
timeout 150 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 25 -- $B > $OUT/timeline-bs1.txt 2>&1; grep -E "^span|^ *[0-9.]+ +[0-9]+ " $OUT/timeline-bs1.txt | head -30
