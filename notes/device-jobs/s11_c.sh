# Session 11, call C: (1) the packed kernel's round two again (call B's run failed to compile:
# the PIPE template argument had gone to gemv_int8's launch instead of gemv_packed's; the nvcc
# test now declares exactly what the library passes), (2) main's compiled-decode and
# attention-kernel GPU suites, which printed no summary in session 10's call D.
#   source .devkit/setup.sh && bash notes/device-jobs/s11_c.sh      (carry .devkit's wheels, wt)
# $OUT: packed.tgz, main-tests.txt.
: "${OUT:?set OUT to the output folder}"
source notes/device-jobs/branch_tree.sh  # tree NAME, main_again
export VEXEL_CACHE=/tmp/vx

tree packed
mkdir -p /tmp/packed-out
(cd /tmp/packed && OUT=/tmp/packed-out bash notes/device-jobs/packed_check.sh)
tar -czf $OUT/packed.tgz -C /tmp/packed-out .

main_again; cd "$root"
for t in test_compiled_decode test_attention_kernels; do
  timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/$t.py > /tmp/t.txt 2>&1
  echo "$t (rc $?): $(tail -1 /tmp/t.txt)"; cat /tmp/t.txt >> $OUT/main-tests.txt
done
