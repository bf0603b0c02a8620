# Session 4, call F: after reverting the fused masked prefill: the engine's equality tests on
# the GPU (first errors), one q4_0 request, bf16 64 x 512/128 (Vexel alone).
export VEXEL_CACHE=/tmp/vx
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_engine.py -k "concurrent_equals_sequential" --tb=line 2>&1 | grep -E "Error|error|passed|failed" | head -8
timeout 70 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --json-out $OUT/q4_0-bs1.json 2>&1 | grep -E "tok/s|ITL|TTFT"
timeout 110 vexel bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --json-out $OUT/bf16.json 2>&1 | grep -E "tok/s|ITL|TTFT|peak mem|wall"
