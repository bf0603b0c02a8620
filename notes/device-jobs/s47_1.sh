# Session 47, call 1: run from branch s47 (main + the int8-legacy patch, since merged and deleted: one row of
# Q4_1, Q5_0 and Q5_1 on gemv_int8). The whole test_quant_kernels.py on the GPU (main's tests
# after XROWS and the legacy formats' together), then one row of the three formats against the
# float kernel (kernels.py), then their 2-4 rows (gemv_rows.py) for INT8_ROWS. Carry
# [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s47_1.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
bash notes/device-jobs/gpu_tests.sh "300 tests/test_quant_kernels.py -m gpu -n 8"
timeout 70 python3 benchmarks/kernels.py --formats Q4_1,Q5_0,Q5_1 --quick-formats "" --rows 1 \
  --shapes 14336x4096,4096x14336 > $OUT/kernels.txt 2>&1
echo "== kernels rc $? after $(( $(date +%s) - t0 )) s"; grep -v Warn $OUT/kernels.txt | tail -12
(cd benchmarks && timeout 110 python3 gemv_rows.py --formats Q4_1,Q5_0,Q5_1 \
  --shapes 4096x4096,28672x4096,4096x14336) > $OUT/rows.txt 2>&1
echo "== gemv_rows rc $? after $(( $(date +%s) - t0 )) s"; grep -v Warn $OUT/rows.txt
