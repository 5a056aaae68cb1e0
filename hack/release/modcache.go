// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// modCacheView makes dir a module cache that reads every module from the user's cache
// (GOMODCACHE) through symbolic links but keeps the released modules' roots (the first element of
// their paths, "mcr.dev") apart: the go command caches a module version forever, so a version a dry run or a
// test wrote must not reach the user's cache, where it would stand in for the real release
// later. Modules downloaded through the view from elsewhere land in the user's cache as usual.
func modCacheView(dir string, released []module) error {
	cache, err := goEnvValue("GOMODCACHE")
	if err != nil {
		return err
	}
	var roots []string
	for _, m := range released {
		roots = append(roots, strings.Split(m.Path, "/")[0])
	}
	link := func(from, to string, skip ...string) error {
		entries, err := os.ReadDir(from)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.MkdirAll(to, 0o755); err != nil {
			return err
		}
		for _, e := range entries {
			if slices.Contains(roots, e.Name()) || slices.Contains(skip, e.Name()) {
				continue
			}
			if err := os.Symlink(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	if err := link(cache, dir, "cache"); err != nil {
		return err
	}
	if err := link(filepath.Join(cache, "cache"), filepath.Join(dir, "cache"), "download"); err != nil {
		return err
	}
	return link(filepath.Join(cache, "cache", "download"), filepath.Join(dir, "cache", "download"))
}

// proxyEnv is the environment of go commands that resolve the released modules from the module
// proxy in dir, outside any workspace, with modCache as the module cache: the proxy comes first,
// the user's GOPROXY after it for every other module, and the released modules are kept out of
// the checksum database (it does not know them until they are published; their hashes are
// checked against the proxy's files instead, see checkSums).
func proxyEnv(dir, modCache string, released []module) ([]string, error) {
	env := []string{"GOWORK=off", "GOMODCACHE=" + modCache}
	for _, key := range []string{"GOPROXY", "GONOSUMDB", "GOFLAGS"} {
		val, err := goEnvValue(key)
		if err != nil {
			return nil, err
		}
		switch key {
		case "GOPROXY":
			val = "file://" + filepath.ToSlash(dir) + "," + val
		case "GONOSUMDB":
			for _, m := range released {
				val += "," + m.Path
			}
			val = strings.TrimPrefix(val, ",")
		case "GOFLAGS":
			// The view's copies of the released modules must be removable afterwards.
			val = strings.TrimSpace(val + " -modcacherw")
		}
		env = append(env, key+"="+val)
	}
	return env, nil
}

func goEnvValue(key string) (string, error) {
	out, err := command(".", nil, "go", "env", key)
	return strings.TrimSpace(string(out)), err
}

// removeFromModCache removes version v of the released modules' roots (see modCacheView) from
// the user's module cache: the extracted directories (<root>/...@v) and the download files
// (cache/download/<root>/.../@v/v.*, and the version lists there, which the go command fetches
// again when it needs them), leaving every other version. The files must be writable
// (GOFLAGS=-modcacherw when they were downloaded).
func removeFromModCache(released []module, v version) error {
	cache, err := goEnvValue("GOMODCACHE")
	if err != nil {
		return err
	}
	var remove []string
	for _, m := range released {
		root := strings.Split(m.Path, "/")[0]
		download := filepath.Join(cache, "cache", "download", root)
		for _, dir := range []string{filepath.Join(cache, root), download} {
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				// The version's files, and the download cache's version lists, which name it.
				name := d.Name()
				if strings.HasSuffix(name, "@"+v.String()) || strings.HasPrefix(name, v.String()+".") || dir == download && name == "list" && !d.IsDir() {
					if !slices.Contains(remove, p) {
						remove = append(remove, p)
					}
					if d.IsDir() {
						return filepath.SkipDir
					}
				}
				return nil
			})
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing %s from the module cache: %w", v, err)
			}
		}
	}
	for _, p := range remove {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("removing %s from the module cache: %w", v, err)
		}
	}
	return nil
}
