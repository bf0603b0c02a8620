# Session 40, second call: three versions of gemm_packed, kernels (CUPTI, gemm_packed.py) and
# the engine at 8 requests, in one call: the tree (next/gemm-two-acc), swapkern/
# (next/gemm-swap), mainkern/ (main, and main's --no-gemm). Tests ran in s40_kern.sh.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
B="bench --random llama3-8b --dtype q4_0 -n 8 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
engine() {  # NAME [ab.py flags]
  timeout 80 python3 benchmarks/ab.py ${2:-} $B > $OUT/$1-b8.txt 2>&1
  echo "== $1 engine, 8 requests: rc $? after $(( $(date +%s) - t0 )) s"
  grep -E "generated tok/s|ITL|rror" $OUT/$1-b8.txt | sed 's/│//g' | tr -s ' '
}
arm() {  # NAME [FILES]: FILES' tree over this one, then its kernel times and the engine
  [ -n "${2:-}" ] && cp -r "$2"/. .
  (cd benchmarks && timeout 100 python3 -u gemm_packed.py --rows 3,4,8,12,16) > $OUT/$1-kern.txt 2>&1
  echo "== $1 gemm_packed.py rc $? after $(( $(date +%s) - t0 )) s"
  grep -v -i warn $OUT/$1-kern.txt | tail -21
  engine $1
}
arm two
arm swap swapkern
arm main mainkern
engine main-nogemm --no-gemm
