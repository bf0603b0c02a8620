# Session 51, call H: benchmarks/staged_attention.py after call G (one launch measured slower
# than two): the probe's timers (when the attention CTAs finish inside the launch), the rows
# copied only after the wait, and the count polled 200 ns apart. 128 and 256 tokens only (8
# warps: the 16-warp variant with the timers may pass 128 registers a thread). Carry
# [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_h.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 300 python3 benchmarks/staged_attention.py --rounds 2 --contexts 128,256 \
  > $OUT/staged_attention.txt 2>&1
echo "== staged_attention rc $?"; grep -v Warn $OUT/staged_attention.txt | tail -24
