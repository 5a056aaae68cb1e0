#!/usr/bin/env bash
# Runs every fuzz target of the given modules for FUZZTIME each (a duration such as 30s, or a
# count of executions such as 500x) and fails when any target finds a failing input.
#
# Each package's test binary is built once, instrumented for fuzzing (go test -c -fuzz), and run
# for each of its targets; `go test -fuzz` per target would link the instrumented binary again
# for every target. The binary is run in the package directory, so that it reads and writes the
# corpus in testdata/fuzz as `go test` does, with go test's fuzz cache directory.
#
# Go 1.26's fuzz coordinator can end a duration-bounded run with a bare "context deadline
# exceeded" when a worker is still busy as the time runs out (golang/go#75804, fixed in Go 1.27).
# That is no finding: no failing input is written. Such a run is checked by replaying the
# target's corpus; it counts as a failure only if the replay fails. A count budget (Nx) has no
# deadline and is what `make test` uses.
set -uo pipefail

fuzztime=${FUZZTIME:?set FUZZTIME}
status=0
passed=0 failed=0 flaked=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/log
cachedir=$(go env GOCACHE)/fuzz

for m in "$@"; do
	while read -r ip dir; do
		[ -n "$ip" ] || continue
		fns=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u)
		[ -n "$fns" ] || continue
		bin=$work/$(echo "$ip" | tr / _).test
		first=$(echo "$fns" | head -n1)
		echo "fuzz: building $ip"
		if ! (cd "$m" && go test -c -o "$bin" -fuzz "^$first\$" "$ip"); then
			failed=$((failed + $(echo "$fns" | wc -l)))
			status=1
			continue
		fi
		for fn in $fns; do
			echo "fuzz: $ip $fn ($fuzztime)"
			if (cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^$fn\$" -test.fuzztime "$fuzztime" -test.fuzzcachedir "$cachedir/$ip") 2>&1 | tee "$log"; then
				passed=$((passed + 1))
				continue
			fi
			if grep -q 'context deadline exceeded' "$log" && ! grep -qE 'Failing input written|panic:|^\s+\S+_test\.go:[0-9]+:' "$log" &&
				(cd "$dir" && "$bin" -test.count=1 -test.run "^$fn\$" >/dev/null 2>&1); then
				echo "fuzz: $fn ended on the fuzz coordinator's deadline (golang/go#75804) with no failing input; its corpus replays clean"
				flaked=$((flaked + 1))
				continue
			fi
			failed=$((failed + 1))
			status=1
		done
	done < <(cd "$m" && go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./...)
done
echo "fuzz: $passed passed, $failed failed, $flaked ended on the coordinator's deadline"
exit $status
