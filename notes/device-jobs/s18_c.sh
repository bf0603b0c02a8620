# Session 18, call C: why call B's normed arm made the GPU the pace (wait 0.3-0.7 ms a token,
# interval 3.34-3.43 ms against the separate norm's 2.85-2.88, while its build + submit fell
# by ~0.28 ms as expected): the CUPTI timeline of one request in each arm, per kernel; then
# the normed mode's remaining GPU tests (call B's 200 s cut them).
#   source .devkit/setup.sh && bash notes/device-jobs/s18_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx MLX_MAX_OPS_PER_BUFFER=400 MLX_MAX_MB_PER_BUFFER=100000
t0=$(date +%s)
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 150 python3 benchmarks/gpu_timeline.py --top 14 -- $W > $OUT/timeline-normed.txt 2>&1
echo "== normed timeline rc $? after $(( $(date +%s) - t0 )) s"; tail -22 $OUT/timeline-normed.txt
timeout 100 python3 -c "
import runpy, sys
sys.path.insert(0, 'benchmarks')
import ab
ab.separate_norm()
sys.argv = ['gpu_timeline.py', '--top', '14', '--', *sys.argv[1:]]
runpy.run_path('benchmarks/gpu_timeline.py', run_name='__main__')
" $W > $OUT/timeline-separate.txt 2>&1
echo "== separate timeline rc $? after $(( $(date +%s) - t0 )) s"; tail -22 $OUT/timeline-separate.txt
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemv_normed.py \
  -k "two_launches or decode_with or (Q4_0 and bfloat16-plain)" > $OUT/tests-normed.txt 2>&1
echo "== normed GPU tests rc $? after $(( $(date +%s) - t0 )) s"; tail -6 $OUT/tests-normed.txt
