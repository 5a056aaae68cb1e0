package main

import (
	"archive/tar"
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
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
	return appendLine(filepath.Join(vdir, "list"), v.String())
}

// moduleFiles returns the files of the module in dir at commit, by path relative to dir. Like
// the go command, it leaves out subdirectories that are modules of their own.
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
	for name, data := range files {
		w, err := zw.Create(root + "/" + name)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
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

func appendLine(file, line string) (err error) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = fmt.Fprintln(f, line)
	return err
}
