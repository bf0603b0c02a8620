# Session 6, call 4: the bf16 benchmark after the warm-up builds every padded length's
# attention plan; one request's host time split into graph building and mx.async_eval.
export VEXEL_CACHE=/tmp/vx
B="vexel bench --random llama3-8b -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
summary() { python3 - "$1" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows[:7]:
    print(f"{r['start_s']*1e3:8.1f} launch {r['launch_s']*1e3:7.1f} submit {r['submit_s']*1e3:7.1f} wait {r['wait_s']*1e3:6.1f} pipe {int(r['pipelined'])} dec {r['decodes']:3d} pre {r['prefill_tokens']:5d} n={len(r['prefill_chunks'])} {r['prefill_chunks'][-1:]}")
d = [r for r in rows if not r['prefill_chunks']][3:]
if d:
    print("decode steps", len(d), "median ms: launch", round(st.median(r['launch_s'] for r in d)*1e3, 2),
          "submit", round(st.median(r['submit_s'] for r in d)*1e3, 2), "wait", round(st.median(r['wait_s'] for r in d)*1e3, 2),
          "interval", round(st.median(b['start_s']-a['start_s'] for a, b in zip(d, d[1:]))*1e3, 2))
PY
}
timeout 200 $B --dtype bf16 --compare mlx-lm --trace-steps $OUT/steps-bf16.jsonl --json-out $OUT/bf16.json 2>&1 | grep -E "tok/s|TTFT|ITL|x$|rror"
summary $OUT/steps-bf16.jsonl
timeout 120 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB --trace-steps $OUT/steps-q4_0-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|rror"
summary $OUT/steps-q4_0-bs1.jsonl
