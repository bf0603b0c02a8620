# Session 38, call B: the paged decode's first table entries in round trip 1 (branch
# next/pd-table). Its GPU tests, its GPU time against main's kernel (attention_ncu.py --time,
# alternated in separate processes, the old sources copied in), and the step against main's
# kernel in one process (alternate.py --old-attention). The old kernel's sources travel in
# .ab_old/attention/cuda (untracked: `git show main:...` of vexel_core/attention/kernels/cuda).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s38_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_attention_kernels.py \
  > $OUT/gpu_attention.txt 2>&1
echo "== attention GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_attention.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_attention.txt | head -10
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_decode.txt 2>&1
echo "== compiled decode rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_decode.txt)"
K=vexel_core/attention/kernels/cuda
mkdir -p /tmp/new && cp $K/* /tmp/new/
for round in 1 2; do
  for arm in new old; do
    rm -f $K/*; if [ $arm = new ]; then cp /tmp/new/* $K/; else cp .ab_old/attention/cuda/* $K/; fi
    echo "-- round $round, $arm" >> $OUT/ab.txt
    timeout 90 python3 benchmarks/attention_ncu.py --contexts 128 256 384 1024 --time 5 \
      >> $OUT/ab.txt 2>&1
  done
done
rm -f $K/*; cp /tmp/new/* $K/
grep -E "^--|context" $OUT/ab.txt
echo "== after $(( $(date +%s) - t0 )) s"
timeout 240 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --old-attention \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"
tail -4 $OUT/alternate.txt
