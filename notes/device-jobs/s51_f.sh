# Session 51, call F2 (right after F1 = s51_d.sh on the same warm machine, which installed the
# devkit's wheels): the shipped model's tests on the GPU, left out of every whole-suite GPU run
# since session 34 (the model's files did not fit the 64 MiB carry beside both wheel folders).
# Carry [".devkit/setup.sh", ".devkit/extra"] (not the wheels: setup.sh finds them installed)
# after `tree_slim.sh out` (notes/bench only: the model stays in the tree).
#   source .devkit/setup.sh && bash notes/device-jobs/s51_f.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/vexel-site \
  .devkit/extra/*.whl || echo "extra wheels: install failed"
python3 -c "import llama_cpp, mlx.core as mx; print('extra wheels: ok;', mx.default_device())"
ls -la vexel_core/assets/*.gguf
bash notes/device-jobs/gpu_tests.sh "300 tests/test_shipped_model.py" "240 tests/test_training.py"
