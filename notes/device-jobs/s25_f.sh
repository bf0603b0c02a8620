# Session 25, call F (main): call D's start-up half again, now that .devkit/wheels has the
# server's packages, on a fresh random Q4_0 Llama-3-8B file. Carry [".devkit/wheels",
# ".devkit/setup.sh", ".devkit/pyspy"].
#   source .devkit/setup.sh && bash notes/device-jobs/s25_f.sh
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
M=/tmp/vx/random-llama3-8b-q4_0.gguf
[ -s $M ] || { mkdir -p /tmp/vx && python3 -c "from pathlib import Path; from vexel_core.bench.random_model import write_random_model as w; w(Path('$M'), 'llama3-8b', 'q4_0')"; }
echo "== model after $(( $(date +%s) - t0 )) s"
bash notes/device-jobs/serve_startup.sh $M 130
echo "== done after $(( $(date +%s) - t0 )) s"
