# Planned for session 26 (written in session 25), call A, main: where start-up goes, then
# where the GPU's ~2.3 ms a token goes now. Session 25 measured 55.4 s from `vexel serve` to
# a healthy server (46.2 s of warm-up), but its profile of the start-up never ran (uvicorn was
# missing on the machine). First PyTorch's profiler over one request's decode (the last
# per-kernel timeline is session 21's, before the rope and the packed heads went into the
# paged decode), then the start-up twice (plain, then py-spy with native frames: which Python
# calls NVRTC compiles come from, `spy_summary.py --through nvrtcCompile`). Carry
# [".devkit/wheels", ".devkit/setup.sh", ".devkit/pyspy"].
#   source .devkit/setup.sh && bash notes/device-jobs/s26_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
# the timeline's bench writes the model (`--random`) that the server then loads; session 25's
# 55.4 s were also measured after a bench in the same machine (MLX's own kernels cached)
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 150 python3 benchmarks/gpu_timeline.py --top 16 -- $W > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline.txt | cut -c1-150
bash notes/device-jobs/serve_startup.sh $VEXEL_CACHE/random-llama3-8b-q4_0.gguf 130
echo "== done after $(( $(date +%s) - t0 )) s"
