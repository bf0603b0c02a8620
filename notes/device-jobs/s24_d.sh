# Session 24, call D (main with the rope inside the paged decode): call B's native profile was
# 80% NVRTC compiling custom kernels (MLX's custom kernels skip its disk cache, so each
# process compiles them all). Here the same decode, longer, summed without the samples that
# pass through NVRTC, to see what async_eval spends its ~10 us a kernel on once compiled.
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/pyspy"].
#   source .devkit/setup.sh && bash notes/device-jobs/s24_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .devkit/pyspy/*.whl
export PATH=/tmp/pyspy/bin:$PATH
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 8192 --kv-cache-memory 16GiB"
timeout 300 py-spy record --native --rate 100 --format raw -o /tmp/spy-native.txt \
  -- python3 $(which vexel) $W > $OUT/spy.log 2>&1
echo "== py-spy native rc $? after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/spy.log | cut -c1-200
grep -E "generated tok/s|ITL" $OUT/spy.log | sed 's/│//g' | tr -s ' '
python3 benchmarks/spy_summary.py /tmp/spy-native.txt --under async_eval --without nvrtc \
  --top 60 > $OUT/under-async-eval.txt; head -130 $OUT/under-async-eval.txt
python3 benchmarks/spy_summary.py /tmp/spy-native.txt --without nvrtc --top 40 > $OUT/all.txt
gzip -c /tmp/spy-native.txt > $OUT/spy-native.txt.gz; ls -la $OUT
