# Session 20, call C: the AddNorm epilogue with its last CTA's loads issued together (call B:
# ~42-44 us a launch, of which ~30 us the last CTA's one-at-a-time loads of h). GPU tests, the
# timeline, then alternated rounds against the separate add_rms_norm.
#   source .devkit/setup.sh && bash notes/device-jobs/s20_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 130 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_quant_kernels.py \
  -k "add_norm" > $OUT/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,12p
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 100 python3 benchmarks/gpu_timeline.py --top 12 --where gemv_int8_norm -- $W \
  > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline.txt | cut -c1-150
grep -A4 -E "^'gemv_int8_norm'" $OUT/timeline.txt | grep -v "last 96" | cut -c1-150
bash notes/device-jobs/arms_rounds.sh 2 "vexel" "python3 benchmarks/ab.py --separate-add-norm"
