# Session 52, call A: the closing probes. First whether mx.fast.cuda_kernel's generated kernel
# takes a cluster shape and launch bounds from its header (benchmarks/kernel_attributes.py);
# then session 51's s51_l.sh (the staged probes as committed, never run in that form); then
# the evict-first arm of staged_attention.py (ARMS[8], written in session 51, never run).
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s52_a.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
echo "== kernel_attributes.py"
timeout 60 python3 benchmarks/kernel_attributes.py --ctas 16 --chain 4; echo "rc $?"
timeout 60 python3 benchmarks/kernel_attributes.py --ctas 264 --chain 8; echo "rc $?"
echo "== s51_l.sh"
bash notes/device-jobs/s51_l.sh
echo "== evict-first"
timeout 150 python3 benchmarks/staged_attention.py --rounds 2 --layers 48 --contexts 128,256 \
  --arms 0,1,8 2>&1 | grep -v -i warn
echo "== done"
