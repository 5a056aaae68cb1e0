#!/usr/bin/env bash
# Builds the kcp server from the Go module proxy into bin/kcp/<kcp version>/, the directory
# mcr.dev/providers/kcp/kcptest looks in, for the kcp provider's real-kcp tests.
#
# kcp publishes no binaries that this project's machines can download, so it is compiled from
# the tool module in hack/tools/kcp (outside go.work: kcp's kubernetes fork would otherwise
# replace k8s.io/* for every workspace module). The first build takes about 6 minutes on 2 cores
# (measured with empty Go caches, module downloads included; longer on a busy machine);
# afterwards a stamp (hash of the tool module, the link flags and the list of binaries) lets this
# script finish in a second.
#
# One module of kcp's graph, github.com/kcp-dev/client-go, is listed by the module proxy of this
# project's machines but its zip is refused. The script asks the proxy first; only when it
# refuses, it builds with a directory replace to the unmodified copy of that module in
# ../shared/third_party beside the checkout (KCP_THIRD_PARTY overrides the directory). A machine
# with an ordinary proxy never needs that copy.
#
# Usage: hack/kcp.sh [--force]
#   --force  rebuild even when the stamp matches.
# Environment:
#   KCP_DIR          output directory (default bin/kcp/<kcp version>).
#   KCP_BINARIES     what to build (default "kcp"; add kcp-front-proxy when a test needs it).
#   KCP_THIRD_PARTY  the third_party directory (default ../shared/third_party from the root).
#   KCP_GOSUMDB      checksum database for modules go.sum does not pin (default off: it is not
#                    reachable from this project's machines; go.sum pins every module but the
#                    client-go copy).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KCP_MOD="${ROOT}/hack/tools/kcp"
CLIENT_GO=github.com/kcp-dev/client-go

force=false
if [[ "${1:-}" == "--force" ]]; then
  force=true
fi

# require_version prints the version the tool module requires for a module path.
require_version() {
  local path="$1" v
  v="$(awk -v p="${path}" '$1 == p && $2 ~ /^v/ { print $2; exit }' "${KCP_MOD}/go.mod")"
  if [[ -z "${v}" ]]; then
    echo "kcp: ${KCP_MOD}/go.mod does not require ${path}" >&2
    exit 1
  fi
  echo "${v}"
}

KCP_VERSION="$(require_version github.com/kcp-dev/kcp)"
KUBE_VERSION="$(require_version k8s.io/kubernetes)"
CLIENT_GO_VERSION="$(require_version "${CLIENT_GO}")"
OUT="${KCP_DIR:-${ROOT}/bin/kcp/${KCP_VERSION}}"
STAMP_FILE="${OUT}/.stamp"
BINARIES="${KCP_BINARIES:-kcp}"
THIRD_PARTY="${KCP_THIRD_PARTY:-${ROOT}/../shared/third_party}"

# Version data kcp's own release build stamps in (kcp's Makefile): /version and `kcp --version`
# report <kubernetes version>+kcp-<kcp version>.
minor="${KUBE_VERSION#v*.}"
minor="${minor%%.*}"
major="${KUBE_VERSION#v}"
major="${major%%.*}"
git_version="${KUBE_VERSION}+kcp-${KCP_VERSION}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X ${pkg}.gitVersion=${git_version}"
  ldflags+=" -X ${pkg}.gitMajor=${major}"
  ldflags+=" -X ${pkg}.gitMinor=${minor}"
  ldflags+=" -X ${pkg}.gitTreeState=clean"
done

# The stamp covers what decides the binaries: the tool module, the link flags and the list of
# binaries. Where client-go comes from is left out (the same source either way), and so is the
# Go toolchain, so that a Go patch upgrade does not force a rebuild of a binary that works.
stamp="$(
  {
    echo "kcp ${KCP_VERSION} binaries ${BINARIES}"
    cat "${KCP_MOD}/go.mod" "${KCP_MOD}/go.sum"
    echo "${ldflags}"
  } | sha256sum | cut -d' ' -f1
)"

up_to_date=true
for b in ${BINARIES}; do
  [[ -x "${OUT}/${b}" ]] || up_to_date=false
done
if ! ${force} && ${up_to_date} && [[ -f "${STAMP_FILE}" && "$(cat "${STAMP_FILE}")" == "${stamp}" ]]; then
  echo "kcp: ${BINARIES} ${KCP_VERSION} up to date in ${OUT#"${ROOT}/"}"
  exit 0
fi

export GOWORK=off
export GOSUMDB="${KCP_GOSUMDB:-off}"
# The build runs in a copy of the tool module (below), which -mod=mod may complete; the
# committed go.mod and go.sum are never written.
export GOFLAGS=-mod=mod

mkdir -p "${OUT}"
rm -f "${STAMP_FILE}"
work="${OUT}/.module"
rm -rf "${work}"
mkdir -p "${work}"
cp "${KCP_MOD}/go.mod" "${KCP_MOD}/go.sum" "${work}/"

# Ask the proxy for client-go first; use the third_party copy only when it is refused.
echo "kcp: asking the module proxy for ${CLIENT_GO}@${CLIENT_GO_VERSION} ..."
if probe="$(cd "${work}" && go mod download -json "${CLIENT_GO}@${CLIENT_GO_VERSION}" 2>&1)"; then
  echo "kcp: ${CLIENT_GO}@${CLIENT_GO_VERSION} comes from the module proxy"
else
  # The JSON error escapes its line breaks; print it on one line.
  reason="$(sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"${probe}" | head -n 1 | sed 's/\\n\\t*/ /g')"
  echo "kcp: the module proxy refuses ${CLIENT_GO}@${CLIENT_GO_VERSION}: ${reason:-${probe}}"
  copy="${THIRD_PARTY}/${CLIENT_GO}@${CLIENT_GO_VERSION}"
  if [[ ! -f "${copy}/go.mod" ]]; then
    echo "kcp: no copy of ${CLIENT_GO}@${CLIENT_GO_VERSION} at ${copy} either" >&2
    echo "kcp: (set KCP_THIRD_PARTY to a directory holding ${CLIENT_GO}@${CLIENT_GO_VERSION}/)" >&2
    exit 1
  fi
  copy="$(cd "${copy}" && pwd)"
  echo "kcp: using the unmodified copy in ${copy}"
  (cd "${work}" && go mod edit -replace "${CLIENT_GO}=${copy}")
fi

cat <<EOF
kcp: building ${BINARIES} ${KCP_VERSION} (${git_version}) into ${OUT#"${ROOT}/"}
kcp: this happens once per version and takes about 6 minutes on 2 cores with empty Go caches
kcp: (later runs reuse the result and finish in a second).
EOF

total=${SECONDS}
for b in ${BINARIES}; do
  start=${SECONDS}
  echo "kcp: building ${b} ..."
  tmp="${OUT}/.${b}.tmp"
  # Build to a temporary name and rename, so an interrupted build never leaves a binary that
  # looks complete.
  (cd "${work}" && go build -trimpath -ldflags "${ldflags}" -o "${tmp}" "github.com/kcp-dev/kcp/cmd/${b}")
  mv -f "${tmp}" "${OUT}/${b}"
  echo "kcp: built ${b} in $((SECONDS - start))s"
done

if [[ " ${BINARIES} " == *" kcp "* ]]; then
  got="$("${OUT}/kcp" --version 2>&1 || true)"
  if [[ "${got}" != *"${git_version}"* ]]; then
    echo "kcp: ${OUT}/kcp --version reports '${got}', want '${git_version}'" >&2
    exit 1
  fi
  echo "kcp: ${got}"
fi

rm -rf "${work}"
echo "${stamp}" >"${STAMP_FILE}"
echo "kcp: done in $((SECONDS - total))s; binaries in ${OUT#"${ROOT}/"} (set MCR_KCP_BINARY to use another kcp)"
