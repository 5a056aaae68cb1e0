module mcr.dev/hack/benchplot

go 1.26.3
