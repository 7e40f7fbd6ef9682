#!/usr/bin/env bash
# The lean split rungs (RMSNorm 12, LayerNorm 14) on an H200, in two calls; --help says what each does.
set -u
usage() {
    cat <<'H'
usage: results/lab/s38_h200_lean.sh rungs|dispatchers        (GIT_REV=<commit>, FALLBACK=fresh)

On an H200, one call each, through results/lab/remeasure.sh:
  rungs        remeasure.sh rungs rmsnorm:12 layernorm:14 (every set); $OUT/res.tgz holds the two CSVs and logs of
               results/h200. Bring them home (untar in the tree) before the next call
  dispatchers  remeasure.sh dispatchers rmsnorm layernorm: both tables derived again from every GPU's results,
               a rebuild, RMSNorm's kernel 13 and LayerNorm's 15 at every set, dispatch_check
On another GPU: exit 3, or with FALLBACK=fresh `make test` from a fresh tree (device_session.sh fresh).
H
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
rungs) set -- rungs rmsnorm:12 layernorm:14 ;;
dispatchers) set -- dispatchers rmsnorm layernorm ;;
*) echo "s38_h200_lean: give rungs or dispatchers (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s38_h200_lean
lab_need_h200
exec bash results/lab/remeasure.sh "$@"
