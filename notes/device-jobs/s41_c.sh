# Prepared in session 40 for session 41 (not run), after s41_a.sh (if next/gemm-scaled merges
# there, its kernel table should choose the tilings again first: this one was main's): the
# tiling by shape (branch next/gemm-tilings, notes/patches/gemm-tilings.patch: 1 x 8 warps with two row tiles past 4096
# columns, two row tiles above 8 rows of the 6144- and 28672-row shapes; session 40's kernel
# table chose them, the engine has not timed them), against main's one tiling, in the engine.
# Before the call, in the checkout the device tool sends:
#   git checkout --detach next/gemm-tilings && mkdir -p mainkern/vexel_core/quant/kernels &&
#   git show main:vexel_core/quant/kernels/library.py > mainkern/vexel_core/quant/kernels/library.py &&
#   bash notes/device-jobs/tree_slim.sh out
# (library.py is the only runtime file the branch changes). Carry [".devkit/wheels",
# ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s41_a.sh
# Also runs main's GPU tests not yet run on a GPU: the gated mode at 2 rows (main since session
# 40's GEMM_ROWS = 2-16), and the branch's defaults at 5120 columns (1 x 8, two row tiles).
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
  tests/test_gemm_packed.py tests/test_feed_forward.py > $OUT/gpu_tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR) " $OUT/gpu_tests.txt | cut -c1-220 | head -6
B="bench --random llama3-8b --dtype q4_0 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
engine() {  # NAME: Vexel at 2, 8 and 16 requests (the bench warms up at the workload's count)
  for n in 8 16 2; do
    timeout 80 vexel $B -n $n --json-out $OUT/$1-b$n.json > $OUT/$1-b$n.txt 2>&1
    echo "== $1, $n requests: rc $? after $(( $(date +%s) - t0 )) s"
    grep -E "generated tok/s|TTFT|ITL|rror" $OUT/$1-b$n.txt | sed 's/│//g' | tr -s ' '
  done
}
engine tilings
cp -r mainkern/. .
engine main
