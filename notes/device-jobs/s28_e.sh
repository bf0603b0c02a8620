# Session 28, call E: the paged decode's prologue in two round trips, as call D's SASS asked:
# each batch's loads fenced by __syncwarp and unconditional (call B's profile: ~12 dependent
# ones, half the kernel at one request; call C's first version had kept ~5). Its GPU tests, then its GPU time against the
# old kernel's, alternated in separate processes (benchmarks/attention_ncu.py --time: one
# request's launch, packed heads, rotation, the write; L2 flushed between passes). The old
# kernel's two files travel in .ab_old (ignored by git).
# Carry [".devkit/wheels", ".devkit/setup.sh", ".ab_old"].
#   source .devkit/setup.sh && bash notes/device-jobs/s28_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_attention_kernels.py \
  > $OUT/gpu_attention.txt 2>&1
echo "== attention GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_attention.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_attention.txt | head -10
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_decode.txt 2>&1
echo "== compiled decode rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_decode.txt)"
K=vexel_core/attention/kernels/cuda
mkdir -p /tmp/new && cp $K/paged_decode_kernel.cuh $K/paged_decode.cu /tmp/new/
for round in 1 2; do
  for arm in new old; do
    if [ $arm = new ]; then cp /tmp/new/* $K/; else cp .ab_old/* $K/; fi
    echo "-- round $round, $arm"
    timeout 90 python3 benchmarks/attention_ncu.py --contexts 128 256 384 1024 --time 5 2>&1 \
      | grep -E "context|rror" | tee -a $OUT/ab.txt
  done
done
cp /tmp/new/* $K/
echo "== after $(( $(date +%s) - t0 )) s"
for arm in c128:8; do
  IFS=: read -r name skip <<< "$arm"
  timeout 200 ncu --clock-control none --set full --import-source no -k regex:vx_paged_decode \
    --launch-skip $skip -c 2 -f -o /tmp/$name \
    python3 benchmarks/attention_ncu.py --contexts 128 384 > /tmp/$name.log 2>&1
  echo "== $name: ncu rc $? after $(( $(date +%s) - t0 )) s"; grep -E "context|rror" /tmp/$name.log | cut -c1-200
  ncu -i /tmp/$name.ncu-rep --page details --print-details all > $OUT/$name-details.txt 2>&1
  ncu -i /tmp/$name.ncu-rep --page source --csv --print-source sass > $OUT/$name-sass.csv 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Grid Size|Block Size" \
    $OUT/$name-details.txt | head -14
done
gzip $OUT/*-sass.csv
