# Session 21, call F (main with the AddNorm epilogue merged): one Q4_0 request beside mlx-lm,
# Vexel once more, then the timeline of main's kernels.
#   source .devkit/setup.sh && bash notes/device-jobs/s21_f.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --cache-dir /tmp/vx"
timeout 170 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
echo "== compare rc $? after $(( $(date +%s) - t0 )) s"
python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl 2>&1 | tail -4
timeout 60 vexel $B --trace-steps $OUT/steps-again.jsonl 2>&1 | grep -E "tok/s|ITL|rror"
echo "== again rc $? after $(( $(date +%s) - t0 )) s"
python3 benchmarks/step_summary.py $OUT/steps-again.jsonl 2>&1 | tail -4
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 100 python3 benchmarks/gpu_timeline.py --top 12 -- $W > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline.txt | cut -c1-150
