# Branch next/bodies-in-headers on a GPU for the first time (~450 s on a fresh machine): the
# paged decode's and add_rms_norm's algorithms moved from their kernel bodies (10.4 and 2.8
# KB, text MLX copies on every launch) into headers included by path, the bodies one call.
# Session 6 measured ~0.3 us a KB a launch (benchmarks/custom_kernel_cost.py); expected ~3 us
# a layer for the paged decode and ~0.9 us for each of two add_rms_norm launches: ~0.15 ms a
# token. Make wt/bodies from the branch (next_session.sh says how), carry
# [".devkit/wheels", ".devkit/setup.sh", "wt"], then
#   source .devkit/setup.sh && source notes/device-jobs/branch_tree.sh && tree bodies \
#     && cd /tmp/bodies && bash notes/device-jobs/bodies_ab.sh
# 1. The GPU tests of the two kernels (attention: plain and writing at one and three spans;
#    norm), on the new structure. 2. ab_rounds.sh: the branch against `ab.py --long-bodies`
#    (the same code with the bodies padded back to their old length), one Q4_0 request.
# What decides: the tests pass and the short bodies' median step is shorter in every round.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_attention_kernels.py \
  tests/test_norm_kernels.py -k "not emulated and ((writing and device) or norm)" \
  > $OUT/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,10p
bash notes/device-jobs/ab_rounds.sh "vexel" "python3 benchmarks/ab.py --long-bodies"
