# Planned for session 21 (written in session 20), call B: the AddNorm epilogue's GPU tests
# (branch next/add-norm), which timed out twice at 130-170 s of NVRTC compiles in session 20.
#   source .devkit/setup.sh && bash notes/device-jobs/s21_b.sh
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
timeout 400 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_quant_kernels.py \
  -k add_norm --durations=5 > $OUT/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,12p
