# Session 19, call D: the writing paged decode with the new rows staged in shared memory and
# stored after the barrier (call C: the write before the barrier cost 3-4 us a layer).
#   source .devkit/setup.sh && bash notes/device-jobs/s19_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -m gpu \
  tests/test_attention_kernels.py -k writing > $OUT/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_compiled_decode.py \
  >> $OUT/tests.txt 2>&1
echo "compiled decode tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,12p
for arm in read write; do
  flag=$([ $arm = write ] && echo --write)
  timeout 100 python3 benchmarks/decode_attention.py --batches 1 4 --contexts 128 256 512 $flag \
    --json $OUT/decode-$arm.json > $OUT/decode-$arm.txt 2>&1
  echo "== $arm: rc $? after $(( $(date +%s) - t0 )) s"; grep -v -i warn $OUT/decode-$arm.txt | cut -c1-140
done
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 120 python3 benchmarks/gpu_timeline.py --top 12 -- $W > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline.txt | cut -c1-130
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 120 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl | sed -n '$p'
