// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const goSource = `package demo

import "fmt"

// Greet says hello.
//
// It is quoted whole by decl:Greet.
func Greet(name string) {
	// snippet:begin greeting
	msg := "hello " + name
	// snippet:begin print
	fmt.Println(msg)
	// snippet:end print
	// snippet:end greeting
}

type T struct{}

// Run is a method.
func (t *T) Run() { fmt.Println("run") }

// Limit bounds things.
const Limit = 3

var (
	// First is first.
	First = 1
	Second = 2
)
`

// writeTree writes files (path -> content) under a new temporary root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestExtract(t *testing.T) {
	tests := []struct {
		selector string
		want     string
		wantErr  string
	}{
		{selector: "greeting", want: "msg := \"hello \" + name\nfmt.Println(msg)"},
		{selector: "print", want: "fmt.Println(msg)"},
		{selector: "func:Greet", want: "msg := \"hello \" + name\nfmt.Println(msg)"},
		{selector: "func:T.Run", want: `fmt.Println("run")`},
		{selector: "decl:T.Run", want: "// Run is a method.\nfunc (t *T) Run() { fmt.Println(\"run\") }"},
		{selector: "decl:Greet", want: "// Greet says hello.\n//\n// It is quoted whole by decl:Greet.\nfunc Greet(name string) {\n\tmsg := \"hello \" + name\n\tfmt.Println(msg)\n}"},
		{selector: "decl:T", want: "type T struct{}"},
		{selector: "decl:Limit", want: "// Limit bounds things.\nconst Limit = 3"},
		{selector: "decl:First", want: "// First is first.\nFirst = 1"},
		{selector: "decl:Second", want: "Second = 2"},
		{selector: "nothere", wantErr: `no region "nothere"`},
		{selector: "func:Missing", wantErr: "no top-level function Missing"},
		{selector: "func:Limit", wantErr: "no top-level function Limit"},
		{selector: "decl:Missing", wantErr: "no top-level declaration Missing"},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			got, err := extract("demo.go", []byte(goSource), tt.selector)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(got, "\n"); s != tt.want {
				t.Errorf("got\n%s\nwant\n%s", s, tt.want)
			}
		})
	}
}

func TestRegionErrors(t *testing.T) {
	tests := map[string]string{
		"never ends":       "a\n// snippet:begin x\nb\n",
		"begins twice":     "// snippet:begin x\n// snippet:begin x\n// snippet:end x\n",
		"ends twice":       "// snippet:begin x\n// snippet:end x\n// snippet:end x\n",
		"before it begins": "// snippet:end x\n// snippet:begin x\n",
	}
	for want, src := range tests {
		_, err := extract("f.go", []byte(src), "x")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error = %v, want one containing %q", src, err, want)
		}
	}
}

func TestExtractWholeFileAndYAML(t *testing.T) {
	yaml := "# header\nkind: Role\n# snippet:begin rules\nrules:\n  - verbs: [get]\n# snippet:end rules\n"
	got, err := extract("rbac.yaml", []byte(yaml), "rules")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"rules:", "  - verbs: [get]"}; !slices.Equal(got, want) {
		t.Errorf("region = %q, want %q", got, want)
	}
	got, err = extract("rbac.yaml", []byte(yaml), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"# header", "kind: Role", "rules:", "  - verbs: [get]"}; !slices.Equal(got, want) {
		t.Errorf("whole file = %q, want %q (marker lines dropped)", got, want)
	}
}

func TestDedent(t *testing.T) {
	got := dedent([]string{"", "\t\tif x {", "", "\t\t\ty()", "\t\t}", "  "})
	want := []string{"if x {", "", "\ty()", "}"}
	if !slices.Equal(got, want) {
		t.Errorf("dedent = %q, want %q", got, want)
	}
}

func TestCheckFile(t *testing.T) {
	root := writeTree(t, map[string]string{"pkg/demo.go": goSource})
	doc := strings.Join([]string{
		"# Title",
		"<!-- snippet: pkg/demo.go print -->",
		"```go",
		"fmt.Println(msg)",
		"```",
		"<!-- snippet: pkg/demo.go func:T.Run -->",
		"```go",
		"stale",
		"```",
		"```sh",
		"make docs",
		"```",
		"```go",
		"unsourced()",
		"```",
		"````markdown",
		"```go",
		"inside a longer fence: not a block of its own",
		"```",
		"````",
		"<!-- snippet: pkg/missing.go -->",
		"```go",
		"```",
		"<!-- snippet: pkg/demo.go nothere -->",
		"```go",
		"```",
		"<!-- snippet: pkg/demo.go decl:T -->",
		"no block follows",
		"<!-- snippet: ../outside.go -->",
		"```go",
		"```",
		"",
	}, "\n")
	res := checkFile(root, "doc.md", []byte(doc), false)
	var got []string
	for _, p := range res.problems {
		got = append(got, p.String())
	}
	want := []string{
		"doc.md:13: ```go block without a <!-- snippet: path [selector] --> marker",
		"doc.md:7: code block differs from pkg/demo.go func:T.Run",
		"doc.md:21: snippet source pkg/missing.go: no such file or directory",
		"doc.md:24: snippet pkg/demo.go nothere: no region \"nothere\"",
		"doc.md:27: snippet marker is not followed by a code block",
		"doc.md:29: snippet path ../outside.go must be relative to the repository root",
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d problems", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	if res.quotes != 6 {
		t.Errorf("quotes = %d, want 6", res.quotes)
	}
	if !slices.Equal(res.goSources, []string{"pkg/demo.go"}) {
		t.Errorf("goSources = %q", res.goSources)
	}
	if res.rewritten != nil {
		t.Error("check mode rewrote the file")
	}
}

func TestWriteRepairsAndInserts(t *testing.T) {
	root := writeTree(t, map[string]string{
		"pkg/demo.go": goSource,
		"docs/a.md": strings.Join([]string{
			"<!-- snippet: pkg/demo.go func:T.Run -->",
			"```go",
			"stale",
			"line",
			"```",
			"text",
			"<!-- snippet: pkg/demo.go greeting -->",
			"",
			"<!-- snippet: pkg/demo.go print -->",
			"```go",
			"fmt.Println(msg)",
			"```",
		}, "\n") + "\n",
	})
	problems, summary, err := run(root, []string{"docs"}, true, false, false)
	if err != nil || len(problems) > 0 {
		t.Fatalf("write: err %v, problems %v", err, problems)
	}
	if !strings.Contains(summary, "1 files rewritten") {
		t.Errorf("summary = %q", summary)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs/a.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"<!-- snippet: pkg/demo.go func:T.Run -->",
		"```go",
		`fmt.Println("run")`,
		"```",
		"text",
		"<!-- snippet: pkg/demo.go greeting -->",
		"```go",
		`msg := "hello " + name`,
		"fmt.Println(msg)",
		"```",
		"",
		"<!-- snippet: pkg/demo.go print -->",
		"```go",
		"fmt.Println(msg)",
		"```",
	}, "\n") + "\n"
	if string(data) != want {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", data, want)
	}
	// Now in sync: the check passes and a second write changes nothing.
	problems, _, err = run(root, []string{"docs"}, false, false, false)
	if err != nil || len(problems) > 0 {
		t.Fatalf("check after write: err %v, problems %v", err, problems)
	}
	_, summary, _ = run(root, []string{"docs"}, true, false, false)
	if !strings.Contains(summary, "0 files rewritten") {
		t.Errorf("second write: %q", summary)
	}
}

func TestUnclosedFence(t *testing.T) {
	res := checkFile(t.TempDir(), "x.md", []byte("```sh\nls\n"), false)
	if len(res.problems) != 1 || !strings.Contains(res.problems[0].msg, "never closed") {
		t.Errorf("problems = %v", res.problems)
	}
}

// TestCompileFindsBrokenSource runs go vet on a module whose quoted file does not compile.
func TestCompileFindsBrokenSource(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root := writeTree(t, map[string]string{
		"mod/go.mod":     "module example.com/mod\n\ngo 1.22\n",
		"mod/ok/ok.go":   "package ok\n\n// F is fine.\nfunc F() int {\n\treturn 1\n}\n",
		"mod/bad/bad.go": "package bad\n\n// G is broken.\nfunc G() int {\n\treturn undefined\n}\n",
		"loose/x.go":     "package loose\n\nfunc H() {}\n",
		"docs/ok.md":     "<!-- snippet: mod/ok/ok.go func:F -->\n```go\nreturn 1\n```\n",
	})
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	problems, _, err := run(root, []string{"docs"}, false, true, false)
	if err != nil || len(problems) > 0 {
		t.Fatalf("a module that builds: err %v, problems %v", err, problems)
	}

	if err := os.WriteFile(filepath.Join(root, "docs/bad.md"), []byte(
		"<!-- snippet: mod/bad/bad.go func:G -->\n```go\nreturn undefined\n```\n"+
			"<!-- snippet: loose/x.go func:H -->\n```go\n```\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, _, err = run(root, []string{"docs"}, false, true, false)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.String())
	}
	all := strings.Join(msgs, "\n")
	if len(problems) != 2 || !strings.Contains(all, "undefined: undefined") || !strings.Contains(all, "docs/bad.md") ||
		!strings.Contains(all, "loose/x.go: is quoted by docs/bad.md but is in no Go module") {
		t.Errorf("problems:\n%s", all)
	}
}
