# Proposed device calls of the next session (written at the end of session 12). Each is one
# call; never pipe the call's whole output through tail (a limit kill loses it); at most 8
# files come back from $OUT. Carry [".devkit/wheels", ".devkit/setup.sh"] (add
# ".devkit/peers" only for llama.cpp: the tree plus all three is ~63.5 of the 64 MiB allowed).
#   source .devkit/setup.sh && bash notes/device-jobs/next_session.sh 1
# 1: (fresh machine, ~200 s) the Q4_0 ablation's every variant (benchmarks/q4_0_ablation.py,
#    notes/gpu-kernels.md "Session 12"): whether a fence that keeps a row's loads together
#    (FENCE; in the probe's SASS ptxas interleaves them with the products), x in shared memory
#    or registers, the
#    next row's loads in flight, or the file's own layout (LAYOUT 1) brings the products (13.2
#    us in E1/E2) toward the loads alone (9.4 us). What decides the next kernel: a variant at
#    or under ~11.5 us with the scales (70% of the copy bandwidth is 12.3 us); a file-layout
#    one there needs no repacking.
# 2: (~170 s) Q6_K is 0.3 us from its goal (21.3 us against 21.0 at 14336x4096): the same
#    question for its layout, once 1 says which structure wins (a probe of its own, or the
#    winner's structure in gemv_int8).
# 3: branch next/fused-cache-write (a decode step's cache write inside the paged decode
#    kernel; CPU emulation only so far): its changed files to wt/fw (branch_tree.sh says how),
#    carry [".devkit/wheels", ".devkit/setup.sh", "wt"], `source notes/device-jobs/
#    branch_tree.sh; tree fw; cd /tmp/fw`, then `bash notes/device-jobs/fused_write_check.sh
#    tests` (~300 s) and, in a second call, `... ab` (~300 s). Merge it if the fused arm wins
#    every round, as the gated product did.
# 4: branch next/fenced-decode (the paged decode kernel with a __syncwarp after each batch of
#    loads; nvdisasm shows ptxas loading each key word only after the products of the one
#    before): as 3, with wt/fd, `fence_check.sh kernel` (~250 s: GPU tests and
#    benchmarks/decode_attention.py's fence column) and `... ab` (~300 s). It and the fused
#    cache write both change paged_decode.cu, run_attention.cpp and the kernel tests: merge
#    one, rebase the other.
# 5: when a kernel changes the engine's path: the three engines on one request (part 2 of
#    s12_d.sh after part 1 builds llama.cpp; ~420 + ~120 s). Host episodes move the Python
#    engines' figures by 1.5x between runs on one machine (session 12): run it twice or more.
# 1 can take 4's kernel half in the same call (one machine start fewer; ~450 s in all): make
#    wt/fd first (branch_tree.sh says how), carry [".devkit/wheels", ".devkit/setup.sh", "wt"],
#    and run `next_session.sh 1+fd`.
export VEXEL_CACHE=/tmp/vx
case "$1" in
1)
  bash notes/device-jobs/s12_e.sh
  ;;
1+fd)
  mkdir -p $OUT/probe $OUT/fence
  OUT=$OUT/probe bash notes/device-jobs/s12_e.sh
  (cd $OUT/probe && tar -cJf ../probe.tar.xz . ) && rm -rf $OUT/probe
  source notes/device-jobs/branch_tree.sh
  tree fd
  (cd /tmp/fd && OUT=$OUT/fence bash notes/device-jobs/fence_check.sh kernel)
  ;;
*)
  echo "parts 2 to 5: see the comment above"; exit 2
  ;;
esac
