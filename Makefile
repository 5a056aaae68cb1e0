# mcr monorepo tasks. Run `make` (or `make help`) for the list.
#
# Modules are discovered from go.work, so a module added there is tested, linted and verified
# without changing this file. The tool modules in hack/tools/ are deliberately not in go.work.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
# Workspace modules, as directories relative to the root (".", "core", "providers/kind", ...).
MODULES = $(shell cd $(ROOT) && go work edit -json | sed -n 's/^[[:space:]]*"DiskPath": "\(.*\)".*/\1/p' | sed 's|^\./||;s|^$$|.|')

# Standalone programs under hack/ (standard library only, outside any module).
HACK_PROGRAMS := hack/gotest hack/verifyversions

TOOLS_DIR := $(ROOT)/bin/tools
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(TOOLS_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)

# Package run by `make demo`, relative to the repository root.
DEMO_PKG ?= ./examples/quickstart
# Per-module timeout of `make test`: generous, tests start real apiservers on a small machine.
TEST_TIMEOUT ?= 30m
# Modules `make test` tests at a time: their time goes mostly to waiting for API servers and
# timeouts, so two at a time take much less wall time on two cores.
TEST_JOBS ?= 2
# Extra arguments for go test, e.g. TEST_ARGS='-run TestFleet -v'.
TEST_ARGS ?=
# Packages tested in each module; narrow a run with e.g. MODULES=core TEST_PKGS=./envtest/...
TEST_PKGS ?= ./...

.PHONY: help
help: ## List the targets.
	@echo "Usage: make <target>"
	@echo
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-16s %s\n", $$1, $$2}'
	@echo
	@echo "Modules (from go.work): $(MODULES)"

# Kubernetes line `make envtest` builds: empty for the default (k8s.io/kubernetes in
# hack/tools/kube-apiserver/go.mod), or an older line kept buildable, e.g. KUBE_VERSION=v1.36.3
# (tests then need MCR_ENVTEST_ASSETS=$$PWD/bin/envtest/v1.36.3: an absolute path, as tests run in
# their package directories).
KUBE_VERSION ?=

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd for tests into bin/envtest/ (~10 min once, then seconds); KUBE_VERSION= picks an older line.
	@KUBE_VERSION=$(KUBE_VERSION) bash $(ROOT)/hack/envtest.sh

.PHONY: kcp
kcp: ## Build the kcp server for the real-kcp tests into bin/kcp/ (~6 min once, then a second).
	@bash $(ROOT)/hack/kcp.sh

.PHONY: gardener-apiserver
gardener-apiserver: ## Build gardener-apiserver for the real-garden tests into bin/gardener/ (~20 min once, then a second).
	@bash $(ROOT)/hack/gardener.sh

# How long `make test` fuzzes each fuzz target after the tests, to keep every target alive in
# CI (the seed corpora run with the tests): a count of executions, which unlike a duration has
# no deadline for Go 1.26's fuzz coordinator to trip over (see hack/fuzz.sh). 0 skips it.
TEST_FUZZTIME ?= 500x

.PHONY: test
test: envtest kcp gardener-apiserver ## Run go test -race in every module of go.work, then each fuzz target for TEST_FUZZTIME.
	@cd $(ROOT) && GOWORK=off go build -o $(TOOLS_DIR)/gotest hack/gotest/main.go
	@cd $(ROOT) && $(TOOLS_DIR)/gotest -timeout $(TEST_TIMEOUT) -jobs $(TEST_JOBS) -args "$(TEST_ARGS)" -pkgs "$(TEST_PKGS)" $(MODULES)
	@if [ "$(TEST_FUZZTIME)" != "0" ]; then $(MAKE) --no-print-directory fuzz FUZZTIME=$(TEST_FUZZTIME); fi

.PHONY: demo
demo: envtest ## Run the quickstart example against a local fleet (package: DEMO_PKG).
	cd $(ROOT) && go run $(DEMO_PKG)

# How long `make soak` runs the faults of the soak test; `make test` runs them for a minute.
SOAK_DURATION ?= 5m

.PHONY: soak
soak: envtest ## Run the soak test (member stops, rotations, removals under a running controller) for SOAK_DURATION (default 5m).
	cd $(ROOT)/core && MCR_SOAK_DURATION=$(SOAK_DURATION) go test -race -count=1 -run '^TestSoak$$' -v -timeout 60m ./internal/faults

# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 30s

.PHONY: fuzz
fuzz: ## Run every fuzz target of every module for FUZZTIME each (default 30s); `make test` runs each for TEST_FUZZTIME.
	@cd $(ROOT) && FUZZTIME=$(FUZZTIME) bash hack/fuzz.sh $(MODULES)

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint in every module.
	@status=0; for m in $(MODULES); do \
		echo "lint: $$m"; \
		(cd $(ROOT)/$$m && $(GOLANGCI_LINT) run --allow-serial-runners --config $(ROOT)/.golangci.yml ./...) || status=1; \
	done; \
	for p in $(HACK_PROGRAMS); do \
		echo "lint: $$p"; \
		(cd $(ROOT)/$$p && GOWORK=off $(GOLANGCI_LINT) run --allow-serial-runners --config $(ROOT)/.golangci.yml main.go) || status=1; \
	done; \
	echo "lint: hack/docsnippets"; \
	(cd $(ROOT)/hack/docsnippets && GOWORK=off $(GOLANGCI_LINT) run --allow-serial-runners --config $(ROOT)/.golangci.yml ./...) || status=1; \
	exit $$status

.PHONY: tools
tools: $(GOLANGCI_LINT) ## Install the pinned golangci-lint into bin/tools.

$(GOLANGCI_LINT):
	@echo "lint: installing golangci-lint $(GOLANGCI_LINT_VERSION) into bin/tools (once)"
	@mkdir -p $(TOOLS_DIR)
	cd $(ROOT) && GOWORK=off GOBIN=$(TOOLS_DIR) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS_DIR)/golangci-lint $(GOLANGCI_LINT)

.PHONY: tidy
tidy: ## Run go mod tidy in every module.
	@for m in $(MODULES); do echo "tidy: $$m"; (cd $(ROOT)/$$m && go mod tidy); done

.PHONY: generate
generate: ## Run go generate in every module.
	@for m in $(MODULES); do echo "generate: $$m"; (cd $(ROOT)/$$m && go generate ./...); done

.PHONY: verify
verify: verify-tidy verify-fmt verify-headers verify-versions verify-docs verify-manifests lint verify-api ## Check tidiness, formatting, license headers, version alignment, docs snippets, rendered manifests, lint and the exported API.

.PHONY: verify-tidy
verify-tidy: ## Check that go mod tidy would not change any module.
	@status=0; for m in $(MODULES); do \
		if ! out=$$(cd $(ROOT)/$$m && go mod tidy -diff 2>&1); then \
			echo "verify-tidy: $$m is not tidy (run make tidy):"; echo "$$out"; status=1; \
		fi; \
	done; \
	if [ $$status -eq 0 ]; then echo "verify-tidy: ok"; fi; exit $$status

.PHONY: verify-fmt
verify-fmt: ## Check gofmt on every Go file.
	@out=$$(cd $(ROOT) && find . -name '*.go' -not -path './bin/*' -not -path './.git/*' -print0 | xargs -0 -r gofmt -l); \
	if [ -n "$$out" ]; then echo "verify-fmt: not gofmt-clean (run gofmt -w):"; echo "$$out"; exit 1; fi; \
	echo "verify-fmt: ok"

.PHONY: verify-headers
verify-headers: ## Check that every Go file starts with the license header (after its build constraints).
	@out=$$(cd $(ROOT) && find . -name '*.go' -not -path './bin/*' -not -path './.git/*' -print0 | \
		xargs -0 -r awk 'FNR == 1 { ok = 0 } /^\/\/ SPDX-License-Identifier: Apache-2.0$$/ { ok = 1 } /^package / { if (!ok) print FILENAME; nextfile }'); \
	if [ -n "$$out" ]; then echo "verify-headers: no license header (// SPDX-License-Identifier: Apache-2.0 before the package clause):"; echo "$$out"; exit 1; fi; \
	echo "verify-headers: ok"

.PHONY: verify-versions
verify-versions: ## Check that shared dependencies have one version across modules.
	@cd $(ROOT) && GOWORK=off go build -o $(TOOLS_DIR)/verifyversions hack/verifyversions/main.go
	@cd $(ROOT) && $(TOOLS_DIR)/verifyversions $(MODULES)

# The docs snippet checker has a module of its own (standard library only), outside go.work.
DOCSNIPPETS := $(TOOLS_DIR)/docsnippets

.PHONY: docs
docs: ## Rewrite the code blocks of docs/ and the READMEs from the sources they quote (<!-- snippet: ... -->).
	@cd $(ROOT)/hack/docsnippets && GOWORK=off go build -o $(DOCSNIPPETS) .
	@cd $(ROOT) && $(DOCSNIPPETS) -write docs README.md conformance/README.md providers/*/README.md examples/README.md examples/*/README.md examples/*/*/README.md

.PHONY: verify-docs
verify-docs: ## Check that the code blocks of docs/ and the READMEs equal their sources and build, and that the targets, variables, commands, flags, identifiers and links they name exist.
	@cd $(ROOT)/hack/docsnippets && GOWORK=off go test ./... && GOWORK=off go build -o $(DOCSNIPPETS) .
	@cd $(ROOT) && $(DOCSNIPPETS) -compile -refs docs README.md conformance/README.md providers/*/README.md examples/README.md examples/*/README.md examples/*/*/README.md

# Releases (docs/contributing/releasing.md). The release tool, hack/release, is a standard library
# module of its own outside go.work, like hack/docsnippets; apidiff is built from the version
# pinned in hack/tools/apidiff.
RELEASE_TOOL := $(TOOLS_DIR)/release
APIDIFF := $(TOOLS_DIR)/apidiff
# The version to release (make release VERSION=v0.1.0); for verify-api, the version the tree is to
# be released as (default: conformance.Version without its -dev suffix).
VERSION ?=
# DRY_RUN=1: release in a temporary clone and print the commits and tags; the tree is untouched.
DRY_RUN ?=
# SKIP_CHECKS=1: skip make verify, make test and verify-api on the release commit.
SKIP_CHECKS ?=
# Where make release writes the released modules as a Go module proxy (GOPROXY=file://$(PROXY)),
# dry run or not: what `go get` and `go install` resolve before the modules are hosted.
PROXY ?= $(ROOT)/bin/release/$(VERSION)/proxy
# A git ref verify-api compares every module with instead of the module's newest release tag.
# Default: the tag; a module without one is reported as having no previous release and passes.
API_BASE ?=

$(APIDIFF): $(ROOT)/hack/tools/apidiff/go.mod $(ROOT)/hack/tools/apidiff/go.sum
	@mkdir -p $(TOOLS_DIR)
	cd $(ROOT)/hack/tools/apidiff && GOWORK=off GOFLAGS=-mod=readonly go build -o $(APIDIFF) golang.org/x/exp/cmd/apidiff

.PHONY: release
release: $(APIDIFF) ## Release VERSION=vX.Y.Z: check, commit and tag every module together, write the module proxy to PROXY (DRY_RUN=1 in a clone, SKIP_CHECKS=1).
	@cd $(ROOT)/hack/release && GOWORK=off go build -o $(RELEASE_TOOL) .
	@cd $(ROOT) && $(RELEASE_TOOL) release -version "$(VERSION)" -apidiff $(APIDIFF) -proxy "$(PROXY)" \
		$(if $(filter 1 true yes,$(DRY_RUN)),-dry-run) $(if $(filter 1 true yes,$(SKIP_CHECKS)),-skip-checks)

.PHONY: verify-api
verify-api: $(APIDIFF) ## Compare each released module's exported API with its last release tag (API_BASE=ref, VERSION=next).
	@cd $(ROOT)/hack/release && GOWORK=off go build -o $(RELEASE_TOOL) .
	@cd $(ROOT) && $(RELEASE_TOOL) verify-api -apidiff $(APIDIFF) -version "$(VERSION)" -base "$(API_BASE)"

# Deployable examples (examples/README.md, "Deploy"): every example with a config/default has its
# kustomize output committed as dist/install.yaml. kustomize is built from the version pinned in
# hack/tools/kustomize, a module outside go.work like hack/tools/apidiff.
KUSTOMIZE := $(TOOLS_DIR)/kustomize
DEPLOYABLE_EXAMPLES = $(shell cd $(ROOT) && find examples -path '*/config/default/kustomization.yaml' | sed 's|/config/default/kustomization.yaml$$||' | sort)

$(KUSTOMIZE): $(ROOT)/hack/tools/kustomize/go.mod $(ROOT)/hack/tools/kustomize/go.sum
	@mkdir -p $(TOOLS_DIR)
	cd $(ROOT)/hack/tools/kustomize && GOWORK=off GOFLAGS=-mod=readonly go build -o $(KUSTOMIZE) sigs.k8s.io/kustomize/kustomize/v5

.PHONY: manifests
manifests: $(KUSTOMIZE) ## Render each deployable example's config/default into its dist/install.yaml.
	@for e in $(DEPLOYABLE_EXAMPLES); do \
		mkdir -p $(ROOT)/$$e/dist; \
		$(KUSTOMIZE) build $(ROOT)/$$e/config/default > $(ROOT)/$$e/dist/install.yaml; \
		echo "manifests: $$e/dist/install.yaml"; \
	done

.PHONY: verify-manifests
verify-manifests: $(KUSTOMIZE) ## Check that each deployable example's dist/install.yaml is its current kustomize output.
	@status=0; for e in $(DEPLOYABLE_EXAMPLES); do \
		if ! out=$$($(KUSTOMIZE) build $(ROOT)/$$e/config/default | diff -u $(ROOT)/$$e/dist/install.yaml - 2>&1); then \
			echo "verify-manifests: $$e/dist/install.yaml is stale (run make manifests):"; echo "$$out"; status=1; \
		fi; \
	done; \
	if [ $$status -eq 0 ]; then echo "verify-manifests: ok"; fi; exit $$status

# The hack tools' tests and lint (release, benchplot, gitmtime) join `make test` and `make lint` as extra prerequisites (the
# tool is outside go.work); a run narrowed with MODULES or TEST_PKGS leaves its tests out.
test: test-hack-tools
lint: lint-hack-tools

.PHONY: test-hack-tools
test-hack-tools: $(APIDIFF)
	@if [ "$(origin MODULES)$(origin TEST_PKGS)" = filefile ]; then \
		cd $(ROOT) && GOWORK=off go build -o $(TOOLS_DIR)/gotest hack/gotest/main.go && \
		GOWORK=off MCR_APIDIFF=$(APIDIFF) $(TOOLS_DIR)/gotest -timeout $(TEST_TIMEOUT) -args "$(TEST_ARGS)" hack/release hack/benchplot hack/gitmtime; \
	fi

.PHONY: lint-hack-tools
lint-hack-tools: $(GOLANGCI_LINT)
	@echo "lint: hack/release"
	@cd $(ROOT)/hack/release && GOWORK=off $(GOLANGCI_LINT) run --allow-serial-runners --config $(ROOT)/.golangci.yml ./...
	@echo "lint: hack/benchplot"
	@cd $(ROOT)/hack/benchplot && GOWORK=off $(GOLANGCI_LINT) run --allow-serial-runners --config $(ROOT)/.golangci.yml ./...
	@echo "lint: hack/gitmtime"
	@cd $(ROOT)/hack/gitmtime && GOWORK=off $(GOLANGCI_LINT) run --allow-serial-runners --config $(ROOT)/.golangci.yml ./...

# Sizes `make bench-scale` engages (any of 10 100 300 1000 10000), how often it runs each (the plots
# take the median) and the file its output goes to; `make bench-plots` draws the PNGs of
# docs/benchmarks/ from that file.
SCALE_N ?= 10 100 300 1000
# Variants it runs each size in: REST mappers of each cluster's own, or shared per apiserver (mcr's default).
SCALE_MAPPERS ?= own shared
SCALE_COUNT ?= 1
SCALE_OUT ?= $(ROOT)/docs/benchmarks/scale.txt

.PHONY: bench-scale
bench-scale: envtest ## Run BenchmarkScale (core/internal/scale) for SCALE_N clusters (default 10 100 300 1000) in each SCALE_MAPPERS variant (about 10 min per SCALE_COUNT) into SCALE_OUT.
	@mkdir -p $(dir $(SCALE_OUT))
	cd $(ROOT)/core && nice -n 19 go test -run '^$$' -bench 'BenchmarkScale/mappers=($(shell echo $(SCALE_MAPPERS) | tr ' ' '|'))/N=($(shell echo $(SCALE_N) | tr ' ' '|'))$$' \
		-benchtime 1x -count $(SCALE_COUNT) -timeout 3h ./internal/scale | tee $(SCALE_OUT)

# Sizes `make bench-rotation` rotates (any of 100 1000), and the file its output goes to.
ROTATION_N ?= 100 1000
ROTATION_OUT ?= $(ROOT)/docs/benchmarks/rotation.txt

.PHONY: bench-rotation
bench-rotation: envtest ## Run BenchmarkRotation (core/internal/scale): ROTATION_N members each given a new token, re-engaged and refreshed in place (about 5 min), into ROTATION_OUT.
	@mkdir -p $(dir $(ROTATION_OUT))
	cd $(ROOT)/core && nice -n 19 go test -run '^$$' -bench 'BenchmarkRotation/refresh=(engage|inplace)/N=($(shell echo $(ROTATION_N) | tr ' ' '|'))$$' \
		-benchtime 1x -timeout 2h ./internal/scale | tee $(ROTATION_OUT)

.PHONY: bench-plots
bench-plots: ## Draw the scale plots (docs/benchmarks/scale-*.png) from SCALE_OUT with hack/benchplot.
	cd $(ROOT)/hack/benchplot && GOWORK=off go run . -in $(SCALE_OUT) -out $(ROOT)/docs/benchmarks
