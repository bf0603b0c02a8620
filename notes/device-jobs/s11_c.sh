# Session 11, call C: (1) the packed kernel's round two again (call B's run failed to compile:
# the PIPE template argument had gone to gemv_int8's launch instead of gemv_packed's; the nvcc
# test now declares exactly what the library passes), (2) main's compiled-decode and
# attention-kernel GPU suites, which printed no summary in session 10's call D.
#   source .devkit/setup.sh && bash notes/device-jobs/s11_c.sh      (carry .devkit's wheels, wt)
# $OUT: packed.tgz, main-tests.txt.
: "${OUT:?set OUT to the output folder}"
root=$PWD
tree() {  # as in s11_a.sh: /tmp/NAME, main's tree with wt/NAME over it, installed
  rm -rf /tmp/$1 && mkdir -p /tmp/$1
  tar -C "$root" --exclude=./wt --exclude=./.devkit -cf - . | tar -C /tmp/$1 -xf -
  cp -a "$root/wt/$1/." /tmp/$1/
  (cd /tmp/$1 && python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile -e . \
     > /tmp/$1-install.log 2>&1) || { echo "$1: install failed"; tail -5 /tmp/$1-install.log; }
}
export VEXEL_CACHE=/tmp/vx

tree packed
mkdir -p /tmp/packed-out
(cd /tmp/packed && OUT=/tmp/packed-out bash notes/device-jobs/packed_check.sh)
tar -czf $OUT/packed.tgz -C /tmp/packed-out .

cd "$root" && python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile -e . > /dev/null 2>&1
for t in test_compiled_decode test_attention_kernels; do
  timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/$t.py > /tmp/t.txt 2>&1
  echo "$t (rc $?): $(tail -1 /tmp/t.txt)"; cat /tmp/t.txt >> $OUT/main-tests.txt
done
