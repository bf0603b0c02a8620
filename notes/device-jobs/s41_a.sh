# Prepared in session 40 for session 41 (not run): main's gemm_packed against branch
# next/gemm-scaled (notes/patches/gemm-scaled.patch: q - 8 exact in x's type, each block's
# two mma scaled by d in float32 after, ~260 instructions a warp's round against main's ~400),
# in one call: main's GPU tests not yet run on a GPU (the gated mode at 2 rows), main's
# kernel table and engine at 8 and 16 requests; then the branch's GPU tests, kernel table and
# engine. Before the call, in the checkout the device tool sends (on main):
#   mkdir -p sckern && git archive next/gemm-scaled vexel_core/quant/kernels tests/test_gemm_packed.py | tar x -C sckern &&
#   bash notes/device-jobs/tree_slim.sh out
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s41_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
B="bench --random llama3-8b --dtype q4_0 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
arm() {  # NAME TESTS...: GPU tests, gemm_packed.py at 2, 8, 16 rows, Vexel at 8 and 16 requests
  name=$1; shift
  timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu "$@" \
    > $OUT/$name-tests.txt 2>&1
  echo "== $name tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/$name-tests.txt)"
  grep -E "^(FAILED|ERROR) " $OUT/$name-tests.txt | cut -c1-220 | head -6
  (cd benchmarks && timeout 100 python3 -u gemm_packed.py --rows 2,8,16) > $OUT/$name-kern.txt 2>&1
  echo "== $name gemm_packed.py rc $? after $(( $(date +%s) - t0 )) s"
  grep -v -i warn $OUT/$name-kern.txt | tail -13
  for n in 8 16; do
    timeout 80 vexel $B -n $n --json-out $OUT/$name-b$n.json > $OUT/$name-b$n.txt 2>&1
    echo "== $name, $n requests: rc $? after $(( $(date +%s) - t0 )) s"
    grep -E "generated tok/s|TTFT|ITL|rror" $OUT/$name-b$n.txt | sed 's/│//g' | tr -s ' '
  done
}
arm main tests/test_gemm_packed.py tests/test_feed_forward.py
cp -r sckern/. .
arm scaled tests/test_gemm_packed.py
