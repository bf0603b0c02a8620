# Session 39, call D: issue 8's kernel benchmark (benchmarks/kernels.py) in full on main, its
# first whole run since session 7: every shape and row count of Q4_0, Q8_0, Q4_K and Q6_K,
# then 14336x4096 of the other six formats, beside MLX's affine and bf16 products and the copy
# bandwidth of the same run. Output unbuffered into $OUT as it goes (a limit kill keeps it).
# Carry [".devkit/wheels", ".devkit/setup.sh"] with notes/bench moved out (tree_slim.sh out).
#   source .devkit/setup.sh && bash notes/device-jobs/s39_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 520 python3 -u benchmarks/kernels.py --json $OUT/kernels.json > $OUT/kernels.txt 2>&1
echo "== kernels.py rc $? after $(( $(date +%s) - t0 )) s"
grep -E "copy bandwidth|14336x4096 +(1|512) |rror" $OUT/kernels.txt | cut -c1-200
