# Session 19, call F: the spread of the engine's paged decode launches (mean 18.9 us a layer in
# call D's timeline, against 15.4 in the benchmark at the same shape with the write and pools
# of either size, call E): a few slow launches (the first reader of each step's block tables,
# lengths and slots, arrays the host writes every step: a page fault on CUDA, session 6) or
# all of them?
#   source .devkit/setup.sh && bash notes/device-jobs/s19_f.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 150 python3 benchmarks/gpu_timeline.py --top 12 --where paged_decode --where rope_single \
  --where add_rms_norm --where 4_2_4_4096_f_0_0 -- $W > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+|grid|launches" $OUT/timeline.txt | cut -c1-150
