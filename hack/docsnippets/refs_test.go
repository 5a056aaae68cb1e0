// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"slices"
	"strings"
	"testing"
)

// refsTree is a small repository: a Makefile, a library package with a type, its alias as
// imports spell it, a command with flags (one named by a constant, one from a package of ours
// it imports) and a page linking into another.
var refsTree = map[string]string{
	"Makefile": `TEST_ARGS ?=
.PHONY: test lint
test: ## run tests
	go test $(TEST_ARGS) ./...
lint: tools
$(TOOLS):
	true
`,
	"go.mod": "module mcr.dev/demo\n\ngo 1.26\n",
	"kit/kit_test.go": `package kit

import "testing"

func TestStart(t *testing.T) {}

func FuzzParse(f *testing.F) {}

func FuzzOther(f *testing.F) {}

func BenchmarkStart(b *testing.B) {}
`,
	"kit/kit.go": `package kit

// Options configure a Provider.
type Options struct {
	Logger string
	Inner  Inner
	Embedded
}

// Inner is nested.
type Inner struct{ Depth int }

// Embedded is embedded in Options.
type Embedded struct{ Promoted bool }

// Provider is a provider.
type Provider struct{}

// Start starts it.
func (p *Provider) Start() {}

// New makes a Provider.
func New(Options) *Provider { return nil }

// Alias is Options by another name.
type Alias = Options

const env = "MCR_DEMO_TIMEOUT"
`,
	"user/user.go": `package user

import mckit "mcr.dev/demo/kit"

var _ = mckit.New
`,
	"flags/flags.go": `package flags

import "flag"

// Name is the flag Bind defines.
const Name = "shared-flag"

// Bind defines the shared flags.
func Bind(fs *flag.FlagSet) {
	fs.Bool("dry-run", false, "")
	fs.String(Name, "", "")
}
`,
	"cmd/tool/main.go": `package main

import (
	"flag"

	"mcr.dev/demo/flags"
)

func main() {
	var n int
	flag.IntVar(&n, "count", 1, "")
	flag.String("name", "", "")
	flags.Bind(flag.CommandLine)
	flag.Parse()
}
`,
	"docs/other.md": "# Other page\n\n## The `Options` type\n\n## Twice\n\n## Twice\n\n<a id=\"custom\"></a>\n",
}

// refsPage uses every kind of name correctly.
const refsPage = "# Page\n\n" +
	"Run `make test`, `make test TEST_ARGS=-v`, `TEST_ARGS=-v make lint` and read `MCR_DEMO_TIMEOUT`.\n" +
	"Use `kit.Options`, `kit.Options.Logger`, `kit.Options.Inner.Depth`, `kit.Options.Promoted`,\n" +
	"`kit.Alias.Logger`, `kit.Provider.Start`, `mckit.New(opts)`, `kit.Options{Logger: x}`,\n" +
	"`mcr.dev/demo/kit.Options`, `ctrl.Anything`, `metav1.ObjectMeta`, `kit.Options.unexported`, `doc.go`.\n" +
	"[other](other.md), [section](other.md#the-options-type), [twice](other.md#twice-1),\n" +
	"[custom](other.md#custom), [here](#page), [site](https://example.com/x.md#nope).\n" +
	"`TestStart`, `TestStart/sub`, `BenchmarkStart`, `FuzzParse(f)`, `Testing`.\n\n" +
	"```sh\n" +
	"go run ./cmd/tool -count 3 -dry-run -shared-flag=x -name n positional -not-a-flag\n" +
	"cd cmd && go run ./tool positional -y\n" +
	"tool -count 2\n" +
	"go run ./your-controller -anything\n" +
	"go run example.com/other/cmd -anything\n" +
	"go run ./<dir> -anything\n" +
	"make test # make nothing-here\n" +
	"```\n\n" +
	"```yaml\nmake: not-a-command\n```\n"

func TestRefsAcceptsNamesThatExist(t *testing.T) {
	files := map[string]string{"docs/page.md": refsPage}
	for k, v := range refsTree {
		files[k] = v
	}
	root := writeTree(t, files)
	problems, _, err := run(root, []string{"docs"}, false, false, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("unexpected problem: %s", p)
	}
}

func TestRefsReportsNamesThatDoNotExist(t *testing.T) {
	tests := []struct {
		name, page, want string
	}{
		{"make target in a code span", "Run `make tset`.", `make target "tset" is not defined`},
		{"make target in a shell block", "```sh\nmake lint && make lnit\n```", `make target "lnit" is not defined`},
		{"make target after variables", "```\nFOO_BAR=1 make test\n```", "variable FOO_BAR is read nowhere"},
		{"make variable after the target", "`make test TEST_ARG=-v`", "variable TEST_ARG is read nowhere"},
		{"MCR variable in prose", "Set MCR_DEMO_TIMOUT to 1s.", "environment variable MCR_DEMO_TIMOUT is read nowhere"},
		{"package-level identifier", "`kit.NewProvider`", "`kit.NewProvider` does not exist in mcr.dev/demo/kit"},
		{"identifier through an import alias", "`mckit.Old`", "`mckit.Old` does not exist in mcr.dev/demo/kit"},
		{"field", "`kit.Options.Log`", "`kit.Options.Log` does not exist"},
		{"field of a field", "`kit.Options.Inner.Width`", "`kit.Options.Inner.Width` does not exist"},
		{"field through an alias", "`kit.Alias.Log`", "`kit.Alias.Log` does not exist"},
		{"method", "`kit.Provider.Stop`", "`kit.Provider.Stop` does not exist"},
		{"composite literal key", "`kit.Options{Log: l}`", "has no field Log"},
		{"import path", "`mcr.dev/demo/kit.Clusters`", "`mcr.dev/demo/kit.Clusters` does not exist"},
		{"unknown package of ours", "`mcr.dev/demo/clusters.Clusters`", "no package mcr.dev/demo/clusters"},
		{"command that does not exist", "```sh\ngo run ./cmd/tol\n```", "go run ./cmd/tol: no such package of ours"},
		{"package that is not a command", "```sh\ngo run ./kit\n```", "package mcr.dev/demo/kit is not a command"},
		{"flag", "```sh\ngo run ./cmd/tool -count 1 -nameless x\n```", "flag -nameless is not defined by mcr.dev/demo/cmd/tool"},
		{"flag of an installed command", "```sh\ntool --dryrun\n```", "tool: flag -dryrun is not defined"},
		{"flag in a continued line", "```sh\ngo run mcr.dev/demo/cmd/tool \\\n  -count 1 \\\n  -verbose\n```", "flag -verbose is not defined"},
		{"missing file", "[x](nope.md)", "link nope.md: docs/nope.md does not exist"},
		{"missing heading", "[x](other.md#options)", "other.md has no heading #options"},
		{"missing heading on the same page", "[x](#elsewhere)", "has no heading #elsewhere"},
		{"link out of the repository", "[x](../../x.md)", "leaves the repository"},
		{"test function", "`TestStop`", "no test function TestStop"},
		{"subtest of a test function", "`TestStop/east`", "no test function TestStop"},
		{"fuzz target left out", "<!-- refs: every fuzz target -->\n`FuzzParse`", "does not name FuzzOther"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"docs/page.md": "# Page\n\n" + tt.page + "\n"}
			for k, v := range refsTree {
				files[k] = v
			}
			root := writeTree(t, files)
			problems, _, err := run(root, []string{"docs"}, false, false, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != 1 || !strings.Contains(problems[0].String(), tt.want) {
				t.Errorf("problems = %q, want one containing %q", problems, tt.want)
			}
			if len(problems) == 1 && !strings.HasPrefix(problems[0].String(), "docs/page.md:") {
				t.Errorf("problem %q does not name the page and line", problems[0])
			}
		})
	}
}

// TestRefsOffByDefault keeps `make docs` (-write) and the plain check quiet about names.
func TestRefsOffByDefault(t *testing.T) {
	files := map[string]string{"docs/page.md": "`make nope` `kit.Nope`\n"}
	for k, v := range refsTree {
		files[k] = v
	}
	root := writeTree(t, files)
	problems, _, err := run(root, []string{"docs"}, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems without -refs: %q", problems)
	}
}

func TestSlugify(t *testing.T) {
	for heading, want := range map[string]string{
		" The `Options` type":             "the-options-type",
		" controller-runtime v0.25":       "controller-runtime-v025",
		" [Linked](x.md) heading, again!": "linked-heading-again",
		" Ünïcode & co.":                  "ünïcode--co",
	} {
		if got := slugify(heading); got != want {
			t.Errorf("slugify(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestMakefileTargets(t *testing.T) {
	ix := &repoIndex{targets: map[string]bool{}}
	ix.readMakefile([]byte(refsTree["Makefile"] + "a b: c\nX := y\nY ?= z\n%.o: %.c\n"))
	var got []string
	for t := range ix.targets {
		got = append(got, t)
	}
	slices.Sort(got)
	if want := []string{"%.o", "a", "b", "lint", "test"}; !slices.Equal(got, want) {
		t.Errorf("targets = %q, want %q", got, want)
	}
}
