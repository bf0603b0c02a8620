# Prepared in session 44 for session 45 (not run): Q5_K on gemv_int8 (branch next/q5k-int8,
# emulated only). Run from a checkout of the branch, with main's package beside it in the
# untracked main_tree/ (`mkdir main_tree && git archive main vexel_core ':!vexel_core/assets'
# | tar -x -C main_tree`). First its GPU tests, then the kernel against the float kernel at one
# row (benchmarks/kernels.py: `kernel` gemv_int8, `alt` the float kernel; session 39: Q5_K's
# float kernel 43.5 us at 14336x4096), then one request of a random Q5_K and a Q5_K_M
# Llama-3-8B with the branch and with main (PYTHONPATH=main_tree; one PTX cache an arm: MLX
# keys its cache by kernel name). Carry [".devkit/wheels", ".devkit/setup.sh"] after
# `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s45_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
[ -d main_tree/vexel_core ] || { echo "main_tree/vexel_core is missing: see the header"; exit 2; }
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu -n 6 \
  tests/test_quant_kernels.py -k "Q5_K or int8 or gated or add_norm" > $OUT/tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
timeout 120 python3 -u benchmarks/kernels.py --formats Q5_K,Q4_K --rows 1 --quick-formats "" \
  > $OUT/kernels.txt 2>&1
echo "== kernels.py rc $? after $(( $(date +%s) - t0 )) s"; grep -v -i warn $OUT/kernels.txt
bash notes/device-jobs/s45_a_bench.sh  # the engine arms (run alone after the first run)
