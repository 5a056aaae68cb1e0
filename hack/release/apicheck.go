// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// apiOptions configure verify-api; see the usage text of main for the flags behind them.
type apiOptions struct {
	// Root is the repository whose working tree is checked. Default: the current directory.
	Root string
	// Version is the version the tree is to be released as. Default: conformance.Version of
	// the tree without its -dev suffix (the release process leaves the next version there).
	Version string
	// Base is a git ref to compare against instead of each module's previous release.
	// Default: the module's newest release tag; a module without one is not compared.
	Base string
	// Apidiff is the golang.org/x/exp/cmd/apidiff binary. Required.
	Apidiff string
	// Out receives the report. Default: os.Stdout.
	Out io.Writer
	// Env is added to the environment of apidiff, which loads the packages with the go command:
	// on a release commit, what resolves the released modules (see runChecks). Default: none.
	Env []string
}

func (o *apiOptions) defaults() error {
	if o.Root == "" {
		o.Root = "."
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Version == "" {
		sv, err := suiteVersion(o.Root)
		if err != nil {
			return err
		}
		o.Version = strings.TrimSuffix(sv, "-dev")
	}
	if o.Apidiff == "" {
		return errors.New("no apidiff binary given")
	}
	return nil
}

// apiChanges are the changes apidiff reports between two versions of a module.
type apiChanges struct {
	Incompatible, Compatible []string
}

// required is the smallest bump that may carry the changes after prev, following semver and
// the Go convention for v0: an incompatible change needs a new major version from v1 on and a
// new minor version before it; added API needs a new minor version; a patch changes no API.
func (c apiChanges) required(prev version) bump {
	switch {
	case len(c.Incompatible) > 0 && prev.major > 0:
		return bumpMajor
	case len(c.Incompatible) > 0, len(c.Compatible) > 0:
		return bumpMinor
	}
	return bumpNone
}

// verifyAPI compares the exported API of every released module in the working tree at Root with
// its previous release and fails when Version is too small a step for what changed.
func verifyAPI(o apiOptions) error {
	if err := o.defaults(); err != nil {
		return err
	}
	next, err := parseVersion(o.Version)
	if err != nil {
		return err
	}
	mods, err := workspaceModules(o.Root)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "mcr-verify-api-")
	if err != nil {
		return fmt.Errorf("verify-api: %w", err)
	}
	defer os.RemoveAll(work)
	trees := map[string]string{} // base ref -> its extracted tree

	var failed []string
	for _, m := range releasedModules(mods) {
		prev, released, err := previousRelease(o.Root, m)
		if err != nil {
			return err
		}
		base := o.Base
		if base == "" && released {
			base = m.tag(prev)
		}
		if base == "" {
			fmt.Fprintf(o.Out, "verify-api: %s: no previous release (no tag %sv*) and no API_BASE: nothing to compare\n", m.Path, m.tagPrefix())
			continue
		}
		tree, ok := trees[base]
		if !ok {
			tree = filepath.Join(work, fmt.Sprintf("base%d", len(trees)))
			if err := extractTree(o.Root, base, tree); err != nil {
				return err
			}
			trees[base] = tree
		}
		if _, err := os.Stat(filepath.Join(tree, m.Dir, "go.mod")); err != nil {
			fmt.Fprintf(o.Out, "verify-api: %s: not in %s: nothing to compare\n", m.Path, base)
			continue
		}
		changes, err := compareModule(o.Apidiff, m.Path, filepath.Join(tree, m.Dir), filepath.Join(o.Root, m.Dir), work, o.Env)
		if err != nil {
			return err
		}
		verdict := "ok"
		switch {
		case !released:
			verdict = "ok: no release yet, so no compatibility promise"
		case next.compare(prev) < 0:
			verdict = fmt.Sprintf("FAIL: next version %s is older than %s", next, m.tag(prev))
			failed = append(failed, m.Path)
		case next.bumpFrom(prev) < changes.required(prev):
			step := "the same version"
			if b := next.bumpFrom(prev); b != bumpNone {
				step = "a " + b.String() + " release"
			}
			verdict = fmt.Sprintf("FAIL: these changes need a %s release after %s; %s is %s",
				changes.required(prev), prev, next, step)
			failed = append(failed, m.Path)
		}
		fmt.Fprintf(o.Out, "verify-api: %s against %s (next %s): %d incompatible, %d compatible changes: %s\n",
			m.Path, base, next, len(changes.Incompatible), len(changes.Compatible), verdict)
		for _, c := range changes.Incompatible {
			fmt.Fprintf(o.Out, "  incompatible: %s\n", c)
		}
		for _, c := range changes.Compatible {
			fmt.Fprintf(o.Out, "  compatible:   %s\n", c)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("verify-api: the exported API of %s changed more than %s allows", strings.Join(failed, ", "), next)
	}
	fmt.Fprintln(o.Out, "verify-api: ok")
	return nil
}

// compareModule runs apidiff on the module at modPath in oldDir and newDir (each a module
// directory inside its workspace). Internal packages are left out, as apidiff does by default.
func compareModule(apidiff, modPath, oldDir, newDir, work string, env []string) (apiChanges, error) {
	var c apiChanges
	name := strings.ReplaceAll(modPath, "/", "_")
	oldExport := filepath.Join(work, name+".old")
	newExport := filepath.Join(work, name+".new")
	for _, e := range []struct{ dir, file string }{{oldDir, oldExport}, {newDir, newExport}} {
		if _, err := command(e.dir, env, apidiff, "-m", "-w", e.file, modPath); err != nil {
			return c, fmt.Errorf("reading the exported API of %s: %w", modPath, err)
		}
	}
	out, err := command(work, nil, apidiff, "-m", oldExport, newExport)
	if err != nil {
		return c, fmt.Errorf("comparing the exported API of %s: %w", modPath, err)
	}
	return parseAPIDiff(string(out))
}

// parseAPIDiff reads apidiff's text report: an "Incompatible changes:" and a "Compatible
// changes:" section, each a list of "- message" lines. Messages come back sorted and each once:
// apidiff reports them in map order, a method of a generic type once per instantiation.
func parseAPIDiff(report string) (apiChanges, error) {
	var c apiChanges
	var section *[]string
	for line := range strings.Lines(report) {
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
		case line == "Incompatible changes:":
			section = &c.Incompatible
		case line == "Compatible changes:":
			section = &c.Compatible
		case strings.HasPrefix(line, "- ") && section != nil:
			*section = append(*section, strings.TrimPrefix(line, "- "))
		default:
			return c, fmt.Errorf("unexpected line in apidiff's report: %q", line)
		}
	}
	slices.Sort(c.Incompatible)
	slices.Sort(c.Compatible)
	c.Incompatible = slices.Compact(c.Incompatible)
	c.Compatible = slices.Compact(c.Compatible)
	return c, nil
}

// extractTree writes the files of ref into dir. git archive rather than a worktree: nothing is
// registered in the repository, so an interrupted run leaves nothing behind in it.
func extractTree(repo, ref, dir string) error {
	commit, err := gitOutput(repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return fmt.Errorf("API base %q is not a commit in %s: %w", ref, repo, err)
	}
	cmd := exec.Command("git", "archive", "--format=tar", commit)
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git archive %s: %w", ref, err)
	}
	if err := untar(stdout, dir); err != nil {
		_ = cmd.Wait()
		return fmt.Errorf("extracting %s: %w", ref, err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %w", ref, err)
	}
	return nil
}

func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("archive entry %q leaves the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			err = writeFile(name, tr, os.FileMode(h.Mode).Perm())
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(name), 0o755); err == nil {
				err = os.Symlink(h.Linkname, name)
			}
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(name string, r io.Reader, perm os.FileMode) (err error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(f, r)
	return err
}
