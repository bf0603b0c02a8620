# gemv_int8's gated mode (branch next/gated-gate-up): act(gate) * up of the fused gate/up
# weight in one launch, instead of the plain product, a split and MLX's compiled act(g) * u.
# Session 11 (call B) ran its GPU tests (73 passed) and one A/B round, fused first, inside the
# noise (notes/gpu-kernels.md, "Session 11").
#   source .devkit/setup.sh && bash notes/device-jobs/gated_check.sh     ($OUT: output folder)
#   GATED_TESTS=0 skips step 1 (unchanged code since session 11): ~350 s instead of ~550.
# Each step prints a short summary and keeps its whole output in a file (six files under $OUT:
# tests.txt, bench.txt, timeline-fused.txt, timeline-unfused.txt, steps.txt, steps.tar.gz);
# nothing is piped through tail or head. Plus ~40 s to start a fresh machine.
# 1. (250 s; 130 s in session 11) Correctness: the gated mode's GPU tests (test_quant_kernels.py
#    -k "gated and not emulated"): against float64 on x rounded to int8, and against the
#    unfused path on NaN-poisoned outputs; "of outputs equal" says how often the two agree to
#    the bit. ~56 NVRTC variants take most of the time.
# 2. (4 x 55 s) Host time per token, A/B alternated fused, unfused, unfused, fused: one Q4_0
#    Llama-3-8B request (128 + 256 tokens) by `vexel bench`, and by benchmarks/ab.py
#    --unfused-glu for main's path: generated tok/s, ITL and the step medians (build: host time
#    making a token's graph; submit: inside mx.async_eval, ~4.5 us a custom kernel; interval:
#    a token's time).
# 3. (2 x 65 s) GPU time: the same request (128 + 128 tokens), fused then unfused, under
#    PyTorch's profiler (benchmarks/gpu_timeline.py): kernel names, counts and mean us (the
#    profiler slows both alike: compare within this step only). Fused: the gated kernel
#    (vx_gemv_int8_..._4096_f_1, ACT 1; 717 CTAs of 4 warps) 32 times a token and no compiled
#    act(g) * u kernel. Unfused: the plain product of 28,672 rows (..._4096_f_0) and that kernel.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/gated

if [ "${GATED_TESTS:-1}" = 1 ]; then
  timeout 250 python3 -m pytest -q -p no:cacheprovider --tb=short -rP tests/test_quant_kernels.py \
    -k "gated and not emulated" > $OUT/tests.txt 2>&1
  rc=$?
else
  echo "skipped (GATED_TESTS=0)" > $OUT/tests.txt; rc=skipped
fi
result=$(grep -E "[0-9]+ (passed|failed|error)" $OUT/tests.txt | sed -n '$p')
equal=$(grep -c "of outputs equal" $OUT/tests.txt)
lowest=$(grep -oE "[0-9.]+ of outputs equal" $OUT/tests.txt | sort -n | sed -n 1p)
echo "1 tests (rc $rc): ${result:-no summary}; $equal comparisons with the unfused path, lowest ${lowest:-none}"

# The step medians of run NAME, added to $OUT/steps.txt.
steps() {
  if [ -s /tmp/gated/steps-$1.jsonl ]; then
    python3 benchmarks/step_summary.py /tmp/gated/steps-$1.jsonl >> $OUT/steps.txt 2>&1
    sed -n '$p' $OUT/steps.txt
  else
    echo "steps-$1: no step trace"
  fi
}

B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --kv-cache-memory 16GiB"
# Alternated (session 11's single round, fused first, was inside the noise: 311.2 against
# 316.9 tok/s, median steps 2.99 against 3.08 ms).
for name in fused-1 unfused-1 unfused-2 fused-2; do
  case $name in
    fused-*) cmd="vexel" ;;
    unfused-*) cmd="python3 benchmarks/ab.py --unfused-glu" ;;
  esac
  touch $OUT/bench.txt
  start=$(($(wc -l < $OUT/bench.txt) + 1))
  echo "== $name: $cmd $B --output-len 256" >> $OUT/bench.txt
  timeout 55 $cmd $B --output-len 256 --trace-steps /tmp/gated/steps-$name.jsonl >> $OUT/bench.txt 2>&1
  rc=$?
  echo "2 $name (rc $rc):" $(sed -n "$start,\$p" $OUT/bench.txt | grep -E "generated tok/s|ITL p50" | sed 's/│//g' | tr -s ' ')
  echo "  $(steps $name)"
done

T="--bin-ms 50 --top 25 --where vx_gemv_int8"
timeout 65 python3 benchmarks/gpu_timeline.py $T -- $B --output-len 128 \
  --trace-steps /tmp/gated/steps-fused-prof.jsonl > $OUT/timeline-fused.txt 2>&1
echo "3 fused under the profiler (rc $?): $(grep -E '^span' $OUT/timeline-fused.txt)"
echo "  $(steps fused-prof)"
# the same through ab.py's switch, in the timeline's process
timeout 65 python3 -c "import runpy, sys; sys.path.insert(0, 'benchmarks'); import ab; ab.unfused_glu(); sys.argv = ['gpu_timeline.py', *'$T -- $B --output-len 128 --trace-steps /tmp/gated/steps-unfused-prof.jsonl'.split()]; runpy.run_path('benchmarks/gpu_timeline.py', run_name='__main__')" > $OUT/timeline-unfused.txt 2>&1
echo "3 unfused under the profiler (rc $?): $(grep -E '^span' $OUT/timeline-unfused.txt)"
echo "  $(steps unfused-prof)"
for f in fused unfused; do
  # (MLX names a fused kernel by its primitives: SiLU's act(g) * u shows as Sigmoid)
  echo "== $f: int8 products and SiLU's kernel (total ms, count, mean us), vx_gemv_int8 grids"
  grep -E "vx_gemv_int8|Sigmoid|launches;|  grid" $OUT/timeline-$f.txt | cut -c1-140 | sed -n 1,16p
done
tar -czf $OUT/steps.tar.gz -C /tmp/gated $(cd /tmp/gated && ls steps-*.jsonl 2>/dev/null) 2>/dev/null
