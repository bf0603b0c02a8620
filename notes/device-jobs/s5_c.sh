# Session 5, call C: the failing operation of the preemption test (every MLX function
# evaluated on the spot), the engine's tests (bf16 near-ties), where the bf16 copies come from.
export VEXEL_CACHE=/tmp/vx
timeout 80 python3 notes/device-jobs/s5_probe_ops.py 2>&1 | grep -E "OP FAILED|passed|failed" | cut -c1-600 | head -6
timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_engine.py 2>&1 | grep -vE "^\.|^$" | head -16
timeout 220 python3 benchmarks/gpu_timeline.py --bin-ms 100 --top 8 --where "copy_v<__nv_bfloat16, __nv_bfloat16" --where gather -- bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB > $OUT/s5c-timeline-bf16.txt 2>&1
grep -v "━" $OUT/s5c-timeline-bf16.txt | grep -v Warn | grep -A60 "total ms" | cut -c1-400
