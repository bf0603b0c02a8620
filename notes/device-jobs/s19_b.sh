# Session 19, call B: the paged decode's head parts in the engine (call A's kernel benchmark,
# L2 flushed, no cache write: one request at 128-512 tokens 1-3 us a layer faster, four
# requests 0.5-1.5 us slower). The CUPTI timeline of one request in each arm (the engine's
# kernel writes the cache too and took 17.7 us a layer in session 18, against ~12 in the
# benchmark), then alternated rounds.
#   source .devkit/setup.sh && bash notes/device-jobs/s19_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 150 python3 benchmarks/gpu_timeline.py --top 12 -- $W > $OUT/timeline-parts.txt 2>&1
echo "== head parts timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline-parts.txt | cut -c1-130
timeout 100 python3 -c "
import runpy, sys
sys.path.insert(0, 'benchmarks')
import ab
ab.whole_kv_heads()
sys.argv = ['gpu_timeline.py', '--top', '12', '--', *sys.argv[1:]]
runpy.run_path('benchmarks/gpu_timeline.py', run_name='__main__')
" $W > $OUT/timeline-whole.txt 2>&1
echo "== whole KV heads timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline-whole.txt | cut -c1-130
bash notes/device-jobs/arms_rounds.sh 3 "vexel" "python3 benchmarks/ab.py --whole-kv-heads"
