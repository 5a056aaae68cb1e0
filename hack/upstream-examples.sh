#!/usr/bin/env bash
# Builds multicluster-runtime v0.24.1's own example programs (examples/*/main.go of its
# repository) against this tree after the import swap of docs/migration.md, exactly as the guide
# documents it, and nothing else. docs/migration.md quotes the result. The examples are not in
# the module the Go proxy serves, so give a checkout of the repository at v0.24.1 (or a git
# directory holding that tag).
# Usage: hack/upstream-examples.sh <multicluster-runtime checkout or git dir> [workdir]
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC=${1:?usage: hack/upstream-examples.sh <multicluster-runtime checkout or git dir> [workdir]}
WORK=${2:-$(mktemp -d)}
EXAMPLES="cluster-api cluster-inventory-api file kind kubeconfig namespace registry sharded-namespace sync-local-to-remote"
MODULES="core providers/clusterapi providers/clusterprofile providers/file providers/kind providers/kubeconfig"

rm -rf "$WORK/m" && mkdir -p "$WORK/m"
for e in $EXAMPLES; do
  mkdir -p "$WORK/m/$e"
  if [ -d "$SRC/examples/$e" ]; then
    cp "$SRC/examples/$e"/*.go "$WORK/m/$e/"
  else
    git --git-dir="$SRC" archive v0.24.1 "examples/$e" | tar -x -C "$WORK/m/$e" --strip-components=2
    rm -f "$WORK/m/$e"/go.mod "$WORK/m/$e"/go.sum
  fi
done
cd "$WORK/m"
# The guide's sed block, taken from the guide itself.
awk '/^```sh$/{b=""; on=1; next} /^```$/{if (on && b ~ /sed -i/) {print b; exit} on=0; next} on{b=b $0 "\n"}' \
  "$ROOT/docs/migration.md" > sed.sh
bash sed.sh

# One module requiring this tree's modules at the versions they use.
{
  echo "module upstreamexamples"; echo; echo "go $(cd "$ROOT/core" && GOWORK=off go list -m -f "{{.GoVersion}}")"; echo
  echo "require ("
  for m in $MODULES; do
    echo "  mcr.dev/$m v0.0.0"
    sed -n '/^require (/,/^)/p' "$ROOT/$m/go.mod" | grep -v '^require\|^)\|mcr.dev/'
  done | sort -u -k1,1
  echo ")"
  for m in $MODULES conformance; do echo "replace mcr.dev/$m => $ROOT/$m"; done
} > go.mod
GOWORK=off GOFLAGS=-mod=mod GOSUMDB=off go mod tidy >/dev/null 2>tidy.log

ok=0
for e in $EXAMPLES; do
  if GOWORK=off GOFLAGS=-mod=mod GOSUMDB=off go build -o /dev/null "./$e" 2>"build-$e.log"; then
    echo "ok   $e"; ok=$((ok+1))
  else
    echo "FAIL $e (see $WORK/m/build-$e.log)"
  fi
done
echo "$ok of $(echo $EXAMPLES | wc -w) of multicluster-runtime v0.24.1's examples compile after the documented sed"
[ "$ok" -eq "$(echo $EXAMPLES | wc -w)" ]
