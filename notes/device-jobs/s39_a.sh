# Prepared in session 38 for session 39 (not run): the paged decode's two prepared changes,
# each timed in the engine within one process (alternate.py --old-attention).
#   notes/patches/pd-rt1.patch     round trip 1 in one batch: the guessed table entries first,
#                                  q's loads unconditional below 16 warps (session 38's
#                                  profile, call D: the guessed entries waited for ctx)
#   notes/patches/pd-values8.patch on top of it: the value rows raw and fenced below 16 warps
#                                  (call C's fenced batch everywhere was level: faster at 128
#                                  tokens, slower at 384 with 16 warps)
# Before the call (CPU tests of both pass: tests/test_attention_kernels.py):
#   git checkout -b next/pd-rt1 main && git apply notes/patches/pd-rt1.patch && git commit -qam rt1
#   git checkout -b next/pd-values8 && git apply notes/patches/pd-values8.patch && git commit -qam v8
#   K=vexel_core/attention/kernels/cuda
#   for arm in main next/pd-rt1; do d=.ab_$(basename $arm); mkdir -p $d/attention/cuda
#     for f in $(git ls-tree --name-only $arm $K/); do git show $arm:$f > $d/attention/cuda/${f##*/}; done
#   done
#   bash notes/device-jobs/tree_slim.sh out   # (and `back` after)
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s39_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
bash notes/device-jobs/gpu_tests.sh "150 tests/test_attention_kernels.py -m gpu" \
  "120 tests/test_compiled_decode.py"
for old in main pd-rt1; do  # this tree (both changes) against main, then against rt1 alone
  rm -rf .ab_old && cp -r .ab_$old .ab_old
  timeout 120 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --old-attention \
    > $OUT/alternate-$old.txt 2>&1
  echo "== against $old: rc $? after $(( $(date +%s) - t0 )) s"
  grep -E "median|greedy" $OUT/alternate-$old.txt
done
