# Session 9, call A (fresh machine): is one Q4_0 request host-bound or GPU-bound? The GPU's
# busy time and kernel count per token (CUPTI through PyTorch's profiler), then the one-rope
# experiment against the default, alternating, and the dynamic-shared-memory check.
export VEXEL_CACHE=/tmp/vx
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 150 vexel $B --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|rror"
timeout 150 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 25 -- $B > $OUT/timeline-bs1.txt 2>&1; head -40 $OUT/timeline-bs1.txt
for round in 1 2; do
  timeout 60 python3 benchmarks/ab.py --one-rope $B --trace-steps $OUT/steps-one-rope-$round.jsonl 2>&1 | grep -E "generated tok/s|rror" | sed 's/^/one rope: /'
  timeout 60 vexel $B --trace-steps $OUT/steps-default-$round.jsonl 2>&1 | grep -E "generated tok/s|rror" | sed 's/^/default: /'
done
python3 benchmarks/step_summary.py $OUT/steps-*.jsonl
bash notes/device-jobs/next_session.sh shmem
