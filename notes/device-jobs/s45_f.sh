# Session 45, call F: the float matrix-vector kernel (cuda/kernels.cuh's gemv: two rows of every
# format, one row of Q2_K, Q3_K, Q4_1, Q5_0, Q5_1) stages a chunk's rows as one list of 16-byte
# words, as gemm_blocks has since session 44. Its GPU tests (with Q5_K on gemv_int8, merged this
# session), then benchmarks/gemv_float.py with the new header, the old, the new (one PTX cache
# an arm: MLX keys its cache by kernel name), which also times gemm_blocks at 1 and 2 rows.
# Before the call: the old header in the untracked float_old/ (`git show <old>:vexel_core/
# quant/kernels/cuda/kernels.cuh > float_old/kernels.cuh`). Carry [".devkit/wheels",
# ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s45_f.sh
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
[ -f float_old/kernels.cuh ] || { echo "float_old/kernels.cuh is missing: see the header"; exit 2; }
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu -n 6 \
  tests/test_quant_kernels.py > $OUT/tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
H=vexel_core/quant/kernels/cuda/kernels.cuh
cp $H /tmp/new_kernels.cuh && cp float_old/kernels.cuh /tmp/old_kernels.cuh
arm() {  # name round
  cp /tmp/$1_kernels.cuh $H
  MLX_PTX_CACHE_DIR=/tmp/ptx-$1 timeout 150 python3 -u benchmarks/gemv_float.py \
    > $OUT/float-$1-$2.txt 2>&1
  echo "== gemv_float.py, $1 staging, round $2: rc $? after $(( $(date +%s) - t0 )) s"
}
arm new 1; arm old 1; arm new 2
cp /tmp/new_kernels.cuh $H
paste -d'|' $OUT/float-new-1.txt $OUT/float-old-1.txt | grep -v -i warn | cut -c1-120
