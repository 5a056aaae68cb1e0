// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// repoIndex is what the reference check compares the docs with: the make targets, the words
// of the non-markdown files (where a variable is read), and the Go packages of the repository
// with their exported declarations and, for commands, their flags.
type repoIndex struct {
	root    string
	targets map[string]bool
	// words holds every upper-case word (FOO_BAR) of the repository's code, Makefile and
	// scripts: a variable the docs name must be read somewhere among them.
	words map[string]bool
	// modules maps a module path of the repository to its directory, relative to the root.
	modules map[string]string
	// byPath holds the repository's packages by import path; byDir by directory.
	byPath, byDir map[string]*goPackage
	// names maps a qualifier (a package name or an import alias used in the repository) to
	// the import paths it stands for, ours and others'.
	names map[string]map[string]bool
	// external caches packages outside the repository, loaded from the module cache on demand
	// (nil when a package could not be found).
	external map[string]*goPackage
	// requires maps a required module path to its version, across the repository's go.mod files.
	requires map[string]string
	modCache string
	// testFuncs holds the top-level Test, Fuzz, Benchmark and Example functions of the
	// repository's test files.
	testFuncs map[string]bool
	// anchorCache holds the heading anchors of the markdown files links point into.
	anchorCache map[string]map[string]bool
}

// goPackage is one package: its exported declarations and, for a command, its flags.
type goPackage struct {
	importPath, dir, name string
	ours                  bool
	types                 map[string]*typeDecl
	values                map[string]bool // functions, variables and constants
	imports               map[string]bool
	// flags maps each flag the package defines to whether it is a boolean.
	flags map[string]bool
	// flagConsts are flags named by a constant (package import path, "" for this one, and name).
	flagConsts []typeRef
	// consts holds the package's string constants, for flagConsts.
	consts map[string]string
	// bindsZapFlags is set when the package calls controller-runtime zap's BindFlags.
	bindsZapFlags bool
}

// typeRef names a type: a package import path ("" for the declaring package) and a name.
type typeRef struct {
	pkg, name string
}

// typeDecl is a named type: its fields and methods (each with its type where it is a plain
// named type), the types it embeds, and what it aliases.
type typeDecl struct {
	members  map[string]*typeRef
	embedded []typeRef
	alias    *typeRef
	// opaque is set when the type's members cannot be listed (an alias of a non-named type).
	opaque bool
}

// nonSourceDirs are directories the index never reads.
var nonSourceDirs = map[string]bool{".git": true, "bin": true, "node_modules": true}

// wordRE matches an upper-case word of at least three characters: a variable name.
var wordRE = regexp.MustCompile(`\b[A-Z][A-Z0-9_]{2,}\b`)

// testFuncRE matches the name of a test, fuzz target, benchmark or example function.
var testFuncRE = regexp.MustCompile(`^(Test|Fuzz|Benchmark|Example)([A-Z_]\w*)?$`)

// targetRE matches the targets of a Makefile rule line.
var targetRE = regexp.MustCompile(`^([a-zA-Z0-9_.%/-]+(?:[ \t]+[a-zA-Z0-9_.%/-]+)*)[ \t]*:([^=]|$)`)

func newRepoIndex(root string) (*repoIndex, error) {
	ix := &repoIndex{
		root: root, targets: map[string]bool{}, words: map[string]bool{}, modules: map[string]string{},
		byPath: map[string]*goPackage{}, byDir: map[string]*goPackage{}, names: map[string]map[string]bool{},
		external: map[string]*goPackage{}, requires: map[string]string{}, testFuncs: map[string]bool{},
	}
	if data, err := os.ReadFile(filepath.Join(root, "Makefile")); err == nil {
		ix.readMakefile(data)
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	// Modules first: a package's import path depends on its module.
	var goFiles []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if nonSourceDirs[d.Name()] && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Name() == "go.mod":
			return ix.readGoMod(p, path.Dir(rel))
		case strings.HasSuffix(d.Name(), ".go"):
			goFiles = append(goFiles, rel)
		}
		if strings.HasSuffix(d.Name(), ".md") || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 1<<20 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data, 0) >= 0 { // binary
			return nil
		}
		for _, w := range wordRE.FindAll(data, -1) {
			ix.words[string(w)] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range goFiles {
		if err := ix.readGoFile(f); err != nil {
			return nil, err
		}
	}
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		ix.modCache = strings.TrimSpace(string(out))
	}
	return ix, nil
}

// readMakefile records the Makefile's targets.
func (ix *repoIndex) readMakefile(data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "#") {
			continue
		}
		if m := targetRE.FindStringSubmatch(line); m != nil {
			for _, t := range strings.Fields(m[1]) {
				if !strings.HasPrefix(t, ".") {
					ix.targets[t] = true
				}
			}
		}
	}
}

// readGoMod records a module of the repository and the versions it requires.
func (ix *repoIndex) readGoMod(file, dir string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	inRequire := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "module":
			ix.modules[f[1]] = dir
		case len(f) >= 2 && f[0] == "require" && f[1] == "(":
			inRequire = true
		case inRequire && len(f) == 1 && f[0] == ")":
			inRequire = false
		case len(f) == 3 && f[0] == "require":
			ix.requires[f[1]] = f[2]
		case inRequire && len(f) == 2:
			ix.requires[f[0]] = f[1]
		}
	}
	return nil
}

// importPathOf is the import path of a directory of the repository ("" when it is in no module).
func (ix *repoIndex) importPathOf(dir string) string {
	best, bestMod := "", ""
	for mod, mdir := range ix.modules {
		if (dir == mdir || mdir == "." || strings.HasPrefix(dir, mdir+"/")) && len(mdir) >= len(bestMod) {
			rel := strings.TrimPrefix(strings.TrimPrefix(dir, mdir), "/")
			if mdir == "." {
				rel = dir
				if dir == "." {
					rel = ""
				}
			}
			best, bestMod = path.Join(mod, rel), mdir
		}
	}
	return best
}

// readGoFile adds a file's declarations to its package (non-test files only) and its import
// aliases to the names the docs may use.
func (ix *repoIndex) readGoFile(rel string) error {
	src, err := os.ReadFile(filepath.Join(ix.root, rel))
	if err != nil {
		return err
	}
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil // not our problem here: the build and the linters report it
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "_" || name == "." {
			continue
		}
		ix.addName(name, p)
	}
	if strings.Contains("/"+rel, "/testdata/") {
		return nil
	}
	if strings.HasSuffix(rel, "_test.go") {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && testFuncRE.MatchString(fn.Name.Name) {
				ix.testFuncs[fn.Name.Name] = true
			}
		}
		return nil
	}
	dir := path.Dir(rel)
	pkg := ix.byDir[dir]
	if pkg == nil {
		pkg = newGoPackage(ix.importPathOf(dir), dir, f.Name.Name)
		pkg.ours = true
		ix.byDir[dir] = pkg
		if pkg.importPath != "" {
			ix.byPath[pkg.importPath] = pkg
		}
		ix.addName(pkg.name, pkg.importPath)
	}
	pkg.addFile(f)
	return nil
}

func (ix *repoIndex) addName(name, importPath string) {
	if importPath == "" {
		return
	}
	if ix.names[name] == nil {
		ix.names[name] = map[string]bool{}
	}
	ix.names[name][importPath] = true
}

func newGoPackage(importPath, dir, name string) *goPackage {
	return &goPackage{importPath: importPath, dir: dir, name: name, types: map[string]*typeDecl{},
		values: map[string]bool{}, imports: map[string]bool{}, flags: map[string]bool{}, consts: map[string]string{}}
}

// flagFuncs are the flag package's definers; the value says which argument is the name.
var flagFuncs = map[string]int{
	"Bool": 0, "BoolFunc": 0, "String": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "Float64": 0,
	"Duration": 0, "Func": 0, "BoolVar": 1, "StringVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1,
	"Uint64Var": 1, "Float64Var": 1, "DurationVar": 1, "TextVar": 1, "Var": 1,
}

// addFile adds the exported declarations, imports and flag definitions of a file.
func (p *goPackage) addFile(f *ast.File) {
	imports := map[string]string{} // name in the file -> import path
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		p.imports[ip] = true
		name := path.Base(ip)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = ip
	}
	ref := func(e ast.Expr) *typeRef {
		for {
			switch x := e.(type) {
			case *ast.StarExpr:
				e = x.X
				continue
			case *ast.IndexExpr:
				e = x.X
				continue
			case *ast.IndexListExpr:
				e = x.X
				continue
			case *ast.Ident:
				return &typeRef{name: x.Name}
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && imports[id.Name] != "" {
					return &typeRef{pkg: imports[id.Name], name: x.Sel.Name}
				}
			}
			return nil
		}
	}
	td := func(name string) *typeDecl {
		t := p.types[name]
		if t == nil {
			t = &typeDecl{members: map[string]*typeRef{}}
			p.types[name] = t
		}
		return t
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				p.values[d.Name.Name] = true
				continue
			}
			if r := ref(d.Recv.List[0].Type); r != nil {
				td(r.name).members[d.Name.Name] = nil
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for i, n := range s.Names {
						p.values[n.Name] = true
						if d.Tok != token.CONST || i >= len(s.Values) {
							continue
						}
						if lit, ok := s.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							p.consts[n.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				case *ast.TypeSpec:
					t := td(s.Name.Name)
					if s.Assign.IsValid() {
						if t.alias = ref(s.Type); t.alias == nil {
							t.opaque = true
						}
						continue
					}
					var fields []*ast.Field
					switch x := s.Type.(type) {
					case *ast.StructType:
						fields = x.Fields.List
					case *ast.InterfaceType:
						fields = x.Methods.List
					default:
						// A named type of another named type has that type's fields but not its
						// methods; counting both is generous, which is the side to err on.
						if r := ref(s.Type); r != nil {
							t.embedded = append(t.embedded, *r)
						}
					}
					for _, fl := range fields {
						if len(fl.Names) == 0 {
							if r := ref(fl.Type); r != nil {
								t.embedded = append(t.embedded, *r)
								t.members[r.name] = r
							}
							continue
						}
						for _, n := range fl.Names {
							t.members[n.Name] = ref(fl.Type)
						}
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if sel.Sel.Name == "BindFlags" && imports["zap"] == "sigs.k8s.io/controller-runtime/pkg/log/zap" {
			p.bindsZapFlags = true
		}
		i, ok := flagFuncs[sel.Sel.Name]
		if !ok || len(call.Args) <= i {
			return true
		}
		isBool := strings.HasPrefix(sel.Sel.Name, "Bool")
		switch a := call.Args[i].(type) {
		case *ast.BasicLit:
			if name, err := strconv.Unquote(a.Value); err == nil && a.Kind == token.STRING {
				p.flags[name] = isBool
			}
		case *ast.Ident:
			p.flagConsts = append(p.flagConsts, typeRef{name: a.Name})
		case *ast.SelectorExpr:
			if id, ok := a.X.(*ast.Ident); ok && imports[id.Name] != "" {
				p.flagConsts = append(p.flagConsts, typeRef{pkg: imports[id.Name], name: a.Sel.Name})
			}
		}
		return true
	})
}

// pkg returns the package of an import path: the repository's, or one from the module cache
// (nil when it cannot be found).
func (ix *repoIndex) pkg(importPath string) *goPackage {
	if p := ix.byPath[importPath]; p != nil {
		return p
	}
	if p, ok := ix.external[importPath]; ok {
		return p
	}
	p := ix.loadExternal(importPath)
	ix.external[importPath] = p
	return p
}

// loadExternal reads a package of a required module from the module cache.
func (ix *repoIndex) loadExternal(importPath string) *goPackage {
	if ix.modCache == "" {
		return nil
	}
	mod, version := "", ""
	for m, v := range ix.requires {
		if (importPath == m || strings.HasPrefix(importPath, m+"/")) && len(m) > len(mod) {
			mod, version = m, v
		}
	}
	if mod == "" {
		return nil
	}
	dir := filepath.Join(ix.modCache, escapeModulePath(mod)+"@"+version, strings.TrimPrefix(strings.TrimPrefix(importPath, mod), "/"))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var p *goPackage
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		if p == nil {
			p = newGoPackage(importPath, dir, f.Name.Name)
		}
		if f.Name.Name == p.name {
			p.addFile(f)
		}
	}
	return p
}

// escapeModulePath is the module cache's spelling of a module path: upper-case letters become
// "!" and the lower-case letter.
func escapeModulePath(mod string) string {
	var b strings.Builder
	for _, r := range mod {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return filepath.FromSlash(b.String())
}

// resolution is the answer to "does this qualified identifier exist".
type resolution int

const (
	resolved resolution = iota
	missing
	unknown // not ours, or a package that could not be read: not checked
)

// resolveIdent checks qual.sel[0].sel[1]...: qual must name one of our packages; sel[0] is a
// top-level declaration, the rest fields or methods. Every package the qualifier stands for in
// the repository (ours and others', e.g. controller-runtime's envtest beside ours) may supply it.
func (ix *repoIndex) resolveIdent(qual string, sels []string) resolution {
	paths := ix.names[qual]
	ours := false
	for p := range paths {
		if ix.byPath[p] != nil {
			ours = true
		}
	}
	if !ours {
		return unknown
	}
	// The upstream package of the same name, which mcr's mirrors, may be meant too.
	paths = maps.Clone(paths)
	for _, up := range []string{"sigs.k8s.io/controller-runtime/pkg/", "sigs.k8s.io/multicluster-runtime/pkg/"} {
		if ix.pkg(up+qual) != nil {
			paths[up+qual] = true
		}
	}
	res := missing
	for p := range paths {
		pkg := ix.pkg(p)
		if pkg == nil {
			res = unknown
			continue
		}
		switch ix.resolveIn(pkg, sels, 0) {
		case resolved:
			return resolved
		case unknown:
			res = unknown
		}
	}
	if res == missing && len(sels) == 1 && ix.isMemberOfNamesake(qual, sels[0]) {
		return unknown
	}
	return res
}

// isMemberOfNamesake reports whether name is a member of a type of ours named like the
// qualifier (fleet.AddMember: a variable fleet of type envtest.Fleet; builder.Watches: a
// TypedBuilder), which is how pages name methods of a value.
func (ix *repoIndex) isMemberOfNamesake(qual, name string) bool {
	typeName := strings.ToUpper(qual[:1]) + qual[1:]
	for _, p := range ix.byPath {
		for tn, t := range p.types {
			if (tn == typeName || strings.HasSuffix(tn, typeName)) && t.members != nil {
				if _, ok := t.members[name]; ok {
					return true
				}
			}
		}
	}
	return false
}

// resolveIn checks sels against the top-level declarations of pkg.
func (ix *repoIndex) resolveIn(pkg *goPackage, sels []string, depth int) resolution {
	first := sels[0]
	if pkg.values[first] && len(sels) == 1 {
		return resolved
	}
	if pkg.values[first] {
		return unknown // a member of a variable's value: its type is not followed
	}
	if _, ok := pkg.types[first]; !ok {
		return missing
	}
	if len(sels) == 1 {
		return resolved
	}
	return ix.member(pkg, typeRef{name: first}, sels[1:], depth)
}

// member checks that sels[0] is a field or method of the type (following embedded types and
// aliases), and the rest members of its type.
func (ix *repoIndex) member(pkg *goPackage, t typeRef, sels []string, depth int) resolution {
	if depth > 8 {
		return unknown
	}
	if t.pkg != "" {
		if pkg = ix.pkg(t.pkg); pkg == nil {
			return unknown
		}
	}
	decl, ok := pkg.types[t.name]
	if !ok {
		if unicode.IsLower(rune(t.name[0])) && t.pkg == "" {
			return unknown // a predeclared type
		}
		return missing
	}
	if !isExported(sels[0]) {
		return unknown
	}
	if decl.opaque {
		return unknown
	}
	if decl.alias != nil {
		return ix.member(pkg, *decl.alias, sels, depth+1)
	}
	if r, ok := decl.members[sels[0]]; ok {
		if len(sels) == 1 {
			return resolved
		}
		if r == nil {
			return unknown
		}
		return ix.member(pkg, *r, sels[1:], depth+1)
	}
	res := missing
	for _, e := range decl.embedded {
		switch ix.member(pkg, e, sels, depth+1) {
		case resolved:
			return resolved
		case unknown:
			res = unknown
		}
	}
	return res
}

func isExported(name string) bool {
	return name != "" && unicode.IsUpper(rune(name[0]))
}

// command returns the main package a `go run`/`go install` argument names, looked up from the
// directories given (the first that has it wins). ok is false when the argument is not ours.
func (ix *repoIndex) command(arg string, dirs []string) (pkg *goPackage, ours bool) {
	arg, _, _ = strings.Cut(arg, "@")
	if strings.HasPrefix(arg, "./") || strings.HasPrefix(arg, "../") || arg == "." {
		// A command wins over a library of the same relative path (./webhook from examples/
		// is the example, not core's package).
		var found *goPackage
		for _, d := range dirs {
			p := ix.byDir[path.Clean(path.Join(d, arg))]
			if p != nil && p.name == "main" {
				return p, true
			}
			if found == nil {
				found = p
			}
		}
		return found, true
	}
	for mod := range ix.modules {
		if arg == mod || strings.HasPrefix(arg, mod+"/") {
			return ix.byPath[arg], true
		}
	}
	return nil, false
}

// commandFlags returns the flags a command accepts: its own, those of the repository's packages
// it imports, controller-runtime's -kubeconfig when it imports controller-runtime, and zap's
// when it binds them.
func (ix *repoIndex) commandFlags(main *goPackage) map[string]bool {
	flags := map[string]bool{}
	seen := map[string]bool{}
	var visit func(p *goPackage)
	visit = func(p *goPackage) {
		if seen[p.importPath] {
			return
		}
		seen[p.importPath] = true
		for f, b := range p.flags {
			flags[f] = b
		}
		for _, c := range p.flagConsts {
			q := p
			if c.pkg != "" {
				q = ix.pkg(c.pkg)
			}
			if q != nil && q.consts[c.name] != "" {
				flags[q.consts[c.name]] = false
			}
		}
		if p.bindsZapFlags {
			for _, f := range []string{"zap-devel", "zap-encoder", "zap-log-level", "zap-stacktrace-level", "zap-time-encoding"} {
				flags[f] = f == "zap-devel"
			}
		}
		for imp := range p.imports {
			if strings.HasPrefix(imp, "sigs.k8s.io/controller-runtime") {
				flags["kubeconfig"] = false
			}
			if q := ix.byPath[imp]; q != nil {
				visit(q)
			}
		}
	}
	visit(main)
	return flags
}

// commandNames maps the name of each command of ours under a cmd/ directory (the name a user
// runs once it is installed) to its package.
func (ix *repoIndex) commandNames() map[string]*goPackage {
	out := map[string]*goPackage{}
	for dir, p := range ix.byDir {
		if p.name == "main" && path.Base(path.Dir(dir)) == "cmd" {
			out[path.Base(dir)] = p
		}
	}
	return out
}
