# Session 25, call D (main): one Q4_0 request in Vexel and mlx-lm, alone on the machine (in
# session 23 llama.cpp's build ran beside it, 16 compiler processes on the host that submits
# Vexel's steps); then start-up on CUDA: `vexel serve` on the same file, the seconds until
# /health answers 200 and the first request's time, once plain and once under py-spy with
# native frames (which Python calls the NVRTC compiles come from: session 24 found ~27 s of
# them; ran in session 25 inline, before serve_startup.sh, and stopped at a missing uvicorn:
# .devkit/wheels now has the server's packages). llama.cpp follows in its own call (s25_e.sh). Carry [".devkit/wheels",
# ".devkit/setup.sh", ".devkit/pyspy"].
#   source .devkit/setup.sh && bash notes/device-jobs/s25_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 200 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
bash notes/device-jobs/serve_startup.sh /tmp/vx/random-llama3-8b-q4_0.gguf
echo "== done after $(( $(date +%s) - t0 )) s"
