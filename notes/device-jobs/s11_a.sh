# Session 11, call A (fresh machine): the two branches never run on a GPU, each in its own copy
# of the tree (main's files with the branch's changed files over them, carried in wt/NAME: the
# whole tree twice would pass the 64 MiB a call may carry).
#   1. branch next/packed-q4_0: notes/device-jobs/packed_check.sh (~300 s): its GPU tests, then
#      Nsight Compute on gemv_int8's Q4_0 default and the packed candidates at both shapes.
#   2. branch next/gated-gate-up: the gated mode's GPU tests (gated_check.sh's step 1, 140 s).
# Run from the root, with .devkit and wt carried:
#   source .devkit/setup.sh && bash notes/device-jobs/s11_a.sh
# $OUT gets packed.tgz and gated-tests.txt (8 files at most come back).
: "${OUT:?set OUT to the output folder}"
source notes/device-jobs/branch_tree.sh  # tree NAME, main_again

tree packed
mkdir -p /tmp/packed-out
(cd /tmp/packed && OUT=/tmp/packed-out bash notes/device-jobs/packed_check.sh)
tar -czf $OUT/packed.tgz -C /tmp/packed-out .

tree gated
cd /tmp/gated
timeout 140 python3 -m pytest -q -p no:cacheprovider --tb=short -rP tests/test_quant_kernels.py \
  -k "gated and not emulated" > $OUT/gated-tests.txt 2>&1
rc=$?
echo "gated tests (rc $rc): $(grep -E '[0-9]+ (passed|failed|error)' $OUT/gated-tests.txt | sed -n '$p')"
echo "  comparisons with the unfused path: $(grep -c 'of outputs equal' $OUT/gated-tests.txt)," \
  "lowest $(grep -oE '[0-9.]+ of outputs equal' $OUT/gated-tests.txt | sort -n | sed -n 1p)"
main_again; cd "$root"
