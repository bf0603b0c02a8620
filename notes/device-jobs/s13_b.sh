# Session 13, call B (~550 s): branch next/fused-cache-write, rebased onto the fenced paged
# decode (aa9167f), on a GPU for the first time: its tests, then its A/B, in one call to save a
# machine start. Carry [".devkit/wheels", ".devkit/setup.sh", "wt"] with wt/fw.
#   source .devkit/setup.sh && bash notes/device-jobs/s13_b.sh
: "${OUT:?set OUT to the output folder}"
source notes/device-jobs/branch_tree.sh
tree fw
cd /tmp/fw
bash notes/device-jobs/fused_write_check.sh tests
bash notes/device-jobs/fused_write_check.sh ab
