# Session 37, call F: the next product without claims (CTAs that stay take their own rows, the
# last CTA the rows of those that left, counted before their counts): call E's commands
# (its GPU tests, feed_forward.py --next, alternate.py --separate-qkv) on that version.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s37_f.sh
exec bash "$(dirname "$0")/s37_e.sh"
