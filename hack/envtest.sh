#!/usr/bin/env bash
# Builds the envtest binaries (kube-apiserver and etcd) from the Go module proxy into
# bin/envtest/<kubernetes version>/, the directory mcr.dev/core/envtest looks in.
#
# The binaries are not downloadable on this project's machines, so they are compiled from the
# tool modules in hack/tools/. The first kube-apiserver build takes about 10 minutes on 2 cores;
# afterwards a stamp (hash of the tool modules and versions) lets this script finish in
# seconds. The tool modules stay out of go.work on purpose: their kubernetes/etcd
# dependencies would otherwise raise versions for every workspace module.
#
# Usage: hack/envtest.sh [--force]
#   --force  rebuild even when the stamp matches.
# Environment:
#   KUBE_VERSION  the Kubernetes line to build (default: k8s.io/kubernetes in the tool module's
#                 go.mod). An older line builds from go.<version>.mod beside each tool module's
#                 go.mod (e.g. KUBE_VERSION=v1.36.3 uses go.v1.36.3.mod, with etcd v3.6).
#   ENVTEST_DIR   the output directory (default bin/envtest/<kubernetes version>).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KAS_MOD="${ROOT}/hack/tools/kube-apiserver"
ETCD_MOD="${ROOT}/hack/tools/etcd"

force=false
if [[ "${1:-}" == "--force" ]]; then
  force=true
fi

# require_version prints the version a go.mod requires for a module path.
require_version() {
  local gomod="$1" path="$2" v
  v="$(awk -v p="${path}" '$1 == p && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == p { print $3; exit }' "${gomod}")"
  if [[ -z "${v}" ]]; then
    echo "envtest: ${gomod} does not require ${path}" >&2
    exit 1
  fi
  echo "${v}"
}

# The default line is the tool modules' go.mod; another line is a pair of go.<version>.mod files
# (with their go.<version>.sum) that the build passes as -modfile, so main.go stays shared.
DEFAULT_KUBE_VERSION="$(require_version "${KAS_MOD}/go.mod" k8s.io/kubernetes)"
KUBE_VERSION="${KUBE_VERSION:-${DEFAULT_KUBE_VERSION}}"
MODFILE=go.mod
if [[ "${KUBE_VERSION}" != "${DEFAULT_KUBE_VERSION}" ]]; then
  MODFILE="go.${KUBE_VERSION}.mod"
  for dir in "${KAS_MOD}" "${ETCD_MOD}"; do
    if [[ ! -f "${dir}/${MODFILE}" ]]; then
      lines="$(cd "${KAS_MOD}" && ls go.v*.mod 2>/dev/null | sed 's/^go\.//;s/\.mod$//' | tr '\n' ' ')"
      echo "envtest: no ${dir#"${ROOT}/"}/${MODFILE} for KUBE_VERSION=${KUBE_VERSION}" >&2
      echo "envtest: buildable lines: ${DEFAULT_KUBE_VERSION} (default) ${lines}" >&2
      exit 1
    fi
  done
  if [[ "$(require_version "${KAS_MOD}/${MODFILE}" k8s.io/kubernetes)" != "${KUBE_VERSION}" ]]; then
    echo "envtest: ${KAS_MOD#"${ROOT}/"}/${MODFILE} does not require k8s.io/kubernetes ${KUBE_VERSION}" >&2
    exit 1
  fi
fi
MODSUM="${MODFILE%.mod}.sum"
ETCD_VERSION="$(require_version "${ETCD_MOD}/${MODFILE}" go.etcd.io/etcd/server/v3)"
OUT="${ENVTEST_DIR:-${ROOT}/bin/envtest/${KUBE_VERSION}}"
STAMP_FILE="${OUT}/.stamp"

# Version data the official release build stamps in (k8s hack/lib/version.sh); /version and
# `kube-apiserver --version` report it.
minor="${KUBE_VERSION#v*.}"
minor="${minor%%.*}"
major="${KUBE_VERSION#v}"
major="${major%%.*}"
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION}"
  kube_ldflags+=" -X ${pkg}.gitMajor=${major}"
  kube_ldflags+=" -X ${pkg}.gitMinor=${minor}"
  kube_ldflags+=" -X ${pkg}.gitTreeState=clean"
done

# The stamp covers everything that decides what gets built: the tool modules and the link
# flags with the versions baked into the binary. The Go toolchain is left out so that a Go
# patch upgrade does not force a ten-minute rebuild of binaries that still work.
stamp="$(
  {
    echo "kubernetes ${KUBE_VERSION} etcd ${ETCD_VERSION}"
    cat "${KAS_MOD}/${MODFILE}" "${KAS_MOD}/${MODSUM}" "${KAS_MOD}"/*.go
    cat "${ETCD_MOD}/${MODFILE}" "${ETCD_MOD}/${MODSUM}" "${ETCD_MOD}"/*.go
    echo "${kube_ldflags}"
  } | sha256sum | cut -d' ' -f1
)"

if ! ${force} && [[ -x "${OUT}/kube-apiserver" && -x "${OUT}/etcd" && -f "${STAMP_FILE}" ]] &&
  [[ "$(cat "${STAMP_FILE}")" == "${stamp}" ]]; then
  echo "envtest: kube-apiserver ${KUBE_VERSION} and etcd ${ETCD_VERSION} are up to date in ${OUT#"${ROOT}/"}"
  exit 0
fi

# The tool modules are built on their own (never through go.work) and read-only against
# their committed go.sum; only the Go module proxy is contacted, for missing modules.
export GOWORK=off
export GOFLAGS=-mod=readonly

mkdir -p "${OUT}"
rm -f "${STAMP_FILE}"

cat <<EOF
envtest: building kube-apiserver ${KUBE_VERSION} and etcd ${ETCD_VERSION} into ${OUT#"${ROOT}/"}
envtest: this happens once per version; the first kube-apiserver build takes about 10 minutes
envtest: on 2 cores (later runs reuse the result and finish in seconds).
EOF

build() {
  local name="$1" dir="$2" ldflags="$3" start tmp
  start=${SECONDS}
  echo "envtest: building ${name} ..."
  tmp="${OUT}/.${name}.tmp"
  # Build to a temporary name and rename, so an interrupted build never leaves a binary
  # that looks complete.
  (cd "${dir}" && go build -modfile="${MODFILE}" -trimpath -ldflags "${ldflags}" -o "${tmp}" .)
  mv -f "${tmp}" "${OUT}/${name}"
  echo "envtest: built ${name} in $((SECONDS - start))s"
}

build etcd "${ETCD_MOD}" "-s -w"
build kube-apiserver "${KAS_MOD}" "${kube_ldflags}"

got="$("${OUT}/kube-apiserver" --version)"
if [[ "${got}" != "Kubernetes ${KUBE_VERSION}" ]]; then
  echo "envtest: kube-apiserver reports '${got}', want 'Kubernetes ${KUBE_VERSION}'" >&2
  exit 1
fi
# Read the whole output: with pipefail, `| head -n 1` fails the script with SIGPIPE whenever
# etcd writes its later lines after head has exited.
etcd_version="$("${OUT}/etcd" --version)"
if [[ "${etcd_version}" != "etcd Version: ${ETCD_VERSION#v}"* ]]; then
  echo "envtest: etcd reports '${etcd_version%%$'\n'*}', want 'etcd Version: ${ETCD_VERSION#v}'" >&2
  exit 1
fi
echo "${etcd_version%%$'\n'*}"

echo "${stamp}" >"${STAMP_FILE}"
echo "envtest: done; binaries in ${OUT#"${ROOT}/"} (set MCR_ENVTEST_ASSETS or KUBEBUILDER_ASSETS to use another directory)"
