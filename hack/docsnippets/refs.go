// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The reference check (-refs) reports every name of ours a page uses that does not exist:
//
//   - a make target (`make foo`, in code spans and shell blocks) the Makefile does not define;
//   - a variable: MCR_* anywhere on the page, and VAR in `VAR=x make ...` or `make t VAR=x`,
//     that no code, script or the Makefile mentions;
//   - a command of ours (`go run ./x`, `go run mcr.dev/...`, or an installed cmd/<name>) that
//     does not exist, or a flag it does not define;
//   - a qualified Go identifier in a code span (`kit.Options`, `envtest.Options.Members`) whose
//     qualifier names a package of ours (by package name or an import alias used in the
//     repository) and which none of the packages of that name declares;
//   - a relative link to a file or heading that does not exist;
//   - a test function in a code span (`TestX`, `FuzzX`, `BenchmarkX`) that no test file declares;
//     a page with the comment <!-- refs: every fuzz target --> must name every fuzz target.
//
// Names that are not ours (ctrl.Options where ctrl is controller-runtime only, GOFLAGS, ...)
// are not checked: the check is meant to be quiet unless something is wrong.

var (
	codeSpanRE = regexp.MustCompile("(`+)([^`]+?)(`+)")
	// identRE matches a qualified identifier: qual.Name with optional .Member suffixes.
	identRE = regexp.MustCompile(`(^|[^\w./-])([a-z][a-zA-Z0-9]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)
	// pathIdentRE matches an identifier qualified by one of our import paths.
	pathIdentRE = regexp.MustCompile(`\b(mcr\.dev(?:/[a-z0-9_-]+)*)\.([A-Z][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)`)
	// literalRE matches the first key of a composite literal: qual.Type{Field: ...}.
	literalRE = regexp.MustCompile(`(^|[^\w./-])([a-z][a-zA-Z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\[[^\]]*\])?\{\s*([A-Z][A-Za-z0-9_]*):`)
	mcrVarRE  = regexp.MustCompile(`\bMCR_[A-Z0-9_]*[A-Z0-9]\b`)
	varRE     = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=`)
	linkRE    = regexp.MustCompile(`!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refDefRE  = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	anchorRE  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// testNameRE matches a code span that names a test function (TestX, TestX/sub, FuzzX(...)).
	testNameRE = regexp.MustCompile(`^((?:Test|Fuzz|Benchmark)[A-Z_]\w*)(?:/\S*|\(.*\))?$`)
	// shellSepRE splits a shell line into commands.
	shellSepRE = regexp.MustCompile(`&&|\|\||;|\|`)
	// targetNameRE matches what a make target in the docs looks like (not prose after `make`).
	targetNameRE = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)
	// everyFuzzRE matches the comment by which a page promises to name every fuzz target.
	everyFuzzRE = regexp.MustCompile(`^<!--\s*refs:\s*every fuzz target\s*-->$`)
)

// shellLangs are the code block languages whose lines are read as commands.
var shellLangs = map[string]bool{"": true, "sh": true, "bash": true, "shell": true, "console": true, "text": true, "make": true}

// notOurVars are variables of Go and the system, which a page may set for make without the
// repository reading them.
var notOurVars = map[string]bool{"PATH": true, "HOME": true, "KUBECONFIG": true, "KUBEBUILDER_ASSETS": true, "TMPDIR": true}

// checkRefs checks the names a markdown file uses (see above).
func checkRefs(ix *repoIndex, name string, data []byte) []problem {
	lines := splitLines(data)
	blocks, _, _ := scanMarkdown(name, lines)
	inBlock := make([]*block, len(lines))
	for i := range blocks {
		for j := blocks[i].open; j <= blocks[i].close && j < len(lines); j++ {
			inBlock[j] = &blocks[i]
		}
	}
	c := &refChecker{ix: ix, file: name, dir: path.Dir(filepath.ToSlash(name))}
	named := map[string]bool{} // test functions named in code spans
	everyFuzz := -1
	for i, line := range lines {
		if everyFuzzRE.MatchString(strings.TrimSpace(line)) {
			everyFuzz = i
		}
		for _, v := range mcrVarRE.FindAllString(line, -1) {
			if !ix.words[v] {
				c.report(i, "environment variable %s is read nowhere in the code, the Makefile or the scripts", v)
			}
		}
		if inBlock[i] != nil {
			continue
		}
		for _, m := range codeSpanRE.FindAllStringSubmatch(line, -1) {
			if len(m[1]) != len(m[3]) {
				continue
			}
			span := strings.TrimSpace(m[2])
			c.commandLine(i, span, nil)
			c.identifiers(i, span)
			if t := testNameRE.FindStringSubmatch(span); t != nil {
				named[t[1]] = true
				if !ix.testFuncs[t[1]] {
					c.report(i, "no test function %s in the repository", t[1])
				}
			}
		}
		c.links(i, codeSpanRE.ReplaceAllString(line, ""))
	}
	if everyFuzz >= 0 {
		var missing []string
		for f := range ix.testFuncs {
			if strings.HasPrefix(f, "Fuzz") && !named[f] {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			c.report(everyFuzz, "the page promises every fuzz target but does not name %s", strings.Join(slices.Sorted(slices.Values(missing)), ", "))
		}
	}
	for _, b := range blocks {
		if !shellLangs[b.lang] {
			continue
		}
		cwd := []string{}
		for i := b.open + 1; i < b.close; i++ {
			// Join continued lines.
			text, first := lines[i], i
			for strings.HasSuffix(text, "\\") && i+1 < b.close {
				i++
				text = strings.TrimSuffix(text, "\\") + " " + lines[i]
			}
			cwd = c.commandLine(first, strings.TrimPrefix(strings.TrimSpace(text), "$ "), cwd)
		}
	}
	return c.problems
}

type refChecker struct {
	ix       *repoIndex
	file     string
	dir      string
	problems []problem
}

func (c *refChecker) report(line int, format string, args ...any) {
	c.problems = append(c.problems, problem{c.file, line + 1, fmt.Sprintf(format, args...)})
}

// commandLine checks the commands of one shell line (split at ;, &&, || and |) and returns the
// directories a later line runs in after a `cd`.
func (c *refChecker) commandLine(line int, text string, cwd []string) []string {
	if i := strings.Index(text, " #"); i >= 0 {
		text = text[:i]
	}
	if strings.HasPrefix(text, "#") {
		return cwd
	}
	for _, cmd := range shellSepRE.Split(text, -1) {
		words := strings.Fields(cmd)
		var vars []string
		for len(words) > 0 && varRE.MatchString(words[0]) {
			vars = append(vars, varRE.FindStringSubmatch(words[0])[1])
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "cd":
			if len(words) > 1 && !strings.ContainsAny(words[1], "$~") {
				cwd = []string{words[1]}
			}
		case "make":
			c.makeCommand(line, vars, words[1:])
		case "go":
			if len(words) > 2 && (words[1] == "run" || words[1] == "install" || words[1] == "build") {
				c.goCommand(line, words[1], words[2:], cwd)
			}
		default:
			if p := c.ix.commandNames()[words[0]]; p != nil && len(words) > 1 {
				c.flags(line, words[0], p, words[1:])
			}
		}
	}
	return cwd
}

// makeCommand checks the targets and variables of a make command line.
func (c *refChecker) makeCommand(line int, vars, args []string) {
	for _, v := range vars {
		c.makeVar(line, v)
	}
	for _, a := range args {
		switch {
		case a == "-C" || a == "-f" || strings.HasPrefix(a, "--directory") || strings.HasPrefix(a, "--file"):
			return // another Makefile
		case strings.HasPrefix(a, "-"):
		case varRE.MatchString(a):
			c.makeVar(line, varRE.FindStringSubmatch(a)[1])
		case targetNameRE.MatchString(a):
			if !c.ix.targets[a] {
				c.report(line, "make target %q is not defined in the Makefile", a)
			}
		default:
			return // not a target: prose, a placeholder, the rest of a sentence
		}
	}
}

func (c *refChecker) makeVar(line int, v string) {
	if notOurVars[v] || strings.HasPrefix(v, "GO") || strings.HasPrefix(v, "CGO_") || c.ix.words[v] {
		return
	}
	c.report(line, "variable %s is read nowhere in the Makefile, the code or the scripts", v)
}

// goCommand checks `go run|install|build [build flags] pkg [program flags]`.
func (c *refChecker) goCommand(line int, verb string, args, cwd []string) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if !strings.Contains(args[0], "=") && (args[0] == "-tags" || args[0] == "-o" || args[0] == "-C" || args[0] == "-ldflags") {
			if args[0] == "-C" {
				return
			}
			args = args[1:]
		}
		args = args[1:]
	}
	// A pattern, a file or a placeholder (./<dir>) names no one package.
	if len(args) == 0 || strings.ContainsAny(args[0], "<>$*") || strings.Contains(args[0], "...") || strings.HasSuffix(args[0], ".go") {
		return
	}
	dirs := append(append([]string{}, cwd...), c.dir, ".")
	for mod, dir := range c.ix.modules {
		if strings.HasPrefix(mod, "mcr.dev/") {
			dirs = append(dirs, dir)
		}
	}
	pkg, ours := c.ix.command(args[0], dirs)
	if !ours || strings.Contains(args[0], "your-") || strings.Contains(args[0], "my-") {
		return
	}
	if pkg == nil {
		c.report(line, "go %s %s: no such package of ours", verb, args[0])
		return
	}
	if pkg.name != "main" {
		c.report(line, "go %s %s: package %s is not a command", verb, args[0], pkg.importPath)
		return
	}
	if verb == "run" {
		c.flags(line, "go run "+args[0], pkg, args[1:])
	}
}

// flags checks the leading flags of a command's arguments against the flags it defines.
func (c *refChecker) flags(line int, cmd string, pkg *goPackage, args []string) {
	defined := c.ix.commandFlags(pkg)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || len(a) < 2 || !unicode.IsLetter(rune(strings.TrimLeft(a, "-")[0])) {
			return // the first argument that is not a flag ends the flags
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isBool, ok := defined[name]
		if !ok && (name == "h" || name == "help") {
			return
		}
		if !ok {
			c.report(line, "%s: flag -%s is not defined by %s", cmd, name, pkg.importPath)
			return
		}
		if !isBool && !hasValue {
			i++ // its value
		}
	}
}

// identifiers checks the qualified identifiers of a code span.
func (c *refChecker) identifiers(line int, span string) {
	if strings.Contains(span, "://") || strings.HasPrefix(span, "go ") {
		return
	}
	for _, m := range identRE.FindAllStringSubmatch(span, -1) {
		qual := m[2]
		sels := strings.Split(strings.TrimPrefix(m[3], "."), ".")
		// A file name (doc.go, main_test.go) or a version is not an identifier.
		if !isExported(sels[0]) {
			continue
		}
		// Only the exported prefix is checked: x.Method.unexported is left alone.
		n := 0
		for n < len(sels) && isExported(sels[n]) {
			n++
		}
		if c.ix.resolveIdent(qual, sels[:n]) == missing {
			c.report(line, "`%s.%s` does not exist in %s", qual, strings.Join(sels[:n], "."), c.ix.describe(qual))
		}
	}
	for _, m := range literalRE.FindAllStringSubmatch(span, -1) {
		if c.ix.resolveIdent(m[2], []string{m[3], m[4]}) == missing {
			c.report(line, "`%s.%s{%s: ...}`: %s.%s has no field %s", m[2], m[3], m[4], c.ix.describe(m[2]), m[3], m[4])
		}
	}
	for _, m := range pathIdentRE.FindAllStringSubmatch(span, -1) {
		importPath, sels := m[1], []string{m[2]}
		for _, s := range strings.Split(strings.TrimPrefix(m[3], "."), ".") {
			if !isExported(s) {
				break
			}
			sels = append(sels, s)
		}
		pkg := c.ix.byPath[importPath]
		if pkg == nil {
			c.report(line, "`%s`: no package %s in the repository", m[0], importPath)
			continue
		}
		if c.ix.resolveIn(pkg, sels, 0) == missing {
			c.report(line, "`%s.%s` does not exist in %s", importPath, strings.Join(sels, "."), importPath)
		}
	}
}

// describe lists the packages of ours a qualifier stands for.
func (ix *repoIndex) describe(qual string) string {
	var ps []string
	for p := range ix.names[qual] {
		if ix.byPath[p] != nil {
			ps = append(ps, p)
		}
	}
	if len(ps) == 1 {
		return ps[0]
	}
	slices.Sort(ps)
	return "any of " + strings.Join(ps, ", ")
}

// links checks the relative links of a line (outside code).
func (c *refChecker) links(line int, text string) {
	var targets []string
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		targets = append(targets, m[1])
	}
	if m := refDefRE.FindStringSubmatch(text); m != nil {
		targets = append(targets, m[1])
	}
	for _, t := range targets {
		// A target with code characters is the text of a code span broken across lines.
		if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") || strings.ContainsAny(t, "<{}()") {
			continue
		}
		file, anchor, _ := strings.Cut(t, "#")
		target := c.file
		if file != "" {
			target = path.Clean(path.Join(c.dir, file))
			if strings.HasPrefix(target, "../") || target == ".." {
				c.report(line, "link %s leaves the repository", t)
				continue
			}
			if _, err := os.Stat(filepath.Join(c.ix.root, target)); err != nil {
				c.report(line, "link %s: %s does not exist", t, target)
				continue
			}
		}
		if anchor == "" || !strings.HasSuffix(target, ".md") {
			continue
		}
		anchors, err := c.ix.anchors(target)
		if err != nil {
			c.report(line, "link %s: %v", t, err)
			continue
		}
		if !anchors[anchor] {
			c.report(line, "link %s: %s has no heading #%s", t, target, anchor)
		}
	}
}

// anchors returns the heading anchors of a markdown file, as GitHub makes them.
func (ix *repoIndex) anchors(file string) (map[string]bool, error) {
	if ix.anchorCache == nil {
		ix.anchorCache = map[string]map[string]bool{}
	}
	if a, ok := ix.anchorCache[file]; ok {
		return a, nil
	}
	data, err := os.ReadFile(filepath.Join(ix.root, file))
	if err != nil {
		return nil, err
	}
	lines := splitLines(data)
	blocks, _, _ := scanMarkdown(file, lines)
	inBlock := make([]bool, len(lines))
	for _, b := range blocks {
		for j := b.open; j <= b.close && j < len(lines); j++ {
			inBlock[j] = true
		}
	}
	out := map[string]bool{}
	seen := map[string]int{}
	for i, l := range lines {
		if inBlock[i] {
			continue
		}
		for _, m := range anchorRE.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		t := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(t, "#") {
			continue
		}
		h := strings.TrimLeft(t, "#")
		if len(t)-len(h) > 6 || (h != "" && h[0] != ' ') {
			continue
		}
		slug := slugify(h)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	ix.anchorCache[file] = out
	return out, nil
}

// slugify makes a heading's anchor as GitHub does: link texts kept, markup dropped, lower case,
// punctuation removed, spaces turned into hyphens.
func slugify(heading string) string {
	heading = linkRE.ReplaceAllStringFunc(heading, func(s string) string {
		i := strings.LastIndex(s, "](")
		return strings.TrimPrefix(s[:i], "[")
	})
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
