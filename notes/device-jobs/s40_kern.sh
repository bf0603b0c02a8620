# Session 40: three versions of gemm_packed in one call, kernels only (CUPTI, gemm_packed.py):
# the tree (branch next/gemm-two-acc: two accumulators, gated mode), then swapkern/ (branch
# next/gemm-swap: the weights as A, 16 rows a tile), then mainkern/ (main). GPU tests of the
# first two.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
arm() {  # NAME [FILES]: FILES' tree over this one, then its tests and kernel times
  [ -n "${2:-}" ] && cp -r "$2"/. .
  if [ "$1" != main ]; then
    timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
      tests/test_gemm_packed.py > $OUT/$1-tests.txt 2>&1
    echo "== $1 tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/$1-tests.txt)"
    grep -E "^(FAILED|ERROR) " $OUT/$1-tests.txt | cut -c1-220 | head -6
  fi
  (cd benchmarks && timeout 110 python3 -u gemm_packed.py --rows 3,4,8,12,16) > $OUT/$1-kern.txt 2>&1
  echo "== $1 gemm_packed.py rc $? after $(( $(date +%s) - t0 )) s"
  grep -v -i warn $OUT/$1-kern.txt | tail -21
}
arm two
arm swap swapkern
arm main mainkern
