// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// version is a semantic version as Go modules spell it: vMAJOR.MINOR.PATCH with an optional
// -prerelease. Build metadata (+...) is refused: the go command gives it no meaning in tags.
type version struct {
	major, minor, patch int
	pre                 string // without the leading "-"
}

var versionPattern = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$`)

func parseVersion(s string) (version, error) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return version{}, fmt.Errorf("%q is not a semantic version vMAJOR.MINOR.PATCH[-PRERELEASE]", s)
	}
	var v version
	var err error
	for i, p := range []*int{&v.major, &v.minor, &v.patch} {
		if *p, err = strconv.Atoi(m[i+1]); err != nil {
			return version{}, fmt.Errorf("%q: %w", s, err)
		}
	}
	v.pre = m[4]
	for _, id := range strings.Split(v.pre, ".") {
		if len(id) > 1 && id[0] == '0' && isNumeric(id) {
			return version{}, fmt.Errorf("%q: numeric prerelease identifier %q has a leading zero", s, id)
		}
	}
	return v, nil
}

func (v version) String() string {
	s := fmt.Sprintf("v%d.%d.%d", v.major, v.minor, v.patch)
	if v.pre != "" {
		s += "-" + v.pre
	}
	return s
}

// compare orders versions by semver precedence: -1, 0 or +1.
func (v version) compare(w version) int {
	for _, d := range [][2]int{{v.major, w.major}, {v.minor, w.minor}, {v.patch, w.patch}} {
		if d[0] != d[1] {
			return sign(d[0] - d[1])
		}
	}
	switch {
	case v.pre == w.pre:
		return 0
	case v.pre == "":
		return 1 // a release follows its prereleases
	case w.pre == "":
		return -1
	}
	a, b := strings.Split(v.pre, "."), strings.Split(w.pre, ".")
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := comparePrereleaseID(a[i], b[i]); c != 0 {
			return c
		}
	}
	return sign(len(a) - len(b))
}

func comparePrereleaseID(a, b string) int {
	an, bn := isNumeric(a), isNumeric(b)
	switch {
	case an && bn:
		if len(a) != len(b) { // no leading zeros: the longer number is the larger
			return sign(len(a) - len(b))
		}
		return strings.Compare(a, b)
	case an:
		return -1 // numeric identifiers sort before alphanumeric ones
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

func isNumeric(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// bump is how far one version moves from another.
type bump int

const (
	bumpNone bump = iota
	bumpPatch
	bumpMinor
	bumpMajor
)

func (b bump) String() string {
	return [...]string{"none", "patch", "minor", "major"}[b]
}

// bumpFrom says which part of prev v raises; v must not be older than prev.
func (v version) bumpFrom(prev version) bump {
	switch {
	case v.major != prev.major:
		return bumpMajor
	case v.minor != prev.minor:
		return bumpMinor
	case v.patch != prev.patch:
		return bumpPatch
	}
	return bumpNone
}

// nextDev is the version the tree carries after releasing v: the next minor with a -dev
// suffix (most v0 releases are minor releases; a patch release sets its VERSION explicitly).
// After a prerelease the tree goes on towards the same release.
func (v version) nextDev() version {
	if v.pre != "" {
		return version{major: v.major, minor: v.minor, patch: v.patch, pre: "dev"}
	}
	return version{major: v.major, minor: v.minor + 1, pre: "dev"}
}
