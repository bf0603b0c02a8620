# Session 14, calls 3 and 4 on one warm machine (main with next/q4k-wide-smem merged and the
# new gemv_int8 defaults at 4,096 columns: Q4_K 4/2/4/1188, Q6_K 4/2/4/924).
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"].
#   source .devkit/setup.sh && bash notes/device-jobs/s14_a.sh 1    (fresh machine, ~520 s)
#   source .devkit/setup.sh && bash notes/device-jobs/s14_a.sh 2    (at once after, ~330 s)
# 1: llama.cpp built (kept in /tmp/lc for call 2) while the GPU tests of the new defaults, the
#    gated mode and the compiled decode run beside it (correctness only); then, with nothing
#    else running, the plain product's tilings against each other under Nsight Compute, in
#    both orders (the sweep of call 1 ranked them; this confirms the defaults).
# 2: one Q4_0 request (128 + 256 tokens) in Vexel and mlx-lm, then llama.cpp on the same file;
#    then the gated gate/up product's tilings (Llama's 2 x 14336 x 4096) under Nsight Compute.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx
t0=$(date +%s)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
ab() {  # ab NAME TILINGS [ARGS...]: one ncu run of the plain or gated product at 4,096 columns
  local name=$1 tilings=$2; shift 2
  timeout 100 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
    python3 benchmarks/kernel_ncu.py --int8-sweep --cols 4096 --formats Q4_0,Q4_K,Q6_K \
    --launches 3 --tilings "$tilings" --map $OUT/map-$name.tsv "$@" > $OUT/ncu-$name.csv 2>&1
  echo "== $name: ncu rc $? after $(( $(date +%s) - t0 )) s"
  python3 benchmarks/ncu_summary.py $OUT/ncu-$name.csv --map $OUT/map-$name.tsv | cut -c1-150
}
case "$1" in
1)
  (timeout 380 bash .devkit/peers/llamacpp.sh > /tmp/lc/build-run.log 2>&1
   echo "llama.cpp build rc $? after $(( $(date +%s) - t0 )) s") &
  K="gguf_kernel and (offset or ((Q4_K or Q6_K) and default)) or (gated and not emulated)"
  timeout 370 python3 -m pytest -q -p no:cacheprovider --tb=short -rP \
    tests/test_quant_kernels.py tests/test_linear.py tests/test_compiled_decode.py \
    -k "$K or compiled or Gated" > $OUT/tests.txt 2>&1
  echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
  grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,10p
  wait
  ab plain-a 4/2/4/792,4/2/4/1188,4/2/4/924
  ab plain-b 4/2/4/924,4/2/4/1188,4/2/4/792
  (cd $OUT && tar -cJf ncu-plain.tar.xz ncu-*.csv map-*.tsv && rm -f ncu-*.csv map-*.tsv)
  ;;
2)
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 200 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
    > $OUT/bs1.txt 2>&1
  echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
  [ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1
  echo "llama.cpp rc $? after $(( $(date +%s) - t0 )) s"; grep -E "tg128|pp512|^\| +512 \| +128 \| +1 " $OUT/llamacpp-q4_0.log
  ab gated-a 4/2/4/792,4/2/4/1188,4/2/4/924 --act silu
  ab gated-b 4/2/4/924,4/2/4/1188,4/2/4/792 --act silu
  (cd $OUT && tar -cJf ncu-gated.tar.xz ncu-*.csv map-*.tsv && rm -f ncu-*.csv map-*.tsv)
  ;;
esac
