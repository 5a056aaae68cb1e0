// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// DefaultDirPatterns is the default of Options.DirPatterns: the usual names of kubeconfig files,
// including the key "kubeconfig" of a mounted Secret.
var DefaultDirPatterns = []string{
	"kubeconfig",
	"kubeconfig.yaml",
	"kubeconfig.yml",
	"*.kubeconfig",
	"*.kubeconfig.yaml",
	"*.kubeconfig.yml",
}

// ParsePaths sorts paths, as given on a command line or in $KUBECONFIG, into files, directories
// and globs for Options. Every argument may hold several paths separated by
// os.PathListSeparator (":" on Unix). A path with a wildcard (*, ? or [) is a glob; an existing
// directory, or a path ending in a path separator, is a directory; anything else is a file, which
// need not exist yet. Empty entries are dropped.
func ParsePaths(paths ...string) (files, dirs, globs []string) {
	for _, list := range paths {
		for _, p := range filepath.SplitList(list) {
			switch {
			case p == "":
			case hasMeta(p):
				globs = append(globs, p)
			case strings.HasSuffix(p, string(filepath.Separator)) || isDir(p):
				dirs = append(dirs, p)
			default:
				files = append(files, p)
			}
		}
	}
	return files, dirs, globs
}

func hasMeta(p string) bool {
	meta := `*?[`
	if filepath.Separator != '\\' {
		meta += `\`
	}
	return strings.ContainsAny(p, meta)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// sources are the configured paths, absolute and clean.
type sources struct {
	files       []string
	dirs        []string
	globs       []glob
	dirPatterns []string
}

// glob is a pattern split into the directory before its first wildcard and the elements after.
type glob struct {
	prefix string
	elems  []string
}

func newGlob(pattern string) (glob, error) {
	parts := strings.Split(pattern, string(filepath.Separator))
	// Each element on its own: an escaped separator ("a\\/b") splits into a malformed one.
	for _, part := range parts {
		if err := checkPattern(part); err != nil {
			return glob{}, fmt.Errorf("glob %q: %w", pattern, err)
		}
	}
	i := slices.IndexFunc(parts, hasMeta)
	if i < 0 {
		// No wildcard at all (Options.Globs need not have one): it matches one path.
		i = len(parts) - 1
	}
	prefix := strings.Join(parts[:i], string(filepath.Separator))
	if prefix == "" {
		prefix = string(filepath.Separator)
	}
	return glob{prefix: prefix, elems: parts[i:]}, nil
}

// checkPattern returns filepath.ErrBadPattern when pattern is malformed in filepath.Match's
// syntax. filepath.Match itself reports a malformed pattern only when matching gets to the
// malformed part: filepath.Match(pattern, "") accepts "a*\\" or "a[", which then never match.
func checkPattern(pattern string) error {
	escapes := filepath.Separator != '\\'
	// next consumes one character of a character class, or of an escape sequence.
	next := func(p string) (rest string, ok bool) {
		if p == "" || p[0] == '-' || p[0] == ']' {
			return "", false
		}
		if p[0] == '\\' && escapes {
			p = p[1:]
		}
		r, n := utf8.DecodeRuneInString(p)
		if p == "" || r == utf8.RuneError && n == 1 {
			return "", false
		}
		return p[n:], true
	}
	for p := pattern; p != ""; {
		switch {
		case p[0] == '\\' && escapes:
			if len(p) == 1 {
				return filepath.ErrBadPattern
			}
			_, n := utf8.DecodeRuneInString(p[1:])
			p = p[1+n:]
		case p[0] == '[':
			p = strings.TrimPrefix(p[1:], "^")
			for n := 0; ; n++ {
				if n > 0 && strings.HasPrefix(p, "]") {
					p = p[1:]
					break
				}
				var ok bool
				if p, ok = next(p); !ok {
					return filepath.ErrBadPattern
				}
				if strings.HasPrefix(p, "-") {
					if p, ok = next(p[1:]); !ok {
						return filepath.ErrBadPattern
					}
				}
				if p == "" {
					return filepath.ErrBadPattern
				}
			}
		default:
			p = p[1:]
		}
	}
	return nil
}

// roots returns the directories the name base must contain.
func (s sources) roots() []string {
	var roots []string
	for _, f := range s.files {
		roots = append(roots, filepath.Dir(f))
	}
	roots = append(roots, s.dirs...)
	for _, g := range s.globs {
		roots = append(roots, g.prefix)
	}
	return roots
}

// listing is what one pass over the sources found.
type listing struct {
	// files are the kubeconfig files found, absolute, clean and unresolved, sorted.
	files []string
	// explicit holds the files that are configured in Files (or come from $KUBECONFIG or
	// $HOME/.kube/config), rather than only discovered through Dirs or Globs.
	explicit map[string]bool
	// errs are problems with configured paths (a file that is a directory, an unreadable
	// directory) and with entries that match but are not regular files (a named pipe, a
	// device, a directory named like a kubeconfig), by path.
	errs map[string]error
	// watch are the directories to watch so that any change to the result is noticed.
	watch map[string]struct{}
}

// list finds the kubeconfig files of the sources and the directories to watch for them. It
// never opens a file: it only looks at file types, so that special files cannot block it.
func (s sources) list() listing {
	l := listing{explicit: map[string]bool{}, errs: map[string]error{}, watch: map[string]struct{}{}}
	found := map[string]struct{}{}
	addFile := func(p string) {
		found[p] = struct{}{}
		// A symlink to a file elsewhere (a dotfiles checkout, say) is edited there.
		if target, err := filepath.EvalSymlinks(p); err == nil {
			if dir := filepath.Dir(target); !within(dir, filepath.Dir(p)) {
				l.watch[dir] = struct{}{}
			}
		}
	}
	// addMatch adds a path that Dirs or Globs found, when it is (or links to) a regular file.
	addMatch := func(p string) {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// A dangling symlink, or gone meanwhile.
		case err != nil:
			l.errs[p] = err
		case !fi.Mode().IsRegular():
			l.errs[p] = notRegular(fi.Mode())
		default:
			addFile(p)
		}
	}

	for _, f := range s.files {
		l.watch[nearestDir(filepath.Dir(f))] = struct{}{}
		fi, err := os.Stat(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Not there (yet): its directory is watched.
		case err != nil:
			l.errs[f] = err
		case fi.IsDir():
			l.errs[f] = fmt.Errorf("%w: a directory; configure it as a directory, not a file", errNotRegular)
		case !fi.Mode().IsRegular():
			l.errs[f] = notRegular(fi.Mode())
		default:
			addFile(f)
			l.explicit[f] = true
		}
	}

	for _, d := range s.dirs {
		l.watch[nearestDir(d)] = struct{}{}
		entries, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			l.errs[d] = err
			continue
		}
		for _, e := range entries {
			if isHidden(e.Name()) || !matchesAny(s.dirPatterns, e.Name()) {
				continue
			}
			addMatch(filepath.Join(d, e.Name()))
		}
	}

	for _, g := range s.globs {
		l.watch[nearestDir(g.prefix)] = struct{}{}
		matches, dirs, errs := g.match()
		for _, m := range matches {
			addMatch(m)
		}
		for _, d := range dirs {
			l.watch[d] = struct{}{}
		}
		for p, err := range errs {
			l.errs[p] = err
		}
	}

	for f := range found {
		l.files = append(l.files, f)
	}
	slices.Sort(l.files)
	return l
}

// match walks the glob one element at a time, so that directory names are never read as
// patterns. It returns the paths that match the whole glob, whatever their type, every directory
// visited (to be watched, since a change in any of them can change the matches), and read errors
// by directory. Entries whose names start with "." match only pattern elements that start with
// "." too, which keeps the ..data and ..<timestamp> directories of ConfigMap and Secret volumes
// out.
func (g glob) match() (matches, dirs []string, errs map[string]error) {
	errs = map[string]error{}
	if !isDir(g.prefix) {
		return nil, nil, errs
	}
	current := []string{g.prefix}
	for i, elem := range g.elems {
		last := i == len(g.elems)-1
		var next []string
		for _, dir := range current {
			var candidates []string
			if !hasMeta(elem) {
				candidates = []string{filepath.Join(dir, elem)}
			} else {
				entries, err := os.ReadDir(dir)
				if err != nil {
					if !errors.Is(err, fs.ErrNotExist) {
						errs[dir] = err
					}
					continue
				}
				for _, e := range entries {
					if isHidden(e.Name()) && !isHidden(elem) {
						continue
					}
					if ok, _ := filepath.Match(elem, e.Name()); ok {
						candidates = append(candidates, filepath.Join(dir, e.Name()))
					}
				}
			}
			for _, c := range candidates {
				if last {
					matches = append(matches, c)
				} else if isDir(c) {
					next = append(next, c)
				}
			}
		}
		if !last {
			dirs = append(dirs, next...)
		}
		current = next
	}
	return matches, dirs, errs
}

func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := filepath.Match(p, name); ok {
			return true
		}
	}
	return false
}

// nearestDir returns dir if it is a directory, else its nearest ancestor that is: watching that
// ancestor notices when dir is created.
func nearestDir(dir string) string {
	for {
		if isDir(dir) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}
