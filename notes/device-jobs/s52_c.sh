# Session 52, call C: staged_attention.py's evict-first arm staged through registers
# (ld.global.L2::cache_hint: call B found cp.async's cache-hint form an illegal instruction on
# the H200), beside the same loads unmarked and the cp.async staging and the engine's launches.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
: "${OUT:?set OUT to the output folder}"
timeout 300 python3 benchmarks/staged_attention.py --rounds 3 --layers 48 --contexts 128,256 \
  --arms 0,1,8,9 2>&1 | grep -v -i warn
echo "== done"
