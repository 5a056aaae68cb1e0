// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// changelogFile is where users read what each release changed. Changes are added under an
// "## Unreleased" heading as they land; a release turns that heading into its version.
const changelogFile = "CHANGELOG.md"

const unreleasedHeading = "## Unreleased"

// releaseChangelog renames the Unreleased section to v, dated. A changelog that already has a
// section for v (the tree states the version already) is left as it is.
func releaseChangelog(root string, v version, date time.Time) error {
	lines, err := readChangelog(root)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if l == "## "+v.String() || strings.HasPrefix(l, "## "+v.String()+" ") {
			return nil
		}
	}
	for i, l := range lines {
		if l == unreleasedHeading {
			lines[i] = fmt.Sprintf("## %s (%s)", v, date.UTC().Format(time.DateOnly))
			return writeChangelog(root, lines)
		}
	}
	return fmt.Errorf("%s has no %q section to release as %s", changelogFile, unreleasedHeading, v)
}

// openUnreleased puts an empty Unreleased section above the newest release.
func openUnreleased(root string) error {
	lines, err := readChangelog(root)
	if err != nil {
		return err
	}
	for i, l := range lines {
		if l == unreleasedHeading {
			return nil
		}
		if strings.HasPrefix(l, "## ") {
			lines = append(lines[:i], append([]string{unreleasedHeading, ""}, lines[i:]...)...)
			return writeChangelog(root, lines)
		}
	}
	return writeChangelog(root, append(lines, "", unreleasedHeading))
}

func readChangelog(root string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, changelogFile))
	if err != nil {
		return nil, fmt.Errorf("reading the changelog: %w", err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), nil
}

func writeChangelog(root string, lines []string) error {
	if err := os.WriteFile(filepath.Join(root, changelogFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing the changelog: %w", err)
	}
	return nil
}
