# Session 37, call D: where a decode step's GPU time goes with the q/k/v rows in the
# feed-forward launch and with them in a launch of their own (ab.py --separate-qkv): the
# kernels' mean durations and the last 140 launches in order (gpu_timeline.py).
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s37_d.sh
: "${OUT:?set OUT to the output folder}"
export PYTHONUNBUFFERED=1 VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
cd benchmarks
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --kv-cache-memory 16GiB"
for arm in fused separate; do
  timeout 170 python3 - $B > $OUT/timeline-$arm.txt 2>&1 <<PY
import sys
import ab, gpu_timeline
if "$arm" == "separate":
    ab.separate_qkv()
sys.argv = ["gpu_timeline.py", "--top", "14", "--where", "vx_", "--last", "140", "--", *sys.argv[1:]]
gpu_timeline.main()
PY
  echo "$arm rc $? after $(( $(date +%s) - t0 )) s"; grep -A 16 -i "top\|kernel" $OUT/timeline-$arm.txt | head -24
done
