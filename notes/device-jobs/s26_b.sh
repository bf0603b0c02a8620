# Session 26, call B: the start-up profile that call A lost (py-spy was not on PATH: pip's
# --target puts the wheel's executable in /tmp/pyspy/bin), with each warm-up round's seconds
# logged (debug level). On a fresh machine the plain run also compiles MLX's own kernels
# (cached on disk for the second). Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/pyspy"].
#   source .devkit/setup.sh && bash notes/device-jobs/s26_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
M=$VEXEL_CACHE/random-llama3-8b-q4_0.gguf
mkdir -p $VEXEL_CACHE
[ -f $M ] || python3 -c "
from pathlib import Path; from vexel_core.bench.random_model import write_random_model
write_random_model(Path('$M'), 'llama3-8b', 'q4_0')"
echo "== model after $(( $(date +%s) - t0 )) s"
LOG_LEVEL=debug bash notes/device-jobs/serve_startup.sh $M 130
grep -h '"warm-up round"' $OUT/serve-*.log | cut -c1-160
echo "== done after $(( $(date +%s) - t0 )) s"
