# Session 37, call B: the engine with the next q/k/v rows in the feed-forward launch (branch
# next/ff-qkv): the feed-forward GPU tests (test_compiled_decode.py's tests carry no gpu mark,
# so -m gpu deselected them: they did not run), the engine's A/B against
# the q/k/v product in a launch of its own (alternate.py --separate-qkv; the greedy tokens of
# every run compared), then one request beside mlx-lm.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s37_b.sh
: "${OUT:?set OUT to the output folder}"
export PYTHONUNBUFFERED=1 VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 200 python -m pytest -q -m gpu -p no:cacheprovider tests/test_compiled_decode.py \
  tests/test_feed_forward.py -k "compiled or next or gated_mlp" > $OUT/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/tests.txt
timeout 200 python benchmarks/alternate.py --rounds 6 --tokens 256 --separate-qkv \
  > $OUT/alternate.txt 2>&1
echo "alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -9 $OUT/alternate.txt
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 170 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
