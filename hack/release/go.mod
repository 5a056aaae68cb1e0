// Module release holds the release tool (`make release`, `make verify-api`). It uses only the
// standard library and stays out of go.work, like hack/docsnippets: it works on the workspace
// modules from outside, and must not be released with them.
module mcr.dev/hack/release

go 1.26.3
