# Session 6, call 3: where the bf16 benchmark's prefill loses time (one JSON line per step),
# and one request's host launch time per step.
export VEXEL_CACHE=/tmp/vx
B="vexel bench --random llama3-8b -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
timeout 200 $B --dtype bf16 --trace-steps $OUT/steps-bf16.jsonl 2>&1 | grep -E "tok/s|TTFT|ITL|rror"
python3 - $OUT/steps-bf16.jsonl <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows[:40]:
    print(f"{r['start_s']*1e3:8.1f} launch {r['launch_s']*1e3:7.1f} wait {r['wait_s']*1e3:7.1f} pipe {int(r['pipelined'])} dec {r['decodes']:3d} pre {r['prefill_tokens']:5d} {r['prefill_chunks'][:3]}{'...' if len(r['prefill_chunks'])>3 else ''} n={len(r['prefill_chunks'])}")
print("steps", len(rows), "launch total", round(sum(r['launch_s'] for r in rows),3), "wait total", round(sum(r['wait_s'] for r in rows),3))
PY
timeout 120 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB --trace-steps $OUT/steps-q4_0-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|TTFT|rror"
python3 - $OUT/steps-q4_0-bs1.jsonl <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])][5:]
print("bs1 launch ms median", round(st.median(r['launch_s'] for r in rows)*1e3,2), "wait ms median", round(st.median(r['wait_s'] for r in rows)*1e3,2))
PY
