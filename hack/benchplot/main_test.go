// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkScale/mappers=own/N=10-2   	       1	         0.05 all-reconciled-s	        14.40 goroutines/cluster	         0.44 heap-MiB/cluster	0.51 rss-MiB/cluster	0.01 disengage-s
BenchmarkScale/mappers=own/N=100-2  	       1	         1.07 all-reconciled-s	        14.04 goroutines/cluster	         0.43 heap-MiB/cluster	0.48 rss-MiB/cluster	0.03 disengage-s
BenchmarkScale/mappers=own/N=100-2  	       1	         0.61 all-reconciled-s	        14.00 goroutines/cluster	         0.41 heap-MiB/cluster	0.47 rss-MiB/cluster	0.05 disengage-s
BenchmarkScale/N=100-2  	       1	         0.90 all-reconciled-s	        14.10 goroutines/cluster	         0.42 heap-MiB/cluster	0.49 rss-MiB/cluster	0.04 disengage-s
BenchmarkScale/mappers=shared/N=10-2   	       1	         0.02 all-reconciled-s	        14.40 goroutines/cluster	         0.12 heap-MiB/cluster	0.20 rss-MiB/cluster	0.01 disengage-s
BenchmarkScale/mappers=shared/N=100-2  	       1	         0.11 all-reconciled-s	        14.04 goroutines/cluster	         0.11 heap-MiB/cluster	0.18 rss-MiB/cluster	0.02 disengage-s
BenchmarkOther-2 1 5 x-s
PASS
`

func TestParseTakesMedians(t *testing.T) {
	res, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	// The line without a variant counts as mappers=own, the default it measured.
	got := res.points("all-reconciled-s" + own)
	want := []point{{10, 0.05}, {100, 0.90}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("points = %v, want %v", got, want)
	}
	if got, want := res.points("heap-MiB/cluster"+shared), []point{{10, 0.12}, {100, 0.11}}; !reflect.DeepEqual(got, want) {
		t.Errorf("shared points = %v, want %v", got, want)
	}
	if _, ok := res["x-s"+own]; ok {
		t.Error("a line of another benchmark was read")
	}
}

func TestParseRejectsBrokenLines(t *testing.T) {
	for _, in := range []string{
		"",
		"BenchmarkScale/N=ten-2 1 0.5 all-reconciled-s",
		"BenchmarkScale/mappers=own/ten-2 1 0.5 all-reconciled-s",
		"BenchmarkScale/mappers=own/N=-2 1 0.5 all-reconciled-s",
		"BenchmarkScale/N=10-2 1 0.5",
		"BenchmarkScale/N=10-2 1 fast all-reconciled-s",
	} {
		if _, err := parse(strings.NewReader(in)); err == nil {
			t.Errorf("parse(%q) succeeded, want an error", in)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 14.4, []float64{0, 5, 10, 15}},
		{0, 0.44, []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5}},
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 0, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
	} {
		if got := niceTicks(tc.lo, tc.hi); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("niceTicks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestRunWritesEveryChart draws the charts from the sample and checks that each is a PNG with
// ink of every series' color, and that a second run writes the same bytes.
func TestRunWritesEveryChart(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "scale.txt")
	if err := os.WriteFile(in, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if b := img.Bounds(); b.Dx() != width || b.Dy() != height {
			t.Errorf("%s is %v, want %dx%d", c.file, b, width, height)
		}
		for i := range c.series {
			col := palette[i]
			found := false
			for y := top; y < bottom && !found; y++ {
				for x := left + 1; x < right && !found; x++ {
					found = color.RGBAModel.Convert(img.At(x, y)) == col
				}
			}
			if !found {
				t.Errorf("%s: no line of %s in the plot area", c.file, c.series[i].metric)
			}
		}
		if err := run(in, dir); err != nil {
			t.Fatal(err)
		}
		again, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, again) {
			t.Errorf("%s differs between two runs on the same input", c.file)
		}
	}
}

func TestRunFailsWithoutData(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "scale.txt")
	if err := os.WriteFile(in, []byte("BenchmarkScale/N=10-2 1 3 tcp-conns\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, dir); err == nil {
		t.Error("run succeeded without the metrics the charts plot")
	}
}

// TestRunLeavesOutAMissingVariant: output of the own-mappers variant alone still draws every
// chart, without the shared series.
func TestRunLeavesOutAMissingVariant(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "scale.txt")
	var ownOnly []string
	for _, l := range strings.Split(sample, "\n") {
		if !strings.Contains(l, "shared") {
			ownOnly = append(ownOnly, l)
		}
	}
	if err := os.WriteFile(in, []byte(strings.Join(ownOnly, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, dir); err != nil {
		t.Fatalf("drawing the own variant alone: %v", err)
	}
	res, err := parse(strings.NewReader(strings.Join(ownOnly, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if pts := res.points("heap-MiB/cluster" + shared); len(pts) != 0 {
		t.Errorf("shared points read from output without them: %v", pts)
	}
}
