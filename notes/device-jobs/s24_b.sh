# Planned for session 24 (written in session 23), call B (main, or the rope branch if it
# merged): the operations of one built step (benchmarks/step_graph.py: kernels and glue,
# each an array MLX's replay makes), then what MLX's async_eval does with its ~10 us a
# kernel, seen from native frames.
# Session 23's call G ran py-spy --native at 500 Hz: it fell 48 s behind and was cut off.
# Here 100 Hz over a longer decode (first compiles are a smaller share), then the frames
# under async_eval (benchmarks/spy_summary.py). Carry [".devkit/wheels", ".devkit/setup.sh",
# ".devkit/pyspy"] (py-spy's manylinux wheel: pip download --no-deps --only-binary=:all:
# --platform manylinux2014_x86_64 -d .devkit/pyspy py-spy).
#   source .devkit/setup.sh && bash notes/device-jobs/s24_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 90 python3 benchmarks/step_graph.py > $OUT/step_graph.txt 2>&1
echo "== step_graph rc $? after $(( $(date +%s) - t0 )) s"; head -30 $OUT/step_graph.txt
python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .devkit/pyspy/*.whl
export PATH=/tmp/pyspy/bin:$PATH
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 2048 --kv-cache-memory 16GiB"
timeout 240 py-spy record --native --rate 100 --format raw -o $OUT/spy-native.txt \
  -- python3 $(which vexel) $W > $OUT/spy.log 2>&1
echo "== py-spy native rc $? after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/spy.log | cut -c1-200
[ -s $OUT/spy-native.txt ] && python3 benchmarks/spy_summary.py $OUT/spy-native.txt \
  --under async_eval --top 40 > $OUT/under-async-eval.txt && head -60 $OUT/under-async-eval.txt
