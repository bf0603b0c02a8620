# Session 28, call G (main at c342e73): benchmarks/attention_ncu.py as committed (its passes
# restructured for the linter after call E), and a third alternated round of the prologue
# change against the old kernel (.ab_old, ignored by git).
# Carry [".devkit/wheels", ".devkit/setup.sh", ".ab_old"].
#   source .devkit/setup.sh && bash notes/device-jobs/s28_g.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
K=vexel_core/attention/kernels/cuda
mkdir -p /tmp/new && cp $K/paged_decode_kernel.cuh $K/paged_decode.cu /tmp/new/
for arm in new old new old; do
  if [ $arm = new ]; then cp /tmp/new/* $K/; else cp .ab_old/* $K/; fi
  echo "-- $arm"
  timeout 70 python3 benchmarks/attention_ncu.py --contexts 128 256 384 --time 5 2>&1 \
    | grep -E "context|rror" | tee -a $OUT/ab.txt
done
cp /tmp/new/* $K/
echo "== after $(( $(date +%s) - t0 )) s"
