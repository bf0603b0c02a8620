# Session 30, call G, on branch next/fused-attention rebased on main's fix (the split merge's
# counts and the placeholders at least gpu.TOKEN_SHAPE: out of MLX's small pool of managed
# memory). Call F's two-span test of the fused launch failed (out differs from the two
# launches') with Hkv 2, whose merge counts were 8 bytes, in that pool. Is the failure those
# counts, or a race of the fused launch? Its GPU test three times over (fresh random inputs
# each), then the attention kernels' GPU tests (main's change).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s30_g.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
for i in 1 2 3; do
  timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_after_product.py \
    > $OUT/after_product_$i.txt 2>&1
  echo "== after_product run $i rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/after_product_$i.txt)"
done
grep -h "^FAILED" $OUT/after_product_*.txt | sort | uniq -c
timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_attention_kernels.py \
  > $OUT/attention_gpu.txt 2>&1
echo "== attention GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/attention_gpu.txt)"
grep -E "^(FAILED|ERROR)" $OUT/attention_gpu.txt | head -10
