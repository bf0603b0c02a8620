# Session 50, call 2: is today's one-request figure (392.7 tok/s in call 1, ITL p50 2.3 ms) a
# regression since session 39's 446.0 (main at 7c8ed97), or the host? Both trees alternated in
# one call with arms_rounds.sh (one Q4_0 request, 128 + 256 tokens, step traces). The old tree
# is shipped untracked as old39/ (`git archive 7c8ed97 vexel_core`, assets left out) and taken
# through PYTHONPATH by the `vexel` script (its sys.path[0] is its bin folder, not the cwd).
# MLX keys its PTX cache by kernel name, so each arm has its own cache folder.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s50_2.sh
: "${OUT:?set OUT to the output folder}"
old="env MLX_PTX_CACHE_DIR=/tmp/ptx-old PYTHONPATH=$PWD/old39:$PYTHONPATH vexel"
new="env MLX_PTX_CACHE_DIR=/tmp/ptx-new vexel"
(cd /tmp && env PYTHONPATH=$OLDPWD/old39:$PYTHONPATH python3 -c \
  "import importlib; l = importlib.import_module('vexel_core.quant.kernels.library'); print('old arm imports', l.__file__, 'INT8_SMALL_WEIGHT' in dir(l))")
bash notes/device-jobs/arms_rounds.sh 4 "$old" "$new"
