module mcr.dev/hack/gitmtime

go 1.26.3
