# Session 30, call I, on branch next/fused-attention: its GPU test with the two launches
# evaluated before the fused one (they share the split merge's counts, and MLX may run
# independent launches at the same time: call G's one failure in three). Five runs.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s30_i.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
for i in 1 2 3 4 5; do
  timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_after_product.py \
    > $OUT/after_product_$i.txt 2>&1
  echo "== run $i rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/after_product_$i.txt)"
done
grep -h "^FAILED" $OUT/after_product_*.txt | sort | uniq -c
