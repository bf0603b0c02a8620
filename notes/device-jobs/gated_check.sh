# gemv_int8's gated mode (branch next/gated-gate-up) on a GPU for the first time: act(gate) * up
# of the fused gate/up weight in one launch, instead of the plain product, a split and MLX's
# compiled act(g) * u. Before this call it ran only in the CPU emulation and compiled offline
# (nvcc 13: every ACT, XREG and activation dtype at the 4/2/4 tiling).
#   source .devkit/setup.sh && bash notes/device-jobs/gated_check.sh     ($OUT: output folder)
# What it measures, one step after the other, each under its own limit (380 s of limits, plus
# ~40 s to start a fresh machine). Each step prints a short summary and keeps its whole output
# in a file (six files under $OUT: tests.txt, bench.txt, timeline-fused.txt,
# timeline-unfused.txt, steps.txt, steps.tar.gz); nothing is piped through tail or head.
# 1. (140 s) Correctness: the gated mode's GPU tests (test_quant_kernels.py -k "gated and not
#    emulated"): against float64 on x rounded to int8, and against the unfused path (the plain
#    product, split, MLX's compiled act(g) * u) on NaN-poisoned outputs; "of outputs equal"
#    says how often the two agree to the bit. ~56 NVRTC variants take most of the time.
# 2. (2 x 55 s) Host time per token, A/B round one: one Q4_0 Llama-3-8B request (128 + 256
#    tokens), fused (the default) then unfused (benchmarks/ab.py --unfused-glu): generated
#    tok/s, ITL and the step medians (build: host time making a token's graph, which one node
#    instead of four per layer is meant to cut; interval: a token's time).
# 3. (2 x 65 s) GPU time, A/B round two: the same request (128 + 128 tokens), fused then
#    unfused, under PyTorch's profiler (benchmarks/gpu_timeline.py): kernel names, counts and
#    mean us, and step medians (the profiler slows both alike: compare within a round only).
#    Fused: the gated kernel (vx_gemv_int8_..._4096_f_1, ACT 1; 717 CTAs of 4 warps, 5 pairs a
#    warp at Llama's 14,336 pairs) 32 times a token, and no compiled act(g) * u kernel.
#    Unfused: the plain product of 28,672 rows (..._4096_f_0, also 717 CTAs, 10 rows a warp)
#    and that kernel (the split's slices are views: host time only). In the vx_gemv_int8 grid
#    table the gate/up product is the grid (717, 1, 1).
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/gated

timeout 140 python3 -m pytest -q -p no:cacheprovider --tb=short -rP tests/test_quant_kernels.py \
  -k "gated and not emulated" > $OUT/tests.txt 2>&1
rc=$?
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
for name in fused-1 unfused-1; do
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
  --trace-steps /tmp/gated/steps-fused-2.jsonl > $OUT/timeline-fused.txt 2>&1
echo "3 fused under the profiler (rc $?): $(grep -E '^span' $OUT/timeline-fused.txt)"
echo "  $(steps fused-2)"
# the same through ab.py's switch, in the timeline's process
timeout 65 python3 -c "import runpy, sys; sys.path.insert(0, 'benchmarks'); import ab; ab.unfused_glu(); sys.argv = ['gpu_timeline.py', *'$T -- $B --output-len 128 --trace-steps /tmp/gated/steps-unfused-2.jsonl'.split()]; runpy.run_path('benchmarks/gpu_timeline.py', run_name='__main__')" > $OUT/timeline-unfused.txt 2>&1
echo "3 unfused under the profiler (rc $?): $(grep -E '^span' $OUT/timeline-unfused.txt)"
echo "  $(steps unfused-2)"
for f in fused unfused; do
  # (MLX names a fused kernel by its primitives: SiLU's act(g) * u shows as Sigmoid)
  echo "== $f: int8 products and SiLU's kernel (total ms, count, mean us), vx_gemv_int8 grids"
  grep -E "vx_gemv_int8|Sigmoid|launches;|  grid" $OUT/timeline-$f.txt | cut -c1-140 | sed -n 1,16p
done
tar -czf $OUT/steps.tar.gz -C /tmp/gated $(cd /tmp/gated && ls steps-*.jsonl 2>/dev/null) 2>/dev/null
