// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command docsnippets keeps the code blocks of the user guide identical to the sources they
// quote, so that every Go snippet in docs/ is code that the build compiles.
//
// A markdown file quotes a source with an HTML comment on the line right before a fenced code
// block:
//
//	<!-- snippet: examples/quickstart/main.go func:run -->
//	```go
//	...the body of func run...
//	```
//
// The path is relative to the repository root. The selector after it says what to quote:
//
//	(none)           the whole file
//	NAME             the lines between "// snippet:begin NAME" and "// snippet:end NAME"
//	                 ("#" instead of "//" in YAML and shell files)
//	func:NAME        the body of the top-level function NAME (func:Type.Method for a method)
//	decl:NAME        the whole declaration NAME (function, method, type, var or const), with its
//	                 doc comment
//
// Marker lines of any region are left out of what is quoted, the common indentation is removed,
// and leading and trailing blank lines are dropped.
//
// Check mode (the default) reports, as file:line, every block that differs from its source,
// every marker whose source or selector does not resolve, and every ```go block without a marker:
// Go in the docs must come from code that is compiled. Other languages (sh, yaml, text,
// mermaid, ...) may appear without a marker. With -compile it also runs `go vet` on every package
// that holds a quoted Go file, so a snippet whose source no longer builds fails the check too.
// With -write it rewrites stale blocks from their sources, and inserts a block after a marker
// that has none.
//
// With -refs it also checks that every make target, variable, command, flag, Go identifier and
// relative link a page names exists (refs.go says which names count as ours).
//
// Usage: docsnippets [-root dir] [-write] [-compile] [-refs] [path...]
//
// The paths (directories are walked for *.md files) default to "docs". `make docs` runs it with
// -write, `make verify-docs` with -compile and -refs.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// problem is one finding, reported as file:line: message.
type problem struct {
	file string
	line int
	msg  string
}

func (p problem) String() string {
	if p.line == 0 {
		return fmt.Sprintf("%s: %s", p.file, p.msg)
	}
	return fmt.Sprintf("%s:%d: %s", p.file, p.line, p.msg)
}

var (
	// markerRE matches the quoting comment of a markdown file.
	markerRE = regexp.MustCompile(`^<!--\s*snippet:\s*(\S+)(?:\s+(\S+))?\s*-->$`)
	// regionRE matches a region marker line in a source file.
	regionRE = regexp.MustCompile(`^\s*(?://|#)\s*snippet:(begin|end)\s+(\S+)\s*$`)
	// fenceRE matches an opening or closing code fence (up to three spaces of indentation).
	fenceRE = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})\\s*([^`\\s]*)")
)

// quote is a marker and the code block that follows it in a markdown file.
type quote struct {
	line     int    // 1-based line of the marker
	path     string // source, relative to the repository root
	selector string
	// Index (0-based) in the file's lines of the opening and closing fences; open is -1 when the
	// marker is not followed by a block.
	open, close int
	lang        string
}

// block is a fenced code block of a markdown file.
type block struct {
	open, close int // 0-based line indexes of the fences
	lang        string
	quote       *quote // nil for a block without marker
}

// scanMarkdown finds the code blocks and markers of a markdown file.
func scanMarkdown(file string, lines []string) ([]block, []*quote, []problem) {
	var (
		blocks   []block
		quotes   []*quote
		problems []problem
		pending  *quote // a marker waiting for its block on the next line
	)
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := markerRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if pending != nil {
				quotes = append(quotes, pending)
			}
			pending = &quote{line: i + 1, path: m[1], selector: m[2], open: -1, close: -1}
			continue
		}
		m := fenceRE.FindStringSubmatch(line)
		if m == nil {
			if pending != nil {
				quotes = append(quotes, pending)
				pending = nil
			}
			continue
		}
		fence := m[1]
		b := block{open: i, close: -1, lang: m[2]}
		for j := i + 1; j < len(lines); j++ {
			t := strings.TrimLeft(lines[j], " ")
			if len(lines[j])-len(t) <= 3 && strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" \t") == "" {
				b.close = j
				break
			}
		}
		if b.close < 0 {
			problems = append(problems, problem{file, i + 1, "code block is never closed"})
			b.close = len(lines)
		}
		if pending != nil && pending.line == i { // the marker is on the line right above
			pending.open, pending.close, pending.lang = b.open, b.close, b.lang
			b.quote = pending
			quotes = append(quotes, pending)
			pending = nil
		}
		blocks = append(blocks, b)
		i = b.close
	}
	if pending != nil {
		quotes = append(quotes, pending)
	}
	return blocks, quotes, problems
}

// dedent removes the indentation common to every non-blank line, trailing white space, and the
// blank lines at both ends.
func dedent(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	prefix, first := "", true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = indent, false
			continue
		}
		n := 0
		for n < len(prefix) && n < len(indent) && prefix[n] == indent[n] {
			n++
		}
		prefix = prefix[:n]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		out[i] = strings.TrimRight(strings.TrimPrefix(l, prefix), " \t")
	}
	return out
}

// withoutRegionMarkers drops snippet:begin/end lines.
func withoutRegionMarkers(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if !regionRE.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func splitLines(data []byte) []string {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// extract returns the lines a selector quotes from a source file.
func extract(path string, src []byte, selector string) ([]string, error) {
	lines := splitLines(src)
	switch {
	case selector == "":
		return dedent(withoutRegionMarkers(lines)), nil
	case strings.HasPrefix(selector, "func:"):
		return goFunc(path, src, strings.TrimPrefix(selector, "func:"), false)
	case strings.HasPrefix(selector, "decl:"):
		return goFunc(path, src, strings.TrimPrefix(selector, "decl:"), true)
	default:
		return region(lines, selector)
	}
}

// region returns the lines of the named region.
func region(lines []string, name string) ([]string, error) {
	begin, end := -1, -1
	for i, l := range lines {
		m := regionRE.FindStringSubmatch(l)
		if len(m) < 3 || m[2] != name {
			continue
		}
		switch {
		case m[1] == "begin" && begin >= 0:
			return nil, fmt.Errorf("region %q begins twice (lines %d and %d)", name, begin+1, i+1)
		case m[1] == "begin":
			begin = i
		case begin < 0:
			return nil, fmt.Errorf("region %q ends at line %d before it begins", name, i+1)
		case end >= 0:
			return nil, fmt.Errorf("region %q ends twice (lines %d and %d)", name, end+1, i+1)
		default:
			end = i
		}
	}
	switch {
	case begin < 0:
		return nil, fmt.Errorf("no region %q (no line \"// snippet:begin %s\")", name, name)
	case end < 0:
		return nil, fmt.Errorf("region %q begins at line %d and never ends", name, begin+1)
	}
	return dedent(withoutRegionMarkers(lines[begin+1 : end])), nil
}

// goFunc returns the body of a top-level function (whole=false), or a whole top-level
// declaration with its doc comment (whole=true). NAME is a function, Type.Method, or (whole
// only) a type, variable or constant.
func goFunc(path string, src []byte, name string, whole bool) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing: %w", err)
	}
	lines := splitLines(src)
	span := func(from, to token.Pos) []string {
		return dedent(withoutRegionMarkers(lines[fset.Position(from).Line-1 : fset.Position(to).Line]))
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if funcName(d) != name {
				continue
			}
			if whole {
				from := d.Pos()
				if d.Doc != nil {
					from = d.Doc.Pos()
				}
				return span(from, d.End()), nil
			}
			if d.Body == nil {
				return nil, fmt.Errorf("function %s has no body", name)
			}
			lb, rb := fset.Position(d.Body.Lbrace), fset.Position(d.Body.Rbrace)
			if lb.Line == rb.Line {
				return dedent([]string{string(src[lb.Offset+1 : rb.Offset])}), nil
			}
			return dedent(withoutRegionMarkers(lines[lb.Line : rb.Line-1])), nil
		case *ast.GenDecl:
			if !whole {
				continue
			}
			for _, s := range d.Specs {
				var doc *ast.CommentGroup
				found := false
				switch s := s.(type) {
				case *ast.TypeSpec:
					found, doc = s.Name.Name == name, s.Doc
				case *ast.ValueSpec:
					for _, n := range s.Names {
						found = found || n.Name == name
					}
					doc = s.Doc
				}
				if !found {
					continue
				}
				if !d.Lparen.IsValid() { // a single spec: the declaration with its comment
					from := d.Pos()
					if d.Doc != nil {
						from = d.Doc.Pos()
					}
					return span(from, d.End()), nil
				}
				from := s.Pos()
				if doc != nil {
					from = doc.Pos()
				}
				return span(from, s.End()), nil
			}
		}
	}
	if whole {
		return nil, fmt.Errorf("no top-level declaration %s", name)
	}
	return nil, fmt.Errorf("no top-level function %s", name)
}

// funcName is "Name" for a function and "Type.Name" for a method.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

// langOf is the fence language of a block inserted for a source file.
func langOf(path string) string {
	switch filepath.Ext(path) {
	case ".go":
		return "go"
	case ".yaml", ".yml":
		return "yaml"
	case ".mmd":
		return "mermaid"
	case ".sh":
		return "sh"
	default:
		return "text"
	}
}

// result is what checking one markdown file found.
type result struct {
	problems  []problem
	rewritten []string // the file's new lines when -write changed something, else nil
	goSources []string // Go files quoted, relative to the root
	quotes    int
}

// checkFile checks (and with write, repairs) one markdown file. name is the file as reported.
func checkFile(root, name string, data []byte, write bool) result {
	lines := splitLines(data)
	blocks, quotes, problems := scanMarkdown(name, lines)
	res := result{problems: problems, quotes: len(quotes)}
	for _, b := range blocks {
		if b.quote == nil && b.lang == "go" {
			res.problems = append(res.problems, problem{name, b.open + 1,
				"```go block without a <!-- snippet: path [selector] --> marker: quote Go from compiled code"})
		}
	}
	type edit struct {
		q    *quote
		want []string
	}
	var edits []edit
	for _, q := range quotes {
		if filepath.IsAbs(q.path) || strings.HasPrefix(filepath.Clean(q.path), "..") {
			res.problems = append(res.problems, problem{name, q.line, fmt.Sprintf("snippet path %s must be relative to the repository root", q.path)})
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, q.path))
		if err != nil {
			res.problems = append(res.problems, problem{name, q.line, fmt.Sprintf("snippet source %s: %v", q.path, pathError(err))})
			continue
		}
		want, err := extract(q.path, src, q.selector)
		if err != nil {
			res.problems = append(res.problems, problem{name, q.line, fmt.Sprintf("snippet %s %s: %v", q.path, q.selector, err)})
			continue
		}
		if filepath.Ext(q.path) == ".go" && !slices.Contains(res.goSources, q.path) {
			res.goSources = append(res.goSources, q.path)
		}
		if q.open < 0 {
			if write {
				edits = append(edits, edit{q, want})
				continue
			}
			res.problems = append(res.problems, problem{name, q.line, "snippet marker is not followed by a code block (run make docs)"})
			continue
		}
		if slices.Equal(lines[q.open+1:q.close], want) {
			continue
		}
		if write {
			edits = append(edits, edit{q, want})
			continue
		}
		res.problems = append(res.problems, problem{name, q.open + 1,
			fmt.Sprintf("code block differs from %s %s (run make docs)", q.path, q.selector)})
	}
	if len(edits) == 0 {
		return res
	}
	// Apply from the bottom up so that earlier line indexes stay valid.
	slices.SortFunc(edits, func(a, b edit) int { return b.q.line - a.q.line })
	out := slices.Clone(lines)
	for _, e := range edits {
		if e.q.open < 0 {
			ins := append([]string{"```" + langOf(e.q.path)}, e.want...)
			ins = append(ins, "```")
			out = slices.Insert(out, e.q.line, ins...)
			continue
		}
		out = slices.Replace(out, e.q.open+1, e.q.close, e.want...)
	}
	res.rewritten = out
	return res
}

// pathError drops the path from a file error, which the message names already.
func pathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// markdownFiles lists the *.md files of the given files and directories, sorted.
func markdownFiles(root string, paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		full := filepath.Join(root, p)
		info, err := os.Stat(full)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(full, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// moduleDir returns the nearest directory at or above dir (inside root) that holds a go.mod.
func moduleDir(root, dir string) (string, bool) {
	for {
		if _, err := os.Stat(filepath.Join(root, dir, "go.mod")); err == nil {
			return dir, true
		}
		if dir == "." || dir == "" {
			return "", false
		}
		dir = filepath.Dir(dir)
	}
}

// vet runs `go vet` on the packages that hold the quoted Go files, one run per module, and
// returns a problem per failing module.
func vet(root string, sources []string, quotedBy map[string][]string) []problem {
	var problems []problem
	pkgs := map[string][]string{} // module dir -> package patterns
	for _, src := range sources {
		dir := filepath.Dir(src)
		mod, ok := moduleDir(root, dir)
		if !ok {
			problems = append(problems, problem{src, 0, fmt.Sprintf("is quoted by %s but is in no Go module, so nothing compiles it",
				strings.Join(quotedBy[src], ", "))})
			continue
		}
		rel, err := filepath.Rel(mod, dir)
		if err != nil {
			continue
		}
		pattern := "./" + filepath.ToSlash(rel)
		if !slices.Contains(pkgs[mod], pattern) {
			pkgs[mod] = append(pkgs[mod], pattern)
		}
	}
	for _, mod := range slices.Sorted(maps.Keys(pkgs)) {
		patterns := pkgs[mod]
		slices.Sort(patterns)
		cmd := exec.Command("go", append([]string{"vet"}, patterns...)...)
		cmd.Dir = filepath.Join(root, mod)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			var quoted []string
			for _, src := range sources {
				if m, _ := moduleDir(root, filepath.Dir(src)); m == mod {
					quoted = append(quoted, quotedBy[src]...)
				}
			}
			slices.Sort(quoted)
			quoted = slices.Compact(quoted)
			problems = append(problems, problem{mod, 0, fmt.Sprintf("go vet %s failed (%v); snippets quoted by %s may not build:\n%s",
				strings.Join(patterns, " "), err, strings.Join(quoted, ", "), strings.TrimSpace(out.String()))})
		}
	}
	return problems
}

func run(root string, paths []string, write, compile, refs bool) (problems []problem, summary string, err error) {
	files, err := markdownFiles(root, paths)
	if err != nil {
		return nil, "", err
	}
	var ix *repoIndex
	if refs {
		if ix, err = newRepoIndex(root); err != nil {
			return nil, "", fmt.Errorf("indexing the repository: %w", err)
		}
	}
	var (
		sources  []string
		quotedBy = map[string][]string{}
		quotes   int
		changed  []string
	)
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, "", err
		}
		res := checkFile(root, name, data, write)
		problems = append(problems, res.problems...)
		if ix != nil {
			problems = append(problems, checkRefs(ix, name, data)...)
		}
		quotes += res.quotes
		for _, src := range res.goSources {
			if !slices.Contains(sources, src) {
				sources = append(sources, src)
			}
			quotedBy[src] = append(quotedBy[src], name)
		}
		if res.rewritten != nil {
			out := strings.Join(res.rewritten, "\n") + "\n"
			if err := os.WriteFile(filepath.Join(root, name), []byte(out), 0o644); err != nil {
				return nil, "", err
			}
			changed = append(changed, name)
		}
	}
	if compile && len(sources) > 0 {
		problems = append(problems, vet(root, sources, quotedBy)...)
	}
	summary = fmt.Sprintf("%d markdown files, %d quoted snippets from %d Go files", len(files), quotes, len(sources))
	if write {
		summary += fmt.Sprintf(", %d files rewritten", len(changed))
		for _, c := range changed {
			summary += "\n  rewrote " + c
		}
	}
	return problems, summary, nil
}

func main() {
	root := flag.String("root", ".", "repository root; snippet paths are relative to it")
	write := flag.Bool("write", false, "rewrite stale code blocks from their sources")
	compile := flag.Bool("compile", false, "also run go vet on every package holding a quoted Go file")
	refs := flag.Bool("refs", false, "also check that the make targets, variables, commands, flags, Go identifiers and relative links the pages name exist")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "Usage: docsnippets [-root dir] [-write] [-compile] [-refs] [markdown file or dir...] (default: docs)")
		flag.PrintDefaults()
	}
	flag.Parse()
	paths := flag.Args()
	if len(paths) == 0 {
		paths = []string{"docs"}
	}
	problems, summary, err := run(*root, paths, *write, *compile, *refs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docsnippets:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "docsnippets: %d problems (%s)\n", len(problems), summary)
		os.Exit(1)
	}
	fmt.Println("docsnippets: ok:", summary)
}
