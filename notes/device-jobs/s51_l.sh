# Prepared in session 51, not run (its device time was spent): the three staged probes as
# committed (the row dot moved into staged_common.cuh after calls A-K), each briefly: that they
# compile, pass their checks and give calls A-K's figures. Carry [".devkit/wheels",
# ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s51_l.sh > $OUT/log.txt 2>&1
: "${OUT:?set OUT to the output folder}"
timeout 80 python3 benchmarks/staged_weights.py --rounds 1 --layers 16 --arms spin \
  --shapes "output 4096x4096" 2>&1 | grep -v -i warn
timeout 60 python3 benchmarks/staged_prefix.py --rounds 1 --layers 8 2>&1 | grep -v -i warn
timeout 80 python3 benchmarks/staged_attention.py --rounds 1 --layers 16 --contexts 128 \
  --arms 0,1,2 2>&1 | grep -v -i warn
