# Session 6, last call: CUDA kernels' headers included by path and launch arguments built once
# per shape (host time per launch); one request and 64 requests beside mlx-lm, then the
# quantized kernels' GPU tests (they compile every variant: slow on a fresh machine).
export VEXEL_CACHE=/tmp/vx
timeout 100 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB --compare mlx-lm --trace-steps $OUT/steps-q4_0-bs1.jsonl --json-out $OUT/q4_0-bs1.json 2>&1 | grep -E "tok/s|ITL|TTFT|x$|rror"
python3 - $OUT/steps-q4_0-bs1.jsonl <<'PY'
import json, sys, statistics as st
d = [json.loads(l) for l in open(sys.argv[1])][5:]
print("bs1 decode median ms: launch", round(st.median(r['launch_s'] for r in d)*1e3, 2), "submit", round(st.median(r['submit_s'] for r in d)*1e3, 2), "interval", round(st.median(b['start_s']-a['start_s'] for a, b in zip(d, d[1:]))*1e3, 2))
PY
timeout 170 vexel bench --random llama3-8b --dtype bf16 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --compare mlx-lm --json-out $OUT/bf16.json 2>&1 | grep -E "tok/s|TTFT|ITL|x$|rror"
timeout 270 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | tail -4
