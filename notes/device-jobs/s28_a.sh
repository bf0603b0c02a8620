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
# First, the GPU tests of the kernels that session 27's last_of_grid refactor touched (the
# AddNorm epilogue and the feed-forward kernel): not yet run on the H200 after it.
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  tests/test_quant_kernels.py -k "add_norm or feed_forward" > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR)|Error|assert" $OUT/gpu_tests.txt | head -20
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 240 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
(cd benchmarks && timeout 120 python3 feed_forward.py > $OUT/feed_forward.txt 2>&1)
echo "== feed_forward.py rc $? after $(( $(date +%s) - t0 )) s"; grep -v "^\s*$" $OUT/feed_forward.txt | grep -v -i warn | tail -8
