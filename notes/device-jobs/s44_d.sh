# Session 44, call D (at once after C, on the warm machine): gemm_blocks' kernel table with the
# chunk staged as one list of words, every shape of benchmarks/gemm_packed.py, Q4_K / Q6_K /
# Q8_0 at 3, 4, 8 and 16 rows, five tilings (2w2s added): the default tiling and the rows it
# starts at, set again from it. Carry [".devkit/wheels", ".devkit/setup.sh"] after
# `tree_slim.sh out`.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
for f in Q4_K Q8_0 Q6_K; do
  timeout 170 python3 -u benchmarks/gemm_blocks.py --formats $f --rows 3,4,8,16 \
    > $OUT/table-$f.txt 2>&1
  echo "== $f rc $? after $(( $(date +%s) - t0 )) s"; grep -v -i warn $OUT/table-$f.txt
done
