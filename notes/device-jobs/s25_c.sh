# Planned for session 25 (written in session 24), call C, branch next/merge-in-kernel: its
# GPU tests with short contexts now split on CUDA: the kernels with three spans (read and
# write, every warp count, the counts back at zero), the compiled decode (whose steps now
# take two to four spans from 256 tokens of table) and the engine.
#   source .devkit/setup.sh && bash notes/device-jobs/s25_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
bash notes/device-jobs/gpu_tests.sh "210 tests/test_attention_kernels.py -m gpu -k device-3" \
  "220 tests/test_compiled_decode.py" "110 tests/test_engine.py"
