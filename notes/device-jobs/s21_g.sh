# Session 21, call G: the decode segment (one launch for a LLaMA layer's output, gate/up, down
# and next q/k/v products): its GPU tests, then one request with it and without it.
#   source .devkit/setup.sh && bash notes/device-jobs/s21_g.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 100 python3 -m pytest -q -p no:cacheprovider -x tests/test_decode_segment.py -rfE \
  --durations=4 > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s"; tail -14 $OUT/tests.txt | cut -c1-220
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
for arm in "vexel" "python3 benchmarks/ab.py --separate-segment"; do
  limit=45; [ "$arm" = vexel ] && limit=75  # the first run writes the random model
  timeout $limit $arm $B --trace-steps $OUT/steps.jsonl 2>&1 | grep -E "generated tok/s|ITL|rror" | cut -c1-150
  echo "== $arm rc $? after $(( $(date +%s) - t0 )) s"
  python3 benchmarks/step_summary.py $OUT/steps.jsonl 2>&1 | tail -1
done
