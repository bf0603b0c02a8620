# Session 46, call 4 (the budget's last ~290 s, start included): branch next/int8-legacy (one
# row of Q4_1, Q5_0 and Q5_1 on gemv_int8, rebased on main's XROWS) on the H200: its GPU tests,
# then one row against the float kernel (kernels.py's kernel / alt). Run from a checkout of the
# branch; carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s46_4.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 110 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu -n 8 tests/test_quant_kernels.py \
  -k "Q4_1 or Q5_0 or Q5_1" > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR|passed|failed" $OUT/tests.txt | tail -4 | cut -c1-200
timeout 70 python3 benchmarks/kernels.py --formats Q4_1,Q5_0,Q5_1 --quick-formats "" --rows 1 \
  --shapes 14336x4096,4096x14336 > $OUT/kernels.txt 2>&1
echo "== kernels rc $? after $(( $(date +%s) - t0 )) s"; grep -v Warn $OUT/kernels.txt | tail -12
