# Planned for session 28 (written in session 27), call A, main: one Q4_0 request beside mlx-lm
# on the code of session 27 (the split merged in the paged decode, the feed-forward part in one
# launch; session 26: Vexel 372.8 tok/s, mlx-lm 141.5), with the step trace (which side sets
# the pace now: build + submit against the interval), then the feed-forward kernel against the
# two launches it replaced (benchmarks/feed_forward.py, GPU time by CUPTI).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s28_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 240 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
(cd benchmarks && timeout 120 python3 feed_forward.py > $OUT/feed_forward.txt 2>&1)
echo "== feed_forward.py rc $? after $(( $(date +%s) - t0 )) s"; grep -v "^\s*$" $OUT/feed_forward.txt | grep -v -i warn | tail -8
