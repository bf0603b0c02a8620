# Session 5, call B: the probe of the CUDA "invalid argument" step, the engine's tests (near-tie
# comparison, TF32 off, AsyncEngine built by its thread), the bf16 timeline with in-place writes.
export VEXEL_CACHE=/tmp/vx
timeout 90 python3 notes/device-jobs/s5_probe_empty.py 2>&1 | grep -E "FAILED|passed|failed|Error" | head -12
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_engine.py tests/test_attention_backends.py 2>&1 | grep -vE "^\.|^$" | head -30
timeout 220 python3 benchmarks/gpu_timeline.py --bin-ms 100 --top 14 -- bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB > $OUT/s5b-timeline-bf16.txt 2>&1
grep -v "━" $OUT/s5b-timeline-bf16.txt | grep -v Warn | grep -E "tok/s|TTFT|ITL|span|total ms|copy|nvjet|paged|cache_write|scatter|gather" | cut -c1-180
