// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"mcr.dev/core/multicluster"
)

// DefaultSeparator is the default of Options.Separator.
const DefaultSeparator = "+"

// The naming scheme (also on docs/providers/file.md):
//
//	<file> <Separator> <context>
//
// <file> is the kubeconfig file's path relative to the name base, with "/" between path
// elements, and with every "%", every Separator and every byte that is not valid UTF-8 in it
// percent-encoded ("%25", "%2B", "%FF", ...).
// <context> is the context name exactly as written in the file.
//
// The name is unique because <file> never contains the Separator: the first Separator of a name
// ends <file>, decoding <file> gives back the relative path, and a relative path and the fixed
// base give back the absolute file. Two files with equal context names, context names that
// contain the Separator, and file names that contain it therefore never collide.
//
// The name is stable because it depends on nothing but the configured paths (through the base),
// the file's path and the context name: not on discovery order, not on which other files exist,
// not on symlink targets (ConfigMap and Secret volumes swap those on every update).

// clusterName returns the name of context in the file at path (absolute and clean).
func clusterName(base, sep, path, context string) multicluster.ClusterName {
	rel, err := filepath.Rel(base, path)
	if err != nil {
		// Rel fails only when one path is absolute and the other is not; both are absolute.
		rel = path
	}
	return multicluster.ClusterName(escapeFile(filepath.ToSlash(rel), sep) + sep + context)
}

// escapeFile percent-encodes "%", sep and every byte that is not part of valid UTF-8 in a relative
// file path. File names are bytes: encoding invalid ones, rather than replacing them by U+FFFD,
// keeps two such names apart and cluster names valid UTF-8, as logs and metric labels need.
func escapeFile(rel, sep string) string {
	var b strings.Builder
	for len(rel) > 0 {
		r, n := utf8.DecodeRuneInString(rel)
		s := rel[:n]
		rel = rel[n:]
		if s == "%" || s == sep || r == utf8.RuneError && n == 1 {
			for _, c := range []byte(s) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
			continue
		}
		b.WriteString(s)
	}
	return b.String()
}

// validSeparator reports why sep cannot separate the file from the context, or nil.
func validSeparator(sep string) error {
	switch {
	case utf8.RuneCountInString(sep) != 1 || !utf8.ValidString(sep):
		return fmt.Errorf("separator %q must be exactly one character", sep)
	case sep == "%" || sep == "/":
		return fmt.Errorf("separator %q is reserved: %% escapes and / separates path elements", sep)
	case strings.ContainsAny(sep, "0123456789ABCDEFabcdef"):
		// A hexadecimal digit would occur inside the percent-encoding of the file part.
		return fmt.Errorf("separator %q is reserved: hexadecimal digits occur in percent-encoding", sep)
	}
	return nil
}

// nameBase returns the deepest directory containing every root: the directory that holds each
// entry of Files, each entry of Dirs itself, and the part of each glob before its first element
// with a wildcard. The roots are absolute and clean.
func nameBase(roots []string) string {
	if len(roots) == 0 {
		return string(filepath.Separator)
	}
	base := roots[0]
	for _, r := range roots[1:] {
		for !within(r, base) {
			parent := filepath.Dir(base)
			if parent == base {
				break
			}
			base = parent
		}
	}
	return base
}

// within reports whether path is dir or below it (both absolute and clean).
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}
