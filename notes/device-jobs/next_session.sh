# Proposed device calls of the next session (written at the end of session 11). Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT.
#   source .devkit/setup.sh && bash notes/device-jobs/next_session.sh 1     (then 2)
# What a call may carry: the tree (19.8 MiB) plus .devkit's wheels, setup.sh and peers is
# ~63.4 MiB of the 64 allowed: carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"],
# not ".devkit" (its alt/ and jobs/ tip it over). To run a branch, do as session 11 did
# (notes/device-jobs/branch_tree.sh): its changed files in a git-ignored wt/NAME, carried
# without the peers, and a copy of the tree with them over it on the machine.
# 1: (fresh machine, ~540 s) llama.cpp built first, on every core and with nothing else
#    running (session 11's call D benchmarked beside the build and lost its Vexel and mlx-lm
#    figures to the contention, pinned to other cores or not); then one Q4_0 request in Vexel
#    and mlx-lm, then llama.cpp on the same file: the three-engine figure of the final code.
# 2: branch next/gated-gate-up's alternated A/B: copy its changed files to wt/gated, carry
#    [".devkit/wheels", ".devkit/setup.sh", "wt"], `source notes/device-jobs/branch_tree.sh;
#    tree gated; cd /tmp/gated`, then GATED_TESTS=0 bash notes/device-jobs/gated_check.sh
#    (~350 s). Merge it if the fused runs' tok/s and median steps beat the unfused ones' in
#    both rounds.
# 3: branch next/rounded-x (x rounded once, then gemv_int8 without its per-CTA rounding; never
#    run on a GPU): its changed files to wt/rx, carried as in 2, `tree rx; cd /tmp/rx`, then
#    bash notes/device-jobs/rounded_check.sh (~250 s: its GPU tests, then Nsight Compute on the
#    rounded product against gemv_int8 at both shapes). 2 and 3 are a call each: together
#    they pass the 600 s a call may run.
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx
case "$1" in
1)
  start=$(date +%s)
  timeout 360 bash .devkit/peers/llamacpp.sh > /tmp/lc/build.log 2>&1
  echo "llama.cpp build rc $? after $(( $(date +%s) - start )) s"
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 200 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
    > $OUT/bs1.txt 2>&1
  echo "bs1 (rc $?):"; grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
  [ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1
  grep -E "tg128|pp512" $OUT/llamacpp-q4_0.log
  ;;
*)
  echo "part 2 runs on the branch: see the comment above"; exit 2
  ;;
esac
