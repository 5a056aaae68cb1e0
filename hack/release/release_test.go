// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gitT runs git in dir and returns its trimmed output, failing the test on an error.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitOutput(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cloneRepo clones the repository this tool lives in (its last commit) into a temporary
// directory, with an identity to commit with: the tests release the clone, never the tree.
func cloneRepo(t *testing.T) string {
	t.Helper()
	root := gitT(t, ".", "rev-parse", "--show-toplevel")
	dir := filepath.Join(t.TempDir(), "repo")
	gitT(t, ".", "clone", "--quiet", root, dir)
	gitT(t, dir, "config", "user.name", "Release Test")
	gitT(t, dir, "config", "user.email", "release-test@example.com")
	return dir
}

// treeState is what a release must not change in a tree it only dry-runs: the commit, the
// status, the tags and every file under version control.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	fmt.Fprintln(h, gitT(t, dir, "rev-parse", "HEAD"), gitT(t, dir, "status", "--porcelain"), gitT(t, dir, "tag", "--list"))
	for _, f := range strings.Fields(gitT(t, dir, "ls-files")) {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %x\n", f, sha256.Sum256(data))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestReleaseDryRun(t *testing.T) {
	repo := cloneRepo(t)
	before := treeState(t, repo)
	mods, err := workspaceModules(repo)
	if err != nil {
		t.Fatal(err)
	}
	rel := releasedModules(mods)
	if len(rel) != len(mods)-1 || slices.ContainsFunc(rel, func(m module) bool { return m.Dir == "examples" }) {
		t.Fatalf("released modules %v: want every module of go.work but examples", rel)
	}
	workPaths := map[string]bool{}
	for _, m := range mods {
		workPaths[m.Path] = true
	}
	// The workspace requirements of every module before the release, by module directory.
	wantReqs := map[string][]string{}
	for _, m := range mods {
		reqs, err := requirements(repo, m.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for p := range reqs {
			if workPaths[p] {
				wantReqs[m.Dir] = append(wantReqs[m.Dir], p)
			}
		}
	}

	if len(wantReqs) == 0 {
		t.Fatal("no module requires another: the requirements are not checked")
	}
	wantReplace, wantSum := map[string][]replacement{}, map[string][]byte{}
	for _, m := range mods {
		if wantReplace[m.Dir], err = workspaceReplacements(repo, m.Dir, mods); err != nil {
			t.Fatal(err)
		}
		wantSum[m.Dir], _ = os.ReadFile(filepath.Join(repo, m.Dir, "go.sum"))
	}

	// A prerelease of the next version that no other run made: the consumer below resolves it
	// through the shared module cache (whose build cache entries it reuses), where a version
	// caches forever, so a later run or the real release must not find this run's files under
	// its version. The consumer removes it from the cache when it is done.
	v := nextRelease(t, repo)
	v.pre = "installtest." + time.Now().UTC().Format("20060102150405")
	keep := filepath.Join(t.TempDir(), "copy")
	proxy := filepath.Join(t.TempDir(), "proxy")
	var out bytes.Buffer
	err = run([]string{"release", "-root", repo, "-version", v.String(), "-dry-run", "-skip-checks", "-keep", keep, "-proxy", proxy}, &out, &out)
	t.Logf("release output:\n%s", out.String())
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}

	if after := treeState(t, repo); after != before {
		t.Errorf("the dry run changed the repository it released (state %s, was %s)", after, before)
	}

	// One tag per released module, printed and made, all at the release commit.
	var wantTags []string
	for _, m := range rel {
		wantTags = append(wantTags, m.tag(v))
	}
	slices.Sort(wantTags)
	var printed []string
	for line := range strings.Lines(out.String()) {
		if rest, ok := strings.CutPrefix(line, "release: tag "); ok {
			printed = append(printed, strings.Fields(rest)[0])
		}
	}
	slices.Sort(printed)
	if !slices.Equal(printed, wantTags) {
		t.Errorf("printed tags %v, want %v", printed, wantTags)
	}
	earlier := strings.Fields(gitT(t, repo, "tag", "--list"))
	made := slices.DeleteFunc(strings.Fields(gitT(t, keep, "tag", "--list")), func(tag string) bool { return slices.Contains(earlier, tag) })
	if !slices.Equal(made, wantTags) {
		t.Errorf("tags in the clone %v, want %v", made, wantTags)
	}
	releaseCommit := gitT(t, keep, "rev-parse", "HEAD~1")
	for _, tag := range made {
		if c := gitT(t, keep, "rev-parse", tag+"^{commit}"); c != releaseCommit {
			t.Errorf("tag %s is at %s, want the release commit %s", tag, c, releaseCommit)
		}
	}
	if base := gitT(t, keep, "rev-parse", "HEAD~2"); base != gitT(t, repo, "rev-parse", "HEAD") {
		t.Errorf("the release commits do not follow the released HEAD: HEAD~2 is %s", base)
	}

	// The release commit is the modules as users get them: no replace directive, and a go.sum
	// that holds the hashes of the zips in the proxy (the go command checks them as it loads
	// every package and test of each module outside the workspace, read-only).
	released := filepath.Join(t.TempDir(), "released")
	gitT(t, keep, "worktree", "add", "--quiet", "--detach", released, "HEAD~1")
	relEnv, err := proxyEnv(proxy, consumerModCache(t), rel)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		if reps, err := workspaceReplacements(released, m.Dir, mods); err != nil || len(reps) > 0 {
			t.Errorf("%s/go.mod at the release replaces %v (%v), want no replace directive", m.Dir, reps, err)
		}
		if out, err := command(filepath.Join(released, m.Dir), append(relEnv, "GOFLAGS=-mod=readonly -modcacherw"), "go", "list", "-deps", "-test", "./..."); err != nil {
			t.Errorf("%s at the release does not load outside the workspace: %v\n%.2000s", m.Path, err, out)
		}
		checkRequirements(t, released, m, workPaths, wantReqs[m.Dir], v)
	}

	// The commit after it is the development shape again: the replace directives and go.sum
	// files of the released HEAD, requirements at v, tidy with no proxy that knows v.
	for _, m := range mods {
		if reps, err := workspaceReplacements(keep, m.Dir, mods); err != nil || !slices.Equal(reps, wantReplace[m.Dir]) {
			t.Errorf("%s/go.mod after the release replaces %v (%v), want %v as before", m.Dir, reps, err, wantReplace[m.Dir])
		}
		sum, _ := os.ReadFile(filepath.Join(keep, m.Dir, "go.sum"))
		if !bytes.Equal(sum, wantSum[m.Dir]) {
			t.Errorf("%s/go.sum after the release differs from the one before it", m.Dir)
		}
		if out, err := command(filepath.Join(keep, m.Dir), []string{"GOWORK=off", "GOPROXY=off"}, "go", "mod", "tidy", "-diff"); err != nil {
			t.Errorf("%s is not tidy after the release: %v\n%s", m.Path, err, out)
		}
		checkRequirements(t, keep, m, workPaths, wantReqs[m.Dir], v)
	}
	if changed := strings.Fields(gitT(t, keep, "diff", "--name-only", "HEAD~2", "HEAD", "--", "*.go")); slices.ContainsFunc(changed, func(f string) bool { return f != suiteVersionFile }) {
		t.Errorf("the release changes Go files %q, want at most %s", changed, suiteVersionFile)
	}
	// conformance.Version is the release at the tags, the next -dev version after them.
	atTag := gitT(t, keep, "show", "conformance/"+v.String()+":"+suiteVersionFile)
	if !strings.Contains(atTag, "\nconst Version = \""+v.String()+"\"\n") {
		t.Errorf("conformance.Version at conformance/%s is not %s:\n%s", v, v, atTag)
	}
	if sv, err := suiteVersion(keep); err != nil || sv != v.nextDev().String() {
		t.Errorf("conformance.Version after the release = %q (%v), want %s", sv, err, v.nextDev())
	}

	// The changelog's Unreleased section is v's at the tags; a new one is open after them.
	heading := "\n## " + v.String() + " ("
	if cl := gitT(t, keep, "show", "core/"+v.String()+":"+changelogFile); !strings.Contains(cl, heading) || strings.Contains(cl, "\n"+unreleasedHeading+"\n") {
		t.Errorf("%s at the release has no heading %q, or still an Unreleased one:\n%s", changelogFile, heading, cl)
	}
	cl, err := os.ReadFile(filepath.Join(keep, changelogFile))
	if err != nil {
		t.Fatal(err)
	}
	if u, r := strings.Index(string(cl), "\n"+unreleasedHeading+"\n"), strings.Index(string(cl), heading); u < 0 || u > r {
		t.Errorf("%s after the release has no Unreleased section above %s", changelogFile, v)
	}

	t.Run("consumer", func(t *testing.T) { checkConsumer(t, keep, proxy, v) })
}

// checkRequirements checks that module m in the tree at root requires the workspace modules it
// required before the release (want), each at v.
func checkRequirements(t *testing.T, root string, m module, workPaths map[string]bool, want []string, v version) {
	t.Helper()
	reqs, err := requirements(root, m.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p, pv := range reqs {
		if !workPaths[p] {
			continue
		}
		got = append(got, p)
		if pv != v.String() {
			t.Errorf("%s requires %s %s, want %s", m.Path, p, pv, v)
		}
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s requires workspace modules %v, was %v", m.Path, got, want)
	}
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := command(".", nil, "go", "env", key)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// nextRelease is the version the tests release the repository as: the one conformance.Version
// works towards (v0.1.0 before the first release) or, if that is tagged already, the minor
// after the newest tag, so that the tests keep passing after releases and on a release commit
// (make release runs them there before it tags).
func nextRelease(t *testing.T, repo string) version {
	t.Helper()
	sv, err := suiteVersion(repo)
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseVersion(strings.TrimSuffix(sv, "-dev"))
	if err != nil {
		t.Fatal(err)
	}
	mods, err := workspaceModules(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range releasedModules(mods) {
		tags, err := releaseTags(repo, m)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(tags); n > 0 && v.compare(tags[n-1]) <= 0 {
			v = version{major: tags[n-1].major, minor: tags[n-1].minor + 1}
		}
	}
	return v
}

func TestReleaseCommitsAndTags(t *testing.T) {
	repo := cloneRepo(t)
	head := gitT(t, repo, "rev-parse", "HEAD")
	branch := gitT(t, repo, "branch", "--show-current")
	v := nextRelease(t, repo)
	var out bytes.Buffer
	if err := run([]string{"release", "-root", repo, "-version", v.String(), "-skip-checks"}, &out, &out); err != nil {
		t.Fatalf("release: %v\n%s", err, out.String())
	}
	if got := gitT(t, repo, "rev-parse", "HEAD~2"); got != head {
		t.Errorf("HEAD~2 is %s, want the released commit %s: the branch did not fast-forward by two commits", got, head)
	}
	if got := gitT(t, repo, "branch", "--show-current"); got != branch {
		t.Errorf("on branch %q after the release, want %q", got, branch)
	}
	if status := gitT(t, repo, "status", "--porcelain"); status != "" {
		t.Errorf("the tree is not clean after the release:\n%s", status)
	}
	if c := gitT(t, repo, "rev-parse", "core/"+v.String()+"^{commit}"); c != gitT(t, repo, "rev-parse", "HEAD~1") {
		t.Errorf("core/%s is at %s, want the release commit", v, c)
	}
	if msg := gitT(t, repo, "tag", "--list", "--format=%(contents:subject)", "providers/kind/"+v.String()); msg != "mcr.dev/providers/kind "+v.String() {
		t.Errorf("providers/kind/%s says %q", v, msg)
	}
	wantPush := fmt.Sprintf("git push --atomic origin HEAD conformance/%s core/%s ", v, v)
	if !strings.Contains(out.String(), wantPush) {
		t.Errorf("the output has no push command starting %q:\n%s", wantPush, out.String())
	}

	// The next release must be newer than this one.
	out.Reset()
	err := run([]string{"release", "-root", repo, "-version", v.String(), "-skip-checks", "-dry-run"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "not newer than the newest tag") {
		t.Errorf("releasing %s again: %v, want a refusal", v, err)
	}
}

func TestReleaseRefuses(t *testing.T) {
	repo := cloneRepo(t)
	before := treeState(t, repo)
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"not semver", []string{"-version", "0.1.0", "-skip-checks"}, "not a semantic version"},
		{"build metadata", []string{"-version", "v0.1.0+abc", "-skip-checks"}, "not a semantic version"},
		{"v2 without /v2 paths", []string{"-version", "v2.0.0", "-skip-checks"}, "/v2 suffix"},
		{"no version", nil, "-version is required"},
		{"checks without apidiff", []string{"-version", "v0.1.0"}, "-apidiff is required"},
		{"keep without dry run", []string{"-version", "v0.1.0", "-skip-checks", "-keep", t.TempDir()}, "-keep needs -dry-run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(append([]string{"release", "-root", repo}, tt.args...), &out, &out)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if after := treeState(t, repo); after != before {
		t.Error("a refused release changed the repository")
	}

	t.Run("dirty tree", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(repo, "stray.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := run([]string{"release", "-root", repo, "-version", nextRelease(t, repo).String(), "-skip-checks"}, &out, &out)
		if err == nil || !strings.Contains(err.Error(), "uncommitted or untracked") {
			t.Errorf("error %v, want a refusal of the untracked file", err)
		}
		if after := treeState(t, repo); after == before {
			t.Fatal("the untracked file does not show in the tree state")
		}
		os.Remove(filepath.Join(repo, "stray.txt"))
		if after := treeState(t, repo); after != before {
			t.Error("a refused release changed the repository")
		}
	})

	t.Run("older than a tag", func(t *testing.T) {
		v := nextRelease(t, repo)
		newer := "providers/kind/" + v.String()
		// On a commit no branch reaches, as a release made elsewhere can be.
		elsewhere := gitT(t, repo, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "elsewhere")
		gitT(t, repo, "tag", newer, elsewhere)
		defer gitT(t, repo, "tag", "--delete", newer)
		rc := version{major: v.major, minor: v.minor, patch: v.patch, pre: "rc.1"}
		var out bytes.Buffer
		err := run([]string{"release", "-root", repo, "-version", rc.String(), "-skip-checks", "-dry-run"}, &out, &out)
		if err == nil || !strings.Contains(err.Error(), newer) {
			t.Errorf("error %v, want a refusal naming %s", err, newer)
		}
	})
}

// TestModuleFiles checks what the written proxy puts in a module zip: the module's files and
// none of a nested module's.
func TestModuleFiles(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	writeFiles(t, repo, map[string]string{
		"lib/go.mod":                 "module example.com/lib\n",
		"lib/lib.go":                 "package lib\n",
		"lib/sub/sub.go":             "package sub\n",
		"lib/testdata/mod/go.mod":    "module example.com/nested\n",
		"lib/testdata/mod/nested.go": "package nested\n",
		"other/other.go":             "package other\n",
	})
	gitInit(t, repo)
	files, err := moduleFiles(repo, "HEAD", "lib")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{"go.mod", "lib.go", "sub/sub.go"}; !slices.Equal(names, want) {
		t.Errorf("module files %v, want %v", names, want)
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitInit makes dir a repository with everything in it committed.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	gitT(t, dir, "init", "--quiet", "--initial-branch=main")
	gitT(t, dir, "config", "user.name", "Release Test")
	gitT(t, dir, "config", "user.email", "release-test@example.com")
	commitAll(t, dir, "initial")
}

func commitAll(t *testing.T, dir, msg string) {
	t.Helper()
	gitT(t, dir, "add", "--all")
	gitT(t, dir, "commit", "--quiet", "--allow-empty", "--message", msg)
}

// releaseFixture is a small repository to release with its checks: a workspace of lib and app
// (app requires lib, through a replace directive as in mcr), conformance.Version and a Makefile
// whose verify and test targets are given. lib/v0.1.0 and app/v0.1.0 tag its first commit.
func releaseFixture(t *testing.T, verify, test string) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	writeFiles(t, repo, map[string]string{
		"go.work":                 "go 1.26.0\n\nuse (\n\t./app\n\t./lib\n)\n",
		"lib/go.mod":              "module example.com/lib\n\ngo 1.26.0\n",
		"lib/lib.go":              libV1,
		"app/go.mod":              "module example.com/app\n\ngo 1.26.0\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n",
		"app/app.go":              "package app\n\nimport \"example.com/lib\"\n\n// Greet greets.\nfunc Greet() string { return lib.Hello(\"app\") }\n",
		"conformance/versions.go": "package conformance\n\nconst Version = \"v0.1.0-dev\"\n",
		"Makefile":                "verify:\n\t" + verify + "\ntest:\n\t" + test + "\n",
		"CHANGELOG.md":            "# Changelog\n\n## Unreleased\n\n- lib says hello.\n",
	})
	gitInit(t, repo)
	gitT(t, repo, "tag", "lib/v0.1.0")
	gitT(t, repo, "tag", "app/v0.1.0")
	return repo
}

func TestReleaseRunsChecks(t *testing.T) {
	apidiff := apidiffPath(t)
	// The test target proves it runs on the release commit: it sees the released version.
	onRelease := `@grep -q 'const Version = "v0.2.0"' conformance/versions.go && grep -q 'example.com/lib v0.2.0' app/go.mod && echo test ran on the release commit`

	t.Run("pass", func(t *testing.T) {
		repo := releaseFixture(t, "@echo verify ran", onRelease)
		writeFiles(t, repo, map[string]string{"lib/lib.go": libAdded})
		commitAll(t, repo, "lib: Bye")
		var out bytes.Buffer
		err := run([]string{"release", "-root", repo, "-version", "v0.2.0", "-apidiff", apidiff}, &out, &out)
		if err != nil {
			t.Fatalf("release: %v\n%s", err, out.String())
		}
		for _, want := range []string{"verify ran", "test ran on the release commit", "compatible:   Bye: added", "verify-api: ok", "release: tag lib/v0.2.0"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
		if tags := strings.Fields(gitT(t, repo, "tag", "--list", "*v0.2.0")); !slices.Equal(tags, []string{"app/v0.2.0", "lib/v0.2.0"}) {
			t.Errorf("tags %v", tags)
		}
	})

	refused := []struct {
		name, version, test, lib, wantErr string
	}{
		{"make test fails", "v0.2.0", "@exit 1", libAdded, "make test on the release commit"},
		{"incompatible change in a patch release", "v0.1.1", "@true", libBroken, "changed more than v0.1.1 allows"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			repo := releaseFixture(t, "@true", tt.test)
			writeFiles(t, repo, map[string]string{"lib/lib.go": tt.lib, "app/app.go": "package app\n\nimport _ \"example.com/lib\"\n"})
			commitAll(t, repo, "lib: change")
			before := treeState(t, repo)
			var out bytes.Buffer
			err := run([]string{"release", "-root", repo, "-version", tt.version, "-apidiff", apidiff}, &out, &out)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("release: %v, want an error containing %q\n%s", err, tt.wantErr, out.String())
			}
			if after := treeState(t, repo); after != before {
				t.Error("a release whose checks failed changed the repository")
			}
		})
	}
}

// consumerModCache is a module cache for a consumer of the release: the user's modules, but
// mcr.dev's only from the proxy the test wrote (see modCacheView).
func consumerModCache(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "modcache")
	if err := modCacheView(dir, []module{{Path: "mcr.dev/core"}}); err != nil {
		t.Fatal(err)
	}
	return dir
}
