# Session 20, call B: gemv_int8's AddNorm epilogue (the output and down products take the
# residual add and the next RMS norm: two custom kernels a layer fewer). GPU tests, the
# timeline, then alternated rounds against the separate add_rms_norm (ab.py --separate-add-norm)
# and one run beside mlx-lm.
#   source .devkit/setup.sh && bash notes/device-jobs/s20_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 170 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_quant_kernels.py \
  -k "add_norm or gated_kernel_equals" tests/test_compiled_decode.py tests/test_norm_kernels.py \
  > $OUT/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,12p
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 120 python3 benchmarks/gpu_timeline.py --top 14 --where gemv_int8_norm --where add_rms_norm -- $W \
  > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline.txt | cut -c1-150
grep -A6 -E "^'(gemv_int8_norm|add_rms_norm)'" $OUT/timeline.txt | grep -v "last 96" | cut -c1-150
bash notes/device-jobs/arms_rounds.sh 3 "vexel" "python3 benchmarks/ab.py --separate-add-norm"
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 120 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl | sed -n '$p'
