// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// writeProxy writes the released modules at v, as of commit in the repository at repo, into dir
// in the layout of a Go module proxy (GOPROXY=file://dir). It is what the proxy will serve once
// the tags are pushed, so `go get` can be tried against a release before it is published.
func writeProxy(repo, commit string, mods []module, v version, dir string) error {
	when, err := gitOutput(repo, "show", "--no-patch", "--format=%cI", commit)
	if err != nil {
		return err
	}
	committed, err := time.Parse(time.RFC3339, when)
	if err != nil {
		return fmt.Errorf("parsing the commit time %q: %w", when, err)
	}
	for _, m := range mods {
		if err := writeProxyModule(repo, commit, m, v, committed.UTC(), dir); err != nil {
			return fmt.Errorf("%s: writing the module proxy: %w", m.Path, err)
		}
	}
	return nil
}

func writeProxyModule(repo, commit string, m module, v version, committed time.Time, dir string) error {
	files, err := moduleFiles(repo, commit, m.Dir)
	if err != nil {
		return err
	}
	gomod, ok := files["go.mod"]
	if !ok {
		return errors.New("no go.mod at the release commit")
	}
	escaped, err := escapeModulePath(m.Path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{v.String(), committed})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, v.String()+".info"), info, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, v.String()+".mod"), gomod, 0o644); err != nil {
		return err
	}
	if err := writeModuleZip(filepath.Join(vdir, v.String()+".zip"), m.Path+"@"+v.String(), files); err != nil {
		return err
	}
	return addToList(filepath.Join(vdir, "list"), v.String())
}

// moduleFiles returns the files of the module in dir at commit (or any tree-ish), by path
// relative to dir. Like the go command when it zips a module from a git repository, it leaves
// out subdirectories that are modules of their own and adds the repository's LICENSE to a module
// in a subdirectory that has none: the zips, and so the go.sum hashes, are those a proxy serving
// the pushed tags will have.
func moduleFiles(repo, commit, dir string) (map[string][]byte, error) {
	args := []string{"archive", "--format=tar", commit}
	prefix := ""
	if dir != "." {
		args = append(args, "--", dir)
		prefix = dir + "/"
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git archive: %w", err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(stdout)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			_ = cmd.Wait()
			return nil, fmt.Errorf("reading git archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg { // module zips hold regular files only
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			_ = cmd.Wait()
			return nil, fmt.Errorf("reading git archive: %w", err)
		}
		files[strings.TrimPrefix(h.Name, prefix)] = data
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("git archive %s: %w", commit, err)
	}
	for name := range files {
		if d := path.Dir(name); d != "." && path.Base(name) == "go.mod" {
			for other := range files {
				if strings.HasPrefix(other, d+"/") {
					delete(files, other)
				}
			}
		}
	}
	if _, ok := files["LICENSE"]; !ok && dir != "." {
		// The go command adds the repository's LICENSE to a module in a subdirectory that has
		// none; so must the proxy, or the zip's hash differs from a hosted module's.
		if _, err := command(repo, nil, "git", "cat-file", "-e", commit+":LICENSE"); err == nil {
			license, err := command(repo, nil, "git", "show", commit+":LICENSE")
			if err != nil {
				return nil, err
			}
			files["LICENSE"] = license
		}
	}
	return files, nil
}

func writeModuleZip(file, root string, files map[string][]byte) (err error) {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	zw := zip.NewWriter(f)
	// In name order, so that writing the same files twice gives the same bytes.
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(root + "/" + name)
		if err != nil {
			return err
		}
		if _, err := w.Write(files[name]); err != nil {
			return err
		}
	}
	return zw.Close()
}

// escapeModulePath spells a module path as proxies store it: an upper-case letter becomes "!"
// and its lower case, so that case-insensitive file systems keep paths apart.
func escapeModulePath(p string) (string, error) {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r == '!' || r >= 0x80:
			return "", fmt.Errorf("module path %q: unexpected character %q", p, r)
		case 'A' <= r && r <= 'Z':
			b.WriteByte('!')
			b.WriteRune(r + ('a' - 'A'))
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

// addToList adds a version to a proxy's list file once: a release written again into the same
// directory replaces its files and keeps one line.
func addToList(file, v string) error {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	lines := strings.Fields(string(data))
	if slices.Contains(lines, v) {
		return nil
	}
	lines = append(lines, v)
	return os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// hash1 is the go.sum hash ("h1:") of files named as given: the base64 SHA-256 of the list of
// the files' SHA-256 sums and names, sorted by name (golang.org/x/mod/sumdb/dirhash.Hash1).
func hash1(files map[string][]byte) string {
	summary := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(summary, "%x  %s\n", sha256.Sum256(files[name]), name)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(summary.Sum(nil))
}

// zipHashes returns the go.sum hashes of the module zip and go.mod file that the proxy in dir
// holds for path at v.
func zipHashes(dir, path string, v version) (zipSum, modSum string, err error) {
	escaped, err := escapeModulePath(path)
	if err != nil {
		return "", "", err
	}
	base := filepath.Join(dir, filepath.FromSlash(escaped), "@v", v.String())
	zr, err := zip.OpenReader(base + ".zip")
	if err != nil {
		return "", "", err
	}
	defer zr.Close()
	files := map[string][]byte{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			return "", "", err
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return "", "", fmt.Errorf("reading %s from %s.zip: %w", f.Name, base, err)
		}
		files[f.Name] = data
	}
	gomod, err := os.ReadFile(base + ".mod")
	if err != nil {
		return "", "", err
	}
	return hash1(files), hash1(map[string][]byte{"go.mod": gomod}), nil
}

// checkSums checks every go.sum line of the modules at root that names a released module at v
// against the zips and go.mod files written into the proxy dir: a user who resolves the release
// through that proxy, or through a proxy serving the pushed tags, gets exactly what the modules
// were tidied against.
func checkSums(root string, mods, released []module, v version, dir string) error {
	want := map[string]string{}
	for _, m := range released {
		zipSum, modSum, err := zipHashes(dir, m.Path, v)
		if err != nil {
			return fmt.Errorf("%s: hashing the module proxy's files: %w", m.Path, err)
		}
		want[m.Path+" "+v.String()] = zipSum
		want[m.Path+" "+v.String()+"/go.mod"] = modSum
	}
	var errs []error
	checked := 0
	for _, m := range mods {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.Dir), "go.sum"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		for line := range strings.Lines(string(data)) {
			f := strings.Fields(line)
			if len(f) != 3 {
				continue
			}
			w, ok := want[f[0]+" "+f[1]]
			if !ok {
				if slices.ContainsFunc(released, func(r module) bool { return r.Path == f[0] }) {
					errs = append(errs, fmt.Errorf("%s/go.sum has %s %s, a version of a released module other than %s", m.Dir, f[0], f[1], v))
				}
				continue
			}
			checked++
			if f[2] != w {
				errs = append(errs, fmt.Errorf("%s/go.sum records %s %s %s, the module proxy's file hashes to %s", m.Dir, f[0], f[1], f[2], w))
			}
		}
	}
	if checked == 0 && len(errs) == 0 {
		return errors.New("no go.sum records a released module: nothing was checked")
	}
	return errors.Join(errs...)
}
