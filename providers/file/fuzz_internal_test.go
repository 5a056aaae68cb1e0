// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/client-go/tools/clientcmd"

	"mcr.dev/core/kubeconfig"
)

// The fuzz targets of the provider's parsers of what others write: paths and globs (command lines,
// $KUBECONFIG, Options), file and context names (anyone who can write into a watched directory),
// and kubeconfig bytes. Seeds are in testdata/fuzz/<FuzzName>; `go test -run=^$ -fuzz=FuzzX`
// runs one.

// fuzzTree makes a small directory tree for glob matching: visible and hidden entries, names with
// wildcard characters, files and directories of the same name at different depths.
func fuzzTree(f *testing.F) string {
	root := f.TempDir()
	for _, p := range []string{
		"a/east.kubeconfig", "a/.hidden.kubeconfig", "a/kubeconfig", "a/notes.txt",
		"b/c/kubeconfig", "b/c/d.kubeconfig", ".d/kubeconfig", "we*rd/kubeconfig",
		"q?/x", "br[a]ce/kubeconfig", `back\slash/kubeconfig`, "a+b/kubeconfig", "100%/kubeconfig",
	} {
		path := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "a", "dir.kubeconfig"), 0o700); err != nil {
		f.Fatal(err)
	}
	return root
}

// FuzzGlob: newGlob never panics; for a clean absolute pattern its prefix and elements give the
// pattern back; and under a fixed tree, what the glob matches is what filepath.Glob matches,
// less the hidden names that a wildcard does not match.
func FuzzGlob(f *testing.F) {
	root := fuzzTree(f)
	f.Fuzz(func(t *testing.T, pattern string) {
		g, err := newGlob(pattern)
		if err != nil {
			return
		}
		if g.prefix == "" || hasMeta(g.prefix) && !hasMeta(pattern) {
			t.Fatalf("newGlob(%q) = prefix %q", pattern, g.prefix)
		}
		if filepath.IsAbs(pattern) && filepath.Clean(pattern) == pattern {
			back := filepath.Join(append([]string{g.prefix}, g.elems...)...)
			if back != pattern {
				t.Fatalf("newGlob(%q) = %q + %q, which joins to %q", pattern, g.prefix, g.elems, back)
			}
		}

		// Match only inside the tree: a fuzzed pattern must not walk the whole file system.
		rel := filepath.Clean(strings.TrimLeft(pattern, string(filepath.Separator)))
		if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return
		}
		full := filepath.Join(root, rel)
		g, err = newGlob(full)
		if err != nil {
			return
		}
		matches, _, _ := g.match()
		var got []string
		for _, m := range matches {
			if _, err := os.Lstat(m); err == nil {
				got = append(got, m)
			}
		}
		want, err := filepath.Glob(full)
		if err != nil {
			t.Fatalf("filepath.Glob(%q): %v, although newGlob accepted it", full, err)
		}
		want = slices.DeleteFunc(want, func(m string) bool { return hiddenByWildcard(full, m) })
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("glob %q matches %q, filepath.Glob less hidden names %q", full, got, want)
		}
	})
}

// hiddenByWildcard reports whether m, a match of pattern, has a hidden element where the pattern
// element does not start with "." itself.
func hiddenByWildcard(pattern, m string) bool {
	pe := strings.Split(pattern, string(filepath.Separator))
	me := strings.Split(m, string(filepath.Separator))
	for i := range min(len(pe), len(me)) {
		if isHidden(me[i]) && !isHidden(pe[i]) {
			return true
		}
	}
	return false
}

// FuzzParsePaths: every non-empty entry lands in exactly one of files, dirs and globs, in order;
// globs have wildcards and files and dirs have none; parsing the result again sorts it the same
// way.
func FuzzParsePaths(f *testing.F) {
	f.Fuzz(func(t *testing.T, list string) {
		files, dirs, globs := ParsePaths(list)
		var entries []string
		for _, p := range filepath.SplitList(list) {
			if p != "" {
				entries = append(entries, p)
			}
		}
		if n := len(files) + len(dirs) + len(globs); n != len(entries) {
			t.Fatalf("ParsePaths(%q) sorted %d paths, want %d", list, n, len(entries))
		}
		for _, g := range globs {
			if !hasMeta(g) {
				t.Fatalf("ParsePaths(%q): glob %q has no wildcard", list, g)
			}
		}
		for _, p := range append(slices.Clone(files), dirs...) {
			if hasMeta(p) || p == "" {
				t.Fatalf("ParsePaths(%q): file or dir %q is empty or has a wildcard", list, p)
			}
		}
		sep := string(os.PathListSeparator)
		files2, dirs2, globs2 := ParsePaths(strings.Join(files, sep), strings.Join(dirs, sep), strings.Join(globs, sep))
		if !slices.Equal(files, files2) || !slices.Equal(dirs, dirs2) || !slices.Equal(globs, globs2) {
			t.Fatalf("ParsePaths(%q) is not stable: %q %q %q, then %q %q %q", list, files, dirs, globs, files2, dirs2, globs2)
		}
	})
}

// FuzzClusterName: a cluster name is valid UTF-8, its file part never contains the separator,
// and it splits back into exactly the file (relative to the base, byte for byte) and the context:
// names never collide. ClusterName agrees with the names of scanned files.
func FuzzClusterName(f *testing.F) {
	f.Fuzz(func(t *testing.T, rel, context, sep string) {
		if validSeparator(sep) != nil {
			return
		}
		const base = "/etc/fleet"
		path := filepath.Join(base, rel)
		if !filepath.IsAbs(path) || strings.ContainsRune(path, 0) {
			return
		}
		name := string(clusterName(base, sep, path, context))
		if again := string(clusterName(base, sep, path, context)); again != name {
			t.Fatalf("clusterName is not deterministic: %q, then %q", name, again)
		}
		// Cluster names end up in logs and metric labels, which must be valid UTF-8; context
		// names come from YAML or JSON, which are.
		if utf8.ValidString(context) && !utf8.ValidString(name) {
			t.Fatalf("clusterName(%q, %q, %q) = %q is not valid UTF-8", rel, context, sep, name)
		}
		filePart, ctxPart, ok := strings.Cut(name, sep)
		if !ok || ctxPart != context {
			t.Fatalf("clusterName(%q, %q, %q) = %q does not split into the context at the first separator", rel, context, sep, name)
		}
		decoded, err := url.PathUnescape(filePart)
		if err != nil {
			t.Fatalf("clusterName(%q, %q, %q) = %q: file part does not decode: %v", rel, context, sep, name, err)
		}
		want, _ := filepath.Rel(base, path)
		if decoded != filepath.ToSlash(want) {
			t.Fatalf("clusterName(%q, %q, %q) = %q: file part decodes to %q, want %q", rel, context, sep, name, decoded, filepath.ToSlash(want))
		}
	})
}

// FuzzNameBase: the name base contains every root, and no deeper directory does.
func FuzzNameBase(f *testing.F) {
	f.Fuzz(func(t *testing.T, list string) {
		var roots []string
		for _, r := range strings.Split(list, "\n") {
			roots = append(roots, filepath.Clean("/"+r))
		}
		base := nameBase(roots)
		for _, r := range roots {
			if !within(r, base) {
				t.Fatalf("nameBase(%q) = %q does not contain %q", roots, base, r)
			}
		}
		// One element deeper towards the first root, some root is left out.
		if base == roots[0] {
			return
		}
		rest := strings.TrimPrefix(strings.TrimPrefix(roots[0], base), string(filepath.Separator))
		deeper := filepath.Join(base, strings.Split(rest, string(filepath.Separator))[0])
		if !slices.ContainsFunc(roots, func(r string) bool { return !within(r, deeper) }) {
			t.Fatalf("nameBase(%q) = %q, but %q contains every root", roots, base, deeper)
		}
	})
}

// FuzzScanFile: a scan of a directory holding one file, of any name and content, never panics
// (reporting its problems included), gives every usable context a name that splits back into the
// file and the context, reads it the same way twice, and never quotes a credential in an error.
// File references are refused (the hardened policy), so the scan reads nothing but the file.
func FuzzScanFile(f *testing.F) {
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if name == "" || name == "." || name == ".." || len(name) > 200 ||
			strings.ContainsAny(name, "/\x00") || isHidden(name) {
			return
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Skip(err)
		}
		defer os.Remove(path)
		secrets := credentials(path, data)

		for _, policy := range []kubeconfig.Policy{{}, {AllowExec: true, AllowAuthProvider: true, AllowInsecure: true}} {
			p, err := New(Options{Dirs: []string{dir}, DirPatterns: []string{"*"}, DiscoveredPolicy: policy})
			if err != nil {
				t.Fatal(err)
			}
			res := p.scan(nil)
			p.report(res)
			again := p.scan(res.byFile)
			p.report(again)
			BrokenFiles.Sub(float64(p.broken))

			if len(res.byFile[path]) != len(again.byFile[path]) || (res.fileErrs[path] == nil) != (again.fileErrs[path] == nil) {
				t.Fatalf("two scans of the same file differ: %v, %v", res.fileErrs[path], again.fileErrs[path])
			}
			for n, spec := range res.byFile[path] {
				if !sameCredentials(spec, again.byFile[path][n]) {
					t.Fatalf("context %q reads differently the second time", spec.context)
				}
				want := clusterName(p.opts.NameBase, p.opts.Separator, path, spec.context)
				if n != want || spec.name != want {
					t.Fatalf("context %q of %q is named %q, want %q", spec.context, path, n, want)
				}
				if got, err := p.ClusterName(path, spec.context); err != nil || got != n {
					t.Fatalf("ClusterName(%q, %q) = %q, %v; want %q", path, spec.context, got, err, n)
				}
			}
			var msgs []string
			if err := res.fileErrs[path]; err != nil {
				msgs = append(msgs, err.Error())
			}
			for _, ce := range res.contextErrs {
				msgs = append(msgs, ce.err.Error())
			}
			for _, msg := range msgs {
				for _, secret := range secrets {
					if strings.Contains(msg, secret) {
						t.Fatalf("an error quotes the credential %q: %s", secret, msg)
					}
				}
			}
		}
	})
}

// credentials returns the credential values of a kubeconfig that are long enough to be told apart
// from the words of error messages, and that do not also occur in a name, a server or the path,
// which errors quote by design.
func credentials(path string, data []byte) []string {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil
	}
	public := []string{path}
	for name, c := range cfg.Clusters {
		public = append(public, name, c.Server, c.ProxyURL, c.TLSServerName, c.CertificateAuthority)
	}
	for name, c := range cfg.Contexts {
		public = append(public, name, c.Cluster, c.AuthInfo, c.Namespace)
	}
	var values []string
	for name, u := range cfg.AuthInfos {
		public = append(public, name, u.Username, u.Impersonate, u.ClientCertificate, u.ClientKey, u.TokenFile)
		values = append(values, u.Token, u.Password, string(u.ClientKeyData))
		if u.Exec != nil {
			public = append(public, u.Exec.Command)
			for _, e := range u.Exec.Env {
				public = append(public, e.Name)
				values = append(values, e.Value)
			}
		}
		if u.AuthProvider != nil {
			for k, v := range u.AuthProvider.Config {
				public = append(public, k)
				values = append(values, v)
			}
		}
	}
	var out []string
	for _, v := range values {
		if len(v) >= 12 && !slices.ContainsFunc(public, func(p string) bool { return strings.Contains(p, v) }) {
			out = append(out, v)
		}
	}
	return out
}
