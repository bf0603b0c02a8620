# Session 28, call F (main with the paged decode's prologue in two round trips): the compiled
# decode's tests (call E's timed out at 120 s on a fresh machine, three passed by then), then
# one request under `vexel bench` with the step trace (mlx-lm ran in call A of this session).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s28_f.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 230 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_decode.txt 2>&1
echo "== compiled decode rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_decode.txt)"
grep -E "^(FAILED|ERROR)" $OUT/compiled_decode.txt | head
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 170 vexel $B --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
