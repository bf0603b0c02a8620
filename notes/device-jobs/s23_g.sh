# Session 23, call G (main, the whole step compiled): where the host's time goes now that the
# build is ~0.9 ms and async_eval's submit ~2.3 ms a token. host_build.py (the build's pieces,
# one step's submit, the build's profile), then py-spy with native frames over one request
# (collapsed stacks: the C++ under mx.async_eval). Carry [".devkit/wheels",
# ".devkit/setup.sh", ".devkit/pyspy"] (py-spy's manylinux wheel).
#   source .devkit/setup.sh && bash notes/device-jobs/s23_g.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .devkit/pyspy/*.whl
export PATH=/tmp/pyspy/bin:$PATH
timeout 100 python3 benchmarks/host_build.py > $OUT/host_build.txt 2>&1
echo "== host_build rc $? after $(( $(date +%s) - t0 )) s"; head -14 $OUT/host_build.txt | cut -c1-160
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 1024 --kv-cache-memory 16GiB"
timeout 150 py-spy record --native --rate 500 --format raw -o $OUT/spy-native.txt -- python3 $(which vexel) $W > $OUT/spy.log 2>&1
rc=$?; echo "== py-spy native rc $rc after $(( $(date +%s) - t0 )) s"; tail -5 $OUT/spy.log | cut -c1-200
if [ ! -s $OUT/spy-native.txt ]; then
  timeout 120 py-spy record --rate 500 --format raw -o $OUT/spy-python.txt -- python3 $(which vexel) $W >> $OUT/spy.log 2>&1
  echo "== py-spy python rc $? after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/spy.log | cut -c1-200
fi
ls -la $OUT
