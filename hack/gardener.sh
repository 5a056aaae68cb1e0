#!/usr/bin/env bash
# Builds gardener-apiserver from the Go module proxy into bin/gardener/<gardener version>/, the
# directory mcr.dev/providers/gardener/internal/gardentest looks in, for the Gardener provider's
# tests against a real Gardener API (Shoots and their adminkubeconfig subresource).
#
# Gardener publishes container images only, which this project's machines cannot pull, so the
# server is compiled from the tool module in hack/tools/gardener (outside go.work). The first
# build took 20 minutes on a busy 2-core machine with empty Go caches (module downloads
# included); afterwards a stamp (hash of the tool module and the link flags) lets this script
# finish in a second.
#
# Usage: hack/gardener.sh [--force]
#   --force  rebuild even when the stamp matches.
# Environment:
#   GARDENER_DIR     output directory (default bin/gardener/<gardener version>).
#   GARDENER_GOSUMDB checksum database for modules go.sum does not pin (default off: it is not
#                    reachable from this project's machines; go.sum pins every module).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOL_MOD="${ROOT}/hack/tools/gardener"
GARDENER=github.com/gardener/gardener

force=false
if [[ "${1:-}" == "--force" ]]; then
  force=true
fi

VERSION="$(awk -v p="${GARDENER}" '$1 == p && $2 ~ /^v/ { print $2; exit }' "${TOOL_MOD}/go.mod")"
if [[ -z "${VERSION}" ]]; then
  echo "gardener: ${TOOL_MOD}/go.mod does not require ${GARDENER}" >&2
  exit 1
fi
OUT="${GARDENER_DIR:-${ROOT}/bin/gardener/${VERSION}}"
STAMP_FILE="${OUT}/.stamp"

# The version data Gardener's release build stamps into k8s.io/component-base (its
# hack/get-build-ld-flags.sh): `gardener-apiserver --version` and /version report it.
minor="${VERSION#v*.}"
minor="${minor%%.*}"
major="${VERSION#v}"
major="${major%%.*}"
ldflags="-s -w"
ldflags+=" -X k8s.io/component-base/version.gitVersion=${VERSION}"
ldflags+=" -X k8s.io/component-base/version.gitMajor=${major}"
ldflags+=" -X k8s.io/component-base/version.gitMinor=${minor}"
ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"

stamp="$(
  {
    echo "gardener-apiserver ${VERSION}"
    cat "${TOOL_MOD}/go.mod" "${TOOL_MOD}/go.sum"
    echo "${ldflags}"
  } | sha256sum | cut -d' ' -f1
)"
if ! ${force} && [[ -x "${OUT}/gardener-apiserver" && -f "${STAMP_FILE}" && "$(cat "${STAMP_FILE}")" == "${stamp}" ]]; then
  echo "gardener: gardener-apiserver ${VERSION} up to date in ${OUT#"${ROOT}/"}"
  exit 0
fi

export GOWORK=off
export GOSUMDB="${GARDENER_GOSUMDB:-off}"
# go.sum pins the whole graph: a module it lacks is an error, not a silent download.
export GOFLAGS=-mod=readonly

mkdir -p "${OUT}"
rm -f "${STAMP_FILE}"
cat <<EOF
gardener: building gardener-apiserver ${VERSION} into ${OUT#"${ROOT}/"}
gardener: this happens once per version and takes about 20 minutes on a busy 2-core machine with
gardener: empty Go caches (later runs reuse the result and finish in a second).
EOF
start=${SECONDS}
tmp="${OUT}/.gardener-apiserver.tmp"
# Build to a temporary name and rename, so an interrupted build never leaves a binary that looks
# complete.
(cd "${TOOL_MOD}" && nice go build -trimpath -ldflags "${ldflags}" -o "${tmp}" "${GARDENER}/cmd/gardener-apiserver")
mv -f "${tmp}" "${OUT}/gardener-apiserver"

got="$("${OUT}/gardener-apiserver" --version 2>&1 || true)"
if [[ "${got}" != *"${VERSION}"* ]]; then
  echo "gardener: ${OUT}/gardener-apiserver --version reports '${got}', want ${VERSION}" >&2
  exit 1
fi
echo "${stamp}" >"${STAMP_FILE}"
echo "gardener: ${got}; built in $((SECONDS - start))s into ${OUT#"${ROOT}/"} (set MCR_GARDENER_APISERVER to use another binary)"
