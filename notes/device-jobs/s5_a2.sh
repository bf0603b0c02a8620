# Session 5, call A2: why the engine's tests fail on the GPU (TF32 now off in the tests; then
# the same tests with the scatter instead of in-place writes), then one request, q4_0.
export VEXEL_CACHE=/tmp/vx
T="tests/test_engine.py tests/test_attention_backends.py tests/test_kv_pool.py"
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=line $T 2>&1 | grep -vE "^\.|^$" | head -40
echo "=== scatter instead of in-place writes"
timeout 100 python3 -c "
import sys, pytest, vexel_core.kvcache.pool as p
p.kernel_backend = lambda: None
sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '--tb=line', 'tests/test_engine.py']))" 2>&1 | grep -vE "^\.|^$" | head -20
timeout 120 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --compare mlx-lm --json-out $OUT/s5a-q4_0-bs1.json 2>&1 | grep -E "tok/s|ITL|TTFT|x$"
timeout 100 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 4000 --output-len 128 --compare mlx-lm --json-out $OUT/s5a-q4_0-bs1-4k.json 2>&1 | grep -E "tok/s|ITL|TTFT|x$"
