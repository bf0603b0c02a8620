# Planned for session 32 (written in session 31), branch next/pending-norm (or `git apply
# notes/patches/pending-norm.patch` on main): the output product's norm left to the
# feed-forward kernel, now also in the engine (PreNormBlock.leave: gemv_add_sums, then
# feed_forward on the PendingNorm where GatedMLP.reads_pending_norm says so). Calls D-E of
# session 31 found the product 2.1 us shorter and the feed-forward kernel 2.2-2.5 us longer,
# the reader's h and norm weight read after the kernel's first weight loads. Suspected: the
# norm's weight comes from DRAM behind those loads. Now the reader asks h and w into L1
# before them (prefetch_input) and the producer asks the weight into L2 (add_norm_sums).
# GPU tests (the kernels', the block's two routes bit for bit, the compiled decode's), then
# pending_norm.py, then the engine alternated against ab.py --epilogue-norm; Nsight Compute on
# both feed-forward kernels if time is left.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   git checkout next/pending-norm && source .devkit/setup.sh && bash notes/device-jobs/s32_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  tests/test_quant_kernels.py -k "pending or add_norm or norm_left" > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_tests.txt | head -10
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_tests.txt 2>&1
echo "== compiled decode tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_tests.txt)"
(cd benchmarks && timeout 120 python3 pending_norm.py --rounds 4 2>&1) | grep -v -i warn \
  | tee $OUT/pending_norm.txt
echo "== pending_norm.py rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
timeout 150 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --epilogue-norm \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/alternate.txt
# If the pending arm is still slower: where the reader's time goes, Nsight Compute's warp
# samples on one launch of each feed-forward kernel (the 5th: past the check and compiles).
[ $(( $(date +%s) - t0 )) -gt 420 ] && exit 0
for arm in epilogue:feed_forward_bfloat16 pending:feed_forward_pending; do
  IFS=: read -r name kernel <<< "$arm"
  (cd benchmarks && timeout 70 ncu --clock-control none --set full --import-source no \
    -k regex:vx_$kernel --launch-skip 4 -c 1 -f -o /tmp/$name \
    python3 pending_norm.py --untimed 2 --arm $name > /tmp/$name.log 2>&1)
  echo "== $name: ncu rc $? after $(( $(date +%s) - t0 )) s"
  ncu -i /tmp/$name.ncu-rep --page details --print-details all > $OUT/$name-details.txt 2>&1
  ncu -i /tmp/$name.ncu-rep --page source --csv --print-source sass > $OUT/$name-sass.csv 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy" $OUT/$name-details.txt | head -4
done
gzip $OUT/*-sass.csv
