# Moves what a device call can do without out of the working tree, and back. The run tool sends
# the tree with the carry, 64 MiB in all, and the wheels alone are 37 MB (session 34 lost a
# call's start to the limit).
#   bash notes/device-jobs/tree_slim.sh out          # notes/bench (~11 MB)
#   bash notes/device-jobs/tree_slim.sh out --model  # and the shipped GGUF files (~17 MB):
#                                                    # the shipped model's tests then fail
#   bash notes/device-jobs/tree_slim.sh back
# Sizes (session 34): .devkit/wheels 37.5 MB, .devkit/extra 12.6; the tree 29.6, 18.6 with
# notes/bench out, 2.8 with the model out too. The wheels and the extra wheels together need
# `out --model`; either alone, `out`.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
aside=../vexel-outoftree
paths=(notes/bench)
[ "${2:-}" = "--model" ] && paths+=(vexel_core/assets/vexel-tiny.gguf vexel_core/assets/vexel-tiny-draft.gguf)
case "${1:-}" in
  out)
    for p in "${paths[@]}"; do
      [ -e "$p" ] || continue
      mkdir -p "$aside/$(dirname "$p")" && mv "$p" "$aside/$p"
    done ;;
  back)
    [ -d "$aside" ] || exit 0
    (cd "$aside" && find . \( -type f -o -type d -empty \) -print) | while read -r p; do
      [ -e "${p#./}" ] && { echo "tree_slim: ${p#./} is in the tree already" >&2; exit 1; }
      mkdir -p "$(dirname "${p#./}")" && mv "$aside/${p#./}" "${p#./}"
    done
    find "$aside" -depth -type d -empty -delete ;;
  *) echo "usage: tree_slim.sh out [--model] | back" >&2; exit 2 ;;
esac
# what the run tool sends: tracked files and untracked ones git does not ignore
git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2>/dev/null \
  | awk '{n += $1} END {printf "tree: %.1f MB\n", n / 1e6}'
