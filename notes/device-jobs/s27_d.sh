# (The probe was removed at the session's end: git show a345f4512210:benchmarks/mlp_probe.py
# and mlp_probe.cuh restore it; benchmarks/feed_forward.py times the engine's kernel.)
# Session 27, call D (main): the fused feed-forward probe timed by CUPTI (call C's timing was
# the host's). Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s27_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
cd benchmarks
timeout 300 python3 mlp_probe.py $MLP_ARGS ${MLP_VARIANTS:+--variants $MLP_VARIANTS} > $OUT/mlp_probe.txt 2>&1
echo "== mlp_probe rc $? after $(( $(date +%s) - t0 )) s"; grep -v "^\s*$" $OUT/mlp_probe.txt | grep -v Warn | tail -50
