# Session 35, call G: where the feed-forward kernel's time goes (benchmarks/ff_phases.py: main's
# kernel against copies without the down atomics, without the down loop, without the last
# CTA's epilogue; alternated, three rounds). Carry [".devkit/wheels", ".devkit/setup.sh"]
# after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s35_g.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(cd benchmarks && timeout 200 python3 ff_phases.py --rounds 3 > $OUT/ff_phases.txt 2>&1)
echo "== ff_phases.py rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/ff_phases.txt | tail -20
