# Session 23, call F (main, the whole step compiled): which side sets the pace now. The CUPTI
# timeline of one Q4_0 request (GPU busy against the span, top kernels), then host_build.py
# (the build's pieces, async_eval's submit of one step, the build's profile).
#   source .devkit/setup.sh && bash notes/device-jobs/s23_f.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --cache-dir /tmp/vx"
timeout 200 python3 benchmarks/gpu_timeline.py --top 20 -- $W > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; tail -34 $OUT/timeline.txt | cut -c1-160
timeout 120 python3 benchmarks/host_build.py > $OUT/host_build.txt 2>&1
echo "== host_build rc $? after $(( $(date +%s) - t0 )) s"; head -16 $OUT/host_build.txt | cut -c1-160
