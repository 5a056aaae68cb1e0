// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// releaseOptions configure a release; see the usage text of main for the flags behind them.
type releaseOptions struct {
	// Root is the repository to release. Default: the current directory.
	Root string
	// Version to release, e.g. "v0.1.0". Required.
	Version string
	// DryRun releases in a temporary clone and leaves Root untouched.
	DryRun bool
	// Keep, with DryRun, is a directory to clone into that is kept afterwards (it must not
	// exist yet). Default: a temporary directory, removed at the end.
	Keep string
	// SkipChecks skips `make verify`, `make test` and verify-api on the release commit.
	SkipChecks bool
	// Apidiff is the apidiff binary for the verify-api check. Required unless SkipChecks.
	Apidiff string
	// Proxy, when set, is a directory to write a GOPROXY of the released modules into.
	Proxy string
	// Out receives the progress and the result. Default: os.Stdout.
	Out io.Writer
}

func (o *releaseOptions) defaults() {
	if o.Root == "" {
		o.Root = "."
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
}

// releaseResult is what a release made; the tags point at Commit.
type releaseResult struct {
	Commit string // the release commit
	Tags   []string
	Copy   string // the clone the release was made in (kept only with Keep)
}

// release tags every released module at a new commit that requires the others at the version
// and sets conformance.Version to it, then moves conformance.Version on to the next -dev
// version in a second commit. All of it happens in a clone first; without DryRun the commits
// and tags are then fetched into Root, which moves only if everything succeeded.
func release(o releaseOptions) (releaseResult, error) {
	o.defaults()
	var res releaseResult
	v, err := parseVersion(o.Version)
	if err != nil {
		return res, err
	}
	if v.major > 1 {
		return res, fmt.Errorf("%s: a major version above 1 needs a /v%d suffix on every module path first", v, v.major)
	}
	if o.Root, err = filepath.Abs(o.Root); err != nil {
		return res, fmt.Errorf("resolving the repository root: %w", err)
	}
	if o.Proxy != "" {
		if o.Proxy, err = filepath.Abs(o.Proxy); err != nil {
			return res, fmt.Errorf("resolving the proxy directory: %w", err)
		}
	}
	logf := func(format string, args ...any) { fmt.Fprintf(o.Out, "release: "+format+"\n", args...) }

	// Preconditions, in the tree being released.
	if status, err := command(o.Root, nil, "git", "--no-optional-locks", "status", "--porcelain"); err != nil {
		return res, err
	} else if len(status) > 0 {
		if !o.DryRun {
			return res, fmt.Errorf("the tree has uncommitted or untracked changes; commit or remove them first:\n%s", status)
		}
		logf("warning: the tree has uncommitted changes; the dry run releases the last commit without them")
	}
	head, err := gitOutput(o.Root, "rev-parse", "HEAD")
	if err != nil {
		return res, err
	}

	// The clone the release is made in.
	if o.DryRun && o.Keep != "" {
		res.Copy = o.Keep
	} else {
		parent, err := os.MkdirTemp("", "mcr-release-")
		if err != nil {
			return res, fmt.Errorf("creating the release clone: %w", err)
		}
		defer os.RemoveAll(parent)
		res.Copy = filepath.Join(parent, "repo")
	}
	if err := cloneAt(o.Root, head, res.Copy); err != nil {
		return res, err
	}
	// The bin directory (envtest binaries, tools) is not in git: share it so that the checks
	// below need not rebuild it.
	if _, err := os.Stat(filepath.Join(o.Root, "bin")); err == nil {
		if err := os.Symlink(filepath.Join(o.Root, "bin"), filepath.Join(res.Copy, "bin")); err != nil {
			return res, fmt.Errorf("sharing bin/ with the release clone: %w", err)
		}
	}

	// The modules and tags of the commit being released (the clone has the repository's tags).
	mods, err := workspaceModules(res.Copy)
	if err != nil {
		return res, err
	}
	rel := releasedModules(mods)
	for _, m := range rel {
		tags, err := releaseTags(res.Copy, m)
		if err != nil {
			return res, err
		}
		if len(tags) > 0 && v.compare(tags[len(tags)-1]) <= 0 {
			return res, fmt.Errorf("%s: %s is not newer than the newest tag %s", m.Path, v, m.tag(tags[len(tags)-1]))
		}
	}
	ident, err := gitIdentity(o.Root)
	if err != nil {
		return res, err
	}

	// The release commit: the modules as users get them, requiring each other at v with no
	// replace directive, each go.sum what `go mod tidy` writes against the modules released
	// before it (they are written into a staging proxy one after another, in dependency order).
	if err := checkTidy(res.Copy, mods); err != nil {
		return res, fmt.Errorf("the tree must be tidy before a release (make tidy): %w", err)
	}
	order, err := dependencyOrder(res.Copy, mods)
	if err != nil {
		return res, err
	}
	devReplacements := map[string][]replacement{}
	for _, m := range mods {
		if devReplacements[m.Dir], err = workspaceReplacements(res.Copy, m.Dir, mods); err != nil {
			return res, err
		}
	}
	work, err := os.MkdirTemp("", "mcr-release-work-")
	if err != nil {
		return res, fmt.Errorf("creating the release's work directory: %w", err)
	}
	defer os.RemoveAll(work)
	modCache := filepath.Join(work, "modcache")
	if err := modCacheView(modCache, rel); err != nil {
		return res, fmt.Errorf("preparing a module cache for the release: %w", err)
	}
	staging, proxy := filepath.Join(work, "staging"), filepath.Join(work, "proxy")
	logf("setting every requirement between workspace modules to %s without replace directives and conformance.Version to %s; %s: Unreleased becomes %s", v, v, changelogFile, v)
	if err := setRequirements(res.Copy, mods, v); err != nil {
		return res, err
	}
	if err := dropReplacements(res.Copy, devReplacements); err != nil {
		return res, err
	}
	if err := setSuiteVersion(res.Copy, v); err != nil {
		return res, err
	}
	if err := releaseChangelog(res.Copy, v, time.Now()); err != nil {
		return res, err
	}
	stagingEnv, err := proxyEnv(staging, modCache, rel)
	if err != nil {
		return res, err
	}
	logf("tidying the modules in dependency order against the ones before them: %s", modulePaths(order))
	if err := tidyInOrder(res.Copy, order, rel, v, staging, stagingEnv); err != nil {
		return res, err
	}
	// Empty when the tree already states the version (tests of this tool run on a release
	// commit during the release's own checks); the commit still marks the release.
	if _, err := command(res.Copy, ident, "git", "commit", "--quiet", "--all", "--allow-empty", "--message",
		fmt.Sprintf("Release %s\n\nEvery workspace module requires the others at %s, with no replace directive;\nconformance.Version is %s; %s has its section.", v, v, v, changelogFile)); err != nil {
		return res, err
	}
	if res.Commit, err = gitOutput(res.Copy, "rev-parse", "HEAD"); err != nil {
		return res, err
	}
	if err := writeProxy(res.Copy, res.Commit, rel, v, proxy); err != nil {
		return res, err
	}
	if err := checkSums(res.Copy, mods, rel, v, proxy); err != nil {
		return res, fmt.Errorf("the release commit's go.sum files do not match its modules: %w", err)
	}
	releaseEnv, err := proxyEnv(proxy, modCache, rel)
	if err != nil {
		return res, err
	}
	if o.SkipChecks {
		logf("skipping make verify, make test and verify-api (SKIP_CHECKS)")
	} else if err := runChecks(res.Copy, v, rel, o.DryRun, o.Apidiff, o.Out, releaseEnv); err != nil {
		return res, err
	}
	for _, m := range rel {
		tag := m.tag(v)
		if _, err := command(res.Copy, ident, "git", "tag", "--annotate", "--message", m.Path+" "+v.String(), tag, res.Commit); err != nil {
			return res, err
		}
		res.Tags = append(res.Tags, tag)
	}

	// The tree moves on towards the next version, in the development shape again: the replace
	// directives point the modules at each other's directories, so that every module builds
	// with GOWORK=off and stays tidy without a proxy that knows the release.
	dev := v.nextDev()
	if err := restoreModFiles(res.Copy, head, mods); err != nil {
		return res, err
	}
	if err := setRequirements(res.Copy, mods, v); err != nil {
		return res, err
	}
	for _, m := range mods {
		if out, err := command(filepath.Join(res.Copy, filepath.FromSlash(m.Dir)), releaseEnv, "go", "mod", "tidy"); err != nil {
			return res, fmt.Errorf("%s: go mod tidy with the replace directives back: %w\n%s", m.Path, err, out)
		}
	}
	if err := setSuiteVersion(res.Copy, dev); err != nil {
		return res, err
	}
	if err := openUnreleased(res.Copy); err != nil {
		return res, err
	}
	if _, err := command(res.Copy, ident, "git", "commit", "--quiet", "--all", "--message",
		fmt.Sprintf("Begin %s\n\nThe workspace modules replace each other with their directories again;\nconformance.Version is %s until the next release; %s has an empty\nUnreleased section.", dev, dev, changelogFile)); err != nil {
		return res, err
	}

	if o.Proxy != "" {
		if err := writeProxy(res.Copy, res.Commit, rel, v, o.Proxy); err != nil {
			return res, err
		}
		logf("wrote a module proxy of the released modules to %s (GOPROXY=file://%s)", o.Proxy, o.Proxy)
	}

	if o.DryRun {
		patch, err := command(res.Copy, nil, "git", "log", "--reverse", "--patch", "--format=commit %h %s", head+"..HEAD")
		if err != nil {
			return res, err
		}
		logf("dry run: the commits a release would add (in a clone; %s is untouched):", o.Root)
		_, _ = o.Out.Write(patch)
	} else {
		// Everything succeeded: bring the commits and tags into the tree.
		if _, err := command(o.Root, nil, "git", "fetch", "--quiet", res.Copy, "HEAD"); err != nil {
			return res, err
		}
		if _, err := command(o.Root, nil, "git", "merge", "--quiet", "--ff-only", "FETCH_HEAD"); err != nil {
			return res, err
		}
		refspecs := []string{"fetch", "--quiet", "--no-tags", res.Copy}
		for _, t := range res.Tags {
			refspecs = append(refspecs, "refs/tags/"+t+":refs/tags/"+t)
		}
		if _, err := command(o.Root, nil, "git", refspecs...); err != nil {
			return res, err
		}
	}
	for i, t := range res.Tags {
		logf("tag %s (%s)", t, rel[i].Path)
	}
	if o.DryRun {
		logf("dry run: %d tags at release commit %s; nothing was changed in %s", len(res.Tags), short(res.Commit), o.Root)
	} else {
		logf("committed %s (tagged) and the %s commit after it; publish both and all tags at once:", short(res.Commit), dev)
		logf("  git push --atomic origin HEAD %s", strings.Join(res.Tags, " "))
	}
	return res, nil
}

// cloneAt clones repo into dir and checks out commit, detached. A clone rather than a worktree:
// the tags a dry run makes must not appear in repo, and a worktree shares its refs.
func cloneAt(repo, commit, dir string) error {
	if _, err := command(repo, nil, "git", "clone", "--quiet", "--no-checkout", repo, dir); err != nil {
		return err
	}
	// The clone has every tag of repo, on a branch or not: the version check and verify-api
	// read them there. HEAD may be detached and on no branch the clone copied: fetch it by name.
	if _, err := command(dir, nil, "git", "fetch", "--quiet", "origin", "HEAD"); err != nil {
		return err
	}
	if got, err := gitOutput(dir, "rev-parse", "FETCH_HEAD"); err != nil {
		return err
	} else if got != commit {
		return fmt.Errorf("the clone's HEAD is %s, want %s (did %s move?)", got, commit, repo)
	}
	_, err := command(dir, nil, "git", "checkout", "--quiet", "--detach", commit)
	return err
}

// gitIdentity carries the releaser's name and email into the clone, which has no local config.
func gitIdentity(repo string) ([]string, error) {
	var env []string
	for _, f := range []struct{ key, vars string }{{"user.name", "NAME"}, {"user.email", "EMAIL"}} {
		val, err := gitOutput(repo, "config", f.key)
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && exitErr.ExitCode() == 1 {
			continue // not set: git's own fallback (or its error) applies
		} else if err != nil {
			return nil, err
		}
		env = append(env, "GIT_AUTHOR_"+f.vars+"="+val, "GIT_COMMITTER_"+f.vars+"="+val)
	}
	return env, nil
}

// setRequirements makes every module of the workspace that requires another require it at v.
// examples is included though it is not tagged, so that the tree states one version everywhere.
func setRequirements(root string, mods []module, v version) error {
	paths := map[string]bool{}
	for _, m := range mods {
		paths[m.Path] = true
	}
	for _, m := range mods {
		reqs, err := requirements(root, m.Dir)
		if err != nil {
			return err
		}
		args := []string{"mod", "edit"}
		for p := range reqs {
			if paths[p] {
				args = append(args, "-require="+p+"@"+v.String())
			}
		}
		if len(args) == 2 {
			continue
		}
		slices.Sort(args[2:])
		if _, err := command(filepath.Join(root, m.Dir), nil, "go", args...); err != nil {
			return err
		}
	}
	return nil
}

// checkTidy runs `go mod tidy -diff` in every module, outside the workspace, before the
// rewrite: then the release commit changes in go.mod and go.sum only what the release needs.
func checkTidy(root string, mods []module) error {
	var errs []error
	for _, m := range mods {
		if out, err := command(filepath.Join(root, m.Dir), []string{"GOWORK=off"}, "go", "mod", "tidy", "-diff"); err != nil {
			errs = append(errs, fmt.Errorf("%s is not tidy at the release versions: %w\n%s", m.Path, err, out))
		}
	}
	return errors.Join(errs...)
}

// dropReplacements removes the replace directives of reps (by module directory).
func dropReplacements(root string, reps map[string][]replacement) error {
	for dir, rs := range reps {
		if len(rs) == 0 {
			continue
		}
		args := []string{"mod", "edit"}
		for _, r := range rs {
			args = append(args, "-dropreplace="+r.Old)
		}
		if _, err := command(filepath.Join(root, filepath.FromSlash(dir)), nil, "go", args...); err != nil {
			return err
		}
	}
	return nil
}

// restoreModFiles puts back every module's go.mod and go.sum as they were at commit, the
// development shape the release started from.
func restoreModFiles(root, commit string, mods []module) error {
	for _, m := range mods {
		for _, name := range []string{"go.mod", "go.sum"} {
			file := path.Join(m.Dir, name)
			if _, err := command(root, nil, "git", "cat-file", "-e", commit+":"+file); err != nil {
				// No go.sum before the release (a module with no dependency outside the
				// workspace): drop the release's; tidy writes one if the module needs it.
				if _, err := command(root, nil, "git", "rm", "--quiet", "--force", "--ignore-unmatch", "--", file); err != nil {
					return err
				}
				continue
			}
			if _, err := command(root, nil, "git", "restore", "--source="+commit, "--staged", "--worktree", "--", file); err != nil {
				return err
			}
		}
	}
	return nil
}

// tidyInOrder runs `go mod tidy` in every module of order, which lists each module after those
// it requires, with env resolving the released modules from the proxy directory staging. A
// released module is written into staging as soon as it is tidy, from the git index (the files
// the release commit will have), so that the modules after it tidy against exactly those files.
func tidyInOrder(root string, order, released []module, v version, staging string, env []string) error {
	for _, m := range order {
		if out, err := command(filepath.Join(root, filepath.FromSlash(m.Dir)), env, "go", "mod", "tidy"); err != nil {
			return fmt.Errorf("%s: go mod tidy at the release versions: %w\n%s", m.Path, err, out)
		}
		if _, err := command(root, nil, "git", "add", "--all", "--", m.Dir); err != nil {
			return err
		}
		if !slices.Contains(released, m) {
			continue
		}
		tree, err := gitOutput(root, "write-tree")
		if err != nil {
			return err
		}
		if err := writeProxyModule(root, tree, m, v, time.Now().UTC(), staging); err != nil {
			return fmt.Errorf("%s: writing the staging module proxy: %w", m.Path, err)
		}
	}
	return nil
}

func modulePaths(mods []module) string {
	var paths []string
	for _, m := range mods {
		paths = append(paths, m.Path)
	}
	return strings.Join(paths, ", ")
}

// runChecks runs the repository's own checks on the release commit, then the API check with
// the version being released. env resolves the released modules from the release's proxy, for
// the checks that work outside the workspace (make verify-tidy); the workspace stays in use.
//
// The checks use the user's module cache, not the release's view of it: a build depends on the
// directory of every package, so `make test` in the view would compile everything again. What
// they download of the release is removed from the cache afterwards in a dry run, and anything
// an earlier dry run left there at v is removed first.
func runChecks(root string, v version, released []module, dryRun bool, apidiff string, out io.Writer, env []string) (err error) {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "GOWORK=") || strings.HasPrefix(kv, "GOMODCACHE=")
	})
	if err := removeFromModCache(released, v); err != nil {
		return err
	}
	if dryRun {
		defer func() {
			if rerr := removeFromModCache(released, v); err == nil {
				err = rerr
			}
		}()
	}
	mk := os.Getenv("MAKE")
	if mk == "" {
		mk = "make"
	}
	for _, target := range []string{"verify", "test"} {
		fmt.Fprintf(out, "release: make %s (on the release commit)\n", target)
		cmd := exec.Command(mk, "--no-print-directory", "-C", root, target)
		cmd.Env = append(environ(), env...)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("make %s on the release commit: %w", target, err)
		}
	}
	return verifyAPI(apiOptions{Root: root, Version: v.String(), Apidiff: apidiff, Out: out, Env: env})
}

func gitOutput(dir string, args ...string) (string, error) {
	out, err := command(dir, nil, "git", args...)
	return strings.TrimSpace(string(out)), err
}

func short(commit string) string { return commit[:min(len(commit), 12)] }
