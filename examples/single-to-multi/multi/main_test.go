// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
	"mcr.dev/examples/internal/teamtest"
)

var fleet *envtest.Fleet

func TestMain(m *testing.M) {
	exampletest.RunChild(run)
	os.Exit(exampletest.Main(m, &fleet, "solo", "east", "west"))
}

// Without -fleet the ported binary is the single-cluster controller it was.
func TestMultiWithoutProviderIsSingleCluster(t *testing.T) {
	kubeconfig := exampletest.WriteKubeconfig(t, t.TempDir(), "solo.kubeconfig", fleet.Member("solo"))
	solo := exampletest.Client(t, fleet.Member("solo").Config())
	teamtest.CreateTeamNamespace(t, solo, "green-apps", "green")

	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{"-kubeconfig", kubeconfig, "-metrics-bind-address", "0", "-zap-log-level", "error"})
	})
	p.Eventually(t, "team ConfigMap in the only cluster", teamtest.HasTeamConfigMap(solo, "green-apps", "green"))
	p.Stop(t)
}

// With -fleet the same binary reconciles every cluster of the fleet.
func TestMultiWithFleet(t *testing.T) {
	dir := t.TempDir()
	exampletest.WriteKubeconfig(t, dir, "east.kubeconfig", fleet.Member("east"))
	exampletest.WriteKubeconfig(t, dir, "west.kubeconfig", fleet.Member("west"))
	host := exampletest.WriteKubeconfig(t, t.TempDir(), "solo.kubeconfig", fleet.Member("solo"))
	members := map[string]client.Client{
		"east": exampletest.Client(t, fleet.Member("east").Config()),
		"west": exampletest.Client(t, fleet.Member("west").Config()),
	}
	for _, c := range members {
		teamtest.CreateTeamNamespace(t, c, "red-apps", "red")
	}

	// A process of its own: the other test runs the program in this one already.
	p := exampletest.StartChild(t, "-kubeconfig", host, "-fleet", dir+"/", "-metrics-bind-address", "0", "-zap-log-level", "error")
	for name, c := range members {
		p.Eventually(t, "team ConfigMap in "+name, teamtest.HasTeamConfigMap(c, "red-apps", "red"))
	}
	p.Stop(t)
}

var update = flag.Bool("update", false, "rewrite the diff in ../README.md")

// The port from single to multi is the imports and a few lines, and README.md shows exactly
// that diff. Run with -update after changing either program.
func TestREADMEShowsTheDiff(t *testing.T) {
	before, err := os.ReadFile(filepath.Join("..", "single", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	diff, changed := unifiedDiff(code(string(before)), code(string(after)), "single/main.go", "multi/main.go")
	if changed > 25 {
		t.Errorf("the port changes %d lines; keep it to the imports and a few lines:\n%s", changed, diff)
	}

	readmePath := filepath.Join("..", "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)(<!-- diff:begin -->\n```diff\n)(.*?)(```\n<!-- diff:end -->)")
	m := block.FindSubmatch(readme)
	if m == nil {
		t.Fatalf("%s has no diff block (<!-- diff:begin --> ```diff ... ``` <!-- diff:end -->)", readmePath)
	}
	if string(m[2]) == diff {
		return
	}
	if *update {
		out := block.ReplaceAllLiteral(readme, []byte(string(m[1])+diff+string(m[3])))
		if err := os.WriteFile(readmePath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the diff in %s is out of date; run go test ./single-to-multi/multi -run TestREADMEShowsTheDiff -update. Want:\n%s", readmePath, diff)
}

// code returns the lines of a Go file from its package clause on: the package comments say
// different things on purpose.
func code(src string) []string {
	_, rest, _ := strings.Cut(src, "\npackage ")
	return strings.Split(strings.TrimSuffix("package "+rest, "\n"), "\n")
}

// unifiedDiff returns a unified diff of a and b with three lines of context, hunk headers without
// line numbers, and the number of changed (removed plus added) lines.
func unifiedDiff(a, b []string, nameA, nameB string) (string, int) {
	// Longest common subsequence, by dynamic programming: the files are small.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		line string
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i]}) // removals first, as diff -u writes them
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}

	const context = 3
	keep := make([]bool, len(ops))
	changed := 0
	for k, o := range ops {
		if o.kind == ' ' {
			continue
		}
		changed++
		for c := max(0, k-context); c <= min(len(ops)-1, k+context); c++ {
			keep[c] = true
		}
	}
	var sb strings.Builder
	sb.WriteString("--- " + nameA + "\n+++ " + nameB + "\n")
	for k, o := range ops {
		if !keep[k] {
			continue
		}
		if k == 0 || !keep[k-1] {
			sb.WriteString("@@\n")
		}
		sb.WriteString(strings.TrimRight(string(o.kind)+o.line, " ") + "\n")
	}
	return sb.String(), changed
}
