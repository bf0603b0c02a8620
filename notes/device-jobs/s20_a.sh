# Session 20, call A: the one-step array and 16-byte tokens (notes/patches/one-step-array.patch
# applied). The paged decode's slow launches in order, the patch's path and main's (both
# changes undone through ab.py), then four alternated arms.
#   source .devkit/setup.sh && bash notes/device-jobs/s20_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
T="--top 3 --last 96 --where paged_decode --where rope_single"
timeout 150 python3 benchmarks/gpu_timeline.py $T -- $W > $OUT/timeline-new.txt 2>&1
echo "== one-step array timeline rc $? after $(( $(date +%s) - t0 )) s"
grep -A12 -E "paged_decode|rope_single" $OUT/timeline-new.txt | cut -c1-150 | head -40
timeout 100 python3 -c "
import runpy, sys
sys.path.insert(0, 'benchmarks')
import ab
ab.separate_step_arrays()
ab.tiny_tokens()
sys.argv = ['gpu_timeline.py', *sys.argv[1:]]
runpy.run_path('benchmarks/gpu_timeline.py', run_name='__main__')
" $T -- $W > $OUT/timeline-main.txt 2>&1
echo "== main's path timeline rc $? after $(( $(date +%s) - t0 )) s"
grep -A12 -E "paged_decode|rope_single" $OUT/timeline-main.txt | cut -c1-150 | head -40
bash notes/device-jobs/arms_rounds.sh 2 "vexel" \
  "python3 benchmarks/ab.py --tiny-tokens" \
  "python3 benchmarks/ab.py --separate-step-arrays" \
  "python3 benchmarks/ab.py --separate-step-arrays --tiny-tokens"
