# Session 21, call E: the AddNorm branch's GPU tests (its kernel against the reference, the
# add_rms_norm kernel with the 16-byte eps, the compiled decode with the fused launches).
#   source .devkit/setup.sh && bash notes/device-jobs/s21_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_quant_kernels.py tests/test_norm_kernels.py \
  -k "norm" -rfE --durations=5 > $OUT/tests-norm.txt 2>&1
echo "== norm tests rc $? after $(( $(date +%s) - t0 )) s"; tail -12 $OUT/tests-norm.txt | cut -c1-200
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py -rfE --durations=3 \
  > $OUT/tests-compiled.txt 2>&1
echo "== compiled decode tests rc $? after $(( $(date +%s) - t0 )) s"; tail -8 $OUT/tests-compiled.txt | cut -c1-200
