module mcr.dev/hack/docsnippets

go 1.26.0
