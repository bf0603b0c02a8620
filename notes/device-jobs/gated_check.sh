# gemv_int8's gated mode (branch next/gated-gate-up): never run on a GPU before this call.
#   source .devkit/setup.sh && bash notes/device-jobs/gated_check.sh     ($OUT: output folder)
# 1. Its GPU tests: against float64 (x rounded to int8), and against the unfused path (the
#    plain product, split, MLX's compiled act(g) * u) on NaN-poisoned outputs; "of outputs
#    equal" says how often the two agree to the bit. ~56 NVRTC variants on a fresh machine.
# 2. One Q4_0 request, fused (default) and unfused (benchmarks/ab.py --unfused-glu), alternating
#    three times; step medians of each (build = host time per token: the point of the change).
# 3. The GPU timeline of each (kernel names and counts): fused, the gated kernel
#    (vx_gemv_int8_..._1, 448 CTAs of 8 warps at Llama's 14,336 pairs) 32 times a token and no
#    compiled act(g) * u kernel; unfused, the plain product (..._0, 512 CTAs) and that kernel
#    (the split's two slices are views: host time only, in the step medians). Compare the
#    products' mean us: a gated warp streams 8 rows (4 pairs) where a plain one streams 7.
export VEXEL_CACHE=/tmp/vx
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=short -rP tests/test_quant_kernels.py \
  -k "gated and not emulated" > $OUT/gated-tests.txt 2>&1
grep -E "outputs equal|passed|failed|Error" $OUT/gated-tests.txt | tail -60
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
for round in 1 2 3; do
  timeout 150 vexel $B --trace-steps $OUT/steps-fused-$round.jsonl 2>&1 | grep -E "generated tok/s|rror" | sed "s/^/fused $round: /"
  timeout 150 python3 benchmarks/ab.py --unfused-glu $B --trace-steps $OUT/steps-unfused-$round.jsonl 2>&1 | grep -E "generated tok/s|rror" | sed "s/^/unfused $round: /"
done
python3 benchmarks/step_summary.py $OUT/steps-*.jsonl
T="--bin-ms 50 --top 25 --where vx_gemv_int8"
timeout 150 python3 benchmarks/gpu_timeline.py $T -- $B > $OUT/timeline-fused.txt 2>&1
# the same through ab.py's switch, in the timeline's process
timeout 150 python3 -c "import runpy, sys; sys.path.insert(0, 'benchmarks'); import ab; ab.unfused_glu(); sys.argv = ['gpu_timeline.py', *'$T -- $B'.split()]; runpy.run_path('benchmarks/gpu_timeline.py', run_name='__main__')" > $OUT/timeline-unfused.txt 2>&1
for f in fused unfused; do
  echo "== $f"; grep -E "^span|^ *[0-9.]+ +[0-9]+ |launches;|  grid" $OUT/timeline-$f.txt | cut -c1-160 | head -34
done
