# Proposed for session 49, call 1 (written in session 48, not yet run). The whole
# test_quant_kernels.py on the GPU after INT8_ROWS by weight size; one Q4_0 request at the
# README's [k] settings (session 39: 446.0 tok/s); then the legacy formats in the engine, 1 and
# 2 requests, on main against their routing before session 47 (not INT8_TYPES, set through
# importlib), alternated. Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s49_1.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
bash notes/device-jobs/gpu_tests.sh "260 tests/test_quant_kernels.py -m gpu -n 8"
timeout 90 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 \
  --kv-cache-memory 16GiB > $OUT/b1-q4_0-k.txt 2>&1
echo "== one Q4_0 request ([k]) rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|rror" $OUT/b1-q4_0-k.txt | sed 's/│//g' | tr -s ' ')
OLD_ROUTING="import importlib; from gguf import GGMLQuantizationType as Q; l = importlib.import_module('vexel_core.quant.kernels.library'); l.INT8_TYPES = l.INT8_TYPES - {Q.Q4_1, Q.Q5_0, Q.Q5_1}"
source notes/device-jobs/engine_arm.sh
arm new q4_1 1; arm old q4_1 1; arm new q5_0 2; arm old q5_0 2
