# Planned for session 29 (written in session 28), call A, on a prepared branch of the paged
# decode (next/prologue-q; then, in another call, next/two-lanes): the attention GPU tests,
# then its kernel against main's, alternated in separate processes
# (benchmarks/attention_ncu.py --time: one request's launch; L2 flushed between passes). For
# next/two-lanes also batches, where chunks of 16 tokens cost more shuffles a token: e.g.
# `decode_attention.py --batches 4 16 --contexts 512 2048 --write --pool-mb 256` on each side.
# Before the call, on the branch: mkdir -p .ab_old && for f in paged_decode_kernel.cuh
# paged_decode.cu; do git show main:vexel_core/attention/kernels/cuda/$f > .ab_old/$f; done
# (.ab_old is ignored through .git/info/exclude: add "/.ab_old/" there in a fresh checkout).
# Carry [".devkit/wheels", ".devkit/setup.sh", ".ab_old"].
#   source .devkit/setup.sh && bash notes/device-jobs/s29_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_attention_kernels.py \
  > $OUT/gpu_attention.txt 2>&1
echo "== attention GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_attention.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_attention.txt | head -10
K=vexel_core/attention/kernels/cuda
mkdir -p /tmp/new && cp $K/paged_decode_kernel.cuh $K/paged_decode.cu /tmp/new/
for arm in new old new old new old; do
  if [ $arm = new ]; then cp /tmp/new/* $K/; else cp .ab_old/* $K/; fi
  echo "-- $arm"
  timeout 70 python3 benchmarks/attention_ncu.py --contexts 128 256 384 --time 5 2>&1 \
    | grep -E "context|rror" | tee -a $OUT/ab.txt
done
cp /tmp/new/* $K/
echo "== after $(( $(date +%s) - t0 )) s"
