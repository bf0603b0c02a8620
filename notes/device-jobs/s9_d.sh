# Session 9, call D (fresh machine): add_rms_norm with 16-byte words (its GPU tests, its time
# in the one-request timeline), compiled decode on the GPU, one Q4_0 request beside mlx-lm,
# 64 x 512/128 in bf16 (first-token time with every paged-decode variant compiled at first
# use), and host time per node by kind.
export VEXEL_CACHE=/tmp/vx
timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_norm_kernels.py 2>&1 | tail -2
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_compiled_decode.py 2>&1 | tail -2
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
timeout 100 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 12 -- $B > $OUT/timeline-bs1.txt 2>&1; grep -E "^span|^ *[0-9.]+ +[0-9]+ " $OUT/timeline-bs1.txt | cut -c1-150 | head -13
timeout 200 vexel bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --json-out $OUT/bf16-64.json 2>&1 | grep -E "generated tok/s|TTFT|ITL|rror"
timeout 80 python3 benchmarks/node_cost.py --reps 100 2>&1 | tail -6
