#!/usr/bin/env bash
# results/lab/remeasure.sh on an H200 only; --help says more.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/on_h200.sh rungs|dispatchers OP[:K,K...] ...   (GIT_REV=<commit>, FALLBACK=fresh|fresh-build)

results/lab/remeasure.sh with the same arguments, on an H200 (its rows go to results/h200). On another GPU: exit 3,
or with FALLBACK=fresh `make test` from a fresh tree (device_session.sh fresh, ~580 s), with FALLBACK=fresh-build
its build alone (then device_session.sh fresh-test in the next call). For example, the rungs whose code
changed since the H200's rows were measured, one call each, the rows brought home between calls:
  on_h200.sh rungs rmsnorm:9,12      on_h200.sh rungs layernorm:13,14      on_h200.sh dispatchers rmsnorm layernorm
H
    exit 0 ;;
rungs | dispatchers) ;;
*) echo "on_h200: give rungs or dispatchers, then OP[:K,K] ... (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start on_h200
lab_need_h200
exec bash results/lab/remeasure.sh "$@"
