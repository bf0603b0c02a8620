# Session 29, call A (main at 28751ed, with the two prepared branches' kernel files in .ab_old,
# ignored by git): next/prologue-q (q kept raw until after round trip 1's fence) and
# next/two-lanes (two lanes a token), each rebased on main. Each variant's attention GPU
# tests, then one request's launch (benchmarks/attention_ncu.py --time: CUPTI median, L2
# flushed between passes) for main, pq and tl alternated in separate processes, then batches
# (decode_attention.py with the write) for main and tl, where 16-token chunks cost more
# shuffles a token.
# Before the call: for v in main:main pq:next/prologue-q tl:next/two-lanes; do
#   mkdir -p .ab_old/${v%%:*}; git show ${v#*:}:vexel_core/attention/kernels/cuda/FILE > ...
# for FILE in paged_decode_kernel.cuh and paged_decode.cu.
# Carry [".devkit/wheels", ".devkit/setup.sh", ".ab_old"].
#   source .devkit/setup.sh && bash notes/device-jobs/s29_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
K=vexel_core/attention/kernels/cuda
for v in pq tl; do
  cp .ab_old/$v/* $K/
  timeout 170 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_attention_kernels.py \
    > $OUT/gpu_attention_$v.txt 2>&1
  echo "== $v: attention GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_attention_$v.txt)"
  grep -E "^(FAILED|ERROR)" $OUT/gpu_attention_$v.txt | head -10
done
for arm in main pq tl main pq tl; do
  cp .ab_old/$arm/* $K/
  echo "-- $arm" | tee -a $OUT/ab.txt
  timeout 50 python3 benchmarks/attention_ncu.py --contexts 128 256 384 --time 5 2>&1 \
    | grep -E "context|rror" | tee -a $OUT/ab.txt
done
echo "== after $(( $(date +%s) - t0 )) s"
for arm in main tl main tl; do
  [ $(( $(date +%s) - t0 )) -gt 500 ] && break
  cp .ab_old/$arm/* $K/
  echo "-- $arm" | tee -a $OUT/batches.txt
  timeout 45 python3 benchmarks/decode_attention.py --batches 4 16 --contexts 512 2048 --write \
    --pool-mb 256 2>&1 | tail -8 | tee -a $OUT/batches.txt
done
cp .ab_old/main/* $K/
echo "== after $(( $(date +%s) - t0 )) s"
