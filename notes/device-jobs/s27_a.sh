# Planned for session 27 (written in session 26), call A, on the branch next/merge-in-kernel
# (`git checkout next/merge-in-kernel` first: the device runs the working tree; or apply
# notes/patches/merge-in-kernel.patch to main). The branch merges a split context's spans
# inside the paged decode kernel on CUDA (no merge launch) and, since session 26, takes
# session 25's grid's shapes: one 8-warp span up to 256 tokens, 16-warp spans of 128 tokens
# beyond. Its GPU tests, then the step alternated against main's shapes (`--long-spans`) in
# one process at the bench's contexts (128-384 tokens) and at a long one (1,024-1,280, where
# main launches the merge kernel in every layer). Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s27_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 170 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_attention_kernels.py \
  > $OUT/gpu_attention.txt 2>&1
echo "== attention GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_attention.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_attention.txt | head -20
timeout 190 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --long-spans \
  > $OUT/alternate-128.txt 2>&1
echo "== alternate, 128-token prompt, rc $? after $(( $(date +%s) - t0 )) s"; tail -6 $OUT/alternate-128.txt
timeout 200 python3 benchmarks/alternate.py --rounds 8 --prompt 1024 --tokens 256 --long-spans \
  > $OUT/alternate-1024.txt 2>&1
echo "== alternate, 1024-token prompt, rc $? after $(( $(date +%s) - t0 )) s"; tail -6 $OUT/alternate-1024.txt
echo "== done after $(( $(date +%s) - t0 )) s"
