# Session 52, call B: the evict-first forms one process each (s52_evict.py says why).
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
: "${OUT:?set OUT to the output folder}"
for p in fraction nofraction; do
  for c in cp.async cp.async+size cp.async.plain ld; do
    timeout 60 python3 notes/device-jobs/s52_evict.py $p $c 2>&1 | grep -v -i warn | tail -2
  done
done
