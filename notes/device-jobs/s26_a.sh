# Planned for session 26 (written in session 25), call A, main: where start-up goes, then
# where the GPU's ~2.3 ms a token goes now. Session 25 measured 55.4 s from `vexel serve` to
# a healthy server (46.2 s of warm-up), but its profile of the start-up never ran (uvicorn was
# missing on the machine). First the start-up twice (plain, then py-spy with native frames:
# which Python calls NVRTC compiles come from, `spy_summary.py --through nvrtcCompile`), then
# PyTorch's profiler over one request's decode (the last per-kernel timeline is session 21's,
# before the rope and the packed heads went into the paged decode). Carry
# [".devkit/wheels", ".devkit/setup.sh", ".devkit/pyspy"].
#   source .devkit/setup.sh && bash notes/device-jobs/s26_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
M=/tmp/vx/random-llama3-8b-q4_0.gguf
[ -s $M ] || { mkdir -p /tmp/vx && python3 -c "from pathlib import Path; from vexel_core.bench.random_model import write_random_model as w; w(Path('$M'), 'llama3-8b', 'q4_0')"; }
echo "== model after $(( $(date +%s) - t0 )) s"
bash notes/device-jobs/serve_startup.sh $M 130
W="bench -m $M -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 120 python3 benchmarks/gpu_timeline.py --top 16 -- $W > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline.txt | cut -c1-150
