// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command benchplot draws what BenchmarkScale (core/internal/scale) measures against the number
// of engaged clusters, as PNG line charts: it reads `go test -bench` output and writes
// scale-time.png, scale-memory.png and scale-goroutines.png. With several runs of one size
// (-count) it plots their median. It uses only the standard library, text included (a bitmap
// font of its own), so that `make bench-plots` needs nothing installed and the same input always
// gives the same bytes.
//
// Usage: benchplot [-in docs/benchmarks/scale.txt] [-out docs/benchmarks]
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// benchmarkPrefix selects the lines of BenchmarkScale's sub-benchmarks,
// mappers=<own|shared>/N=<clusters>.
const benchmarkPrefix = "BenchmarkScale/"

type chart struct {
	file, title string
	// linearX draws the clusters on a linear axis from zero, where growth in proportion to N is
	// a straight line (for totals such as times); otherwise the axis is logarithmic, which
	// spreads 10 to 1,000 evenly (for per-cluster figures, flat when growth is linear).
	linearX bool
	series  []series
}

type series struct {
	metric, label string
}

// own and shared name BenchmarkScale's two variants in a series' metric (see parse).
const (
	own    = "@mappers=own"
	shared = "@mappers=shared"
)

var charts = []chart{
	{"scale-time.png", "time vs clusters engaged", true, []series{
		{"all-reconciled-s" + own, "first engage to every cluster reconciled (s)"},
		{"all-reconciled-s" + shared, "the same, REST mappers shared (s)"},
		{"disengage-s" + own, "disengage all, back to baseline goroutines (s)"},
	}},
	{"scale-memory.png", "memory per engaged cluster vs clusters engaged", false, []series{
		{"rss-MiB/cluster" + own, "RSS (MiB per cluster)"},
		{"heap-MiB/cluster" + own, "Go heap in use (MiB per cluster)"},
		{"heap-MiB/cluster" + shared, "Go heap in use, REST mappers shared (MiB per cluster)"},
	}},
	{"scale-goroutines.png", "goroutines per engaged cluster vs clusters engaged", false, []series{
		{"goroutines/cluster" + own, "goroutines per cluster"},
	}},
}

func main() {
	in := flag.String("in", "docs/benchmarks/scale.txt", "`go test -bench BenchmarkScale` output")
	out := flag.String("out", "docs/benchmarks", "directory the PNGs are written to")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchplot:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, c := range charts {
		img, err := draw(c, res)
		if err != nil {
			return fmt.Errorf("%s: %w", c.file, err)
		}
		if err := writePNG(filepath.Join(out, c.file), img); err != nil {
			return err
		}
	}
	return nil
}

func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return f.Close()
}

// results holds every value of a metric by number of clusters (several with -count).
type results map[string]map[int][]float64

// parse reads the lines of BenchmarkScale's sub-benchmarks:
//
//	BenchmarkScale/mappers=own/N=100-2   1   1.07 all-reconciled-s   0.43 heap-MiB/cluster ...
//
// and ignores every other line. A value is kept under its unit and variant,
// "heap-MiB/cluster@mappers=own"; a line without a variant (BenchmarkScale/N=100-2, as before
// variants existed) under its unit and @mappers=own, what it measured.
func parse(r io.Reader) (results, error) {
	res := results{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || !strings.HasPrefix(fields[0], benchmarkPrefix) {
			continue
		}
		name := strings.TrimPrefix(fields[0], benchmarkPrefix)
		if i := strings.LastIndexByte(name, '-'); i >= 0 && isDigits(name[i+1:]) { // -GOMAXPROCS
			name = name[:i]
		}
		variant := own
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			variant, name = "@"+name[:i], name[i+1:]
		}
		n, err := strconv.Atoi(strings.TrimPrefix(name, "N="))
		if err != nil || n <= 0 || !strings.HasPrefix(name, "N=") {
			return nil, fmt.Errorf("line %d: bad cluster count in %q", line, fields[0])
		}
		pairs := fields[2:] // after the iteration count
		if len(pairs)%2 != 0 {
			return nil, fmt.Errorf("line %d: values and units do not pair up", line)
		}
		for i := 0; i < len(pairs); i += 2 {
			v, err := strconv.ParseFloat(pairs[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %q of %s: %w", line, pairs[i], pairs[i+1], err)
			}
			key := pairs[i+1] + variant
			if res[key] == nil {
				res[key] = map[int][]float64{}
			}
			res[key][n] = append(res[key][n], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res) == 0 {
		return nil, errors.New("no " + benchmarkPrefix + "... lines")
	}
	return res, nil
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

type point struct{ n, v float64 }

// points returns the median of each size of a metric, by growing size.
func (r results) points(metric string) []point {
	var pts []point
	for n, vs := range r[metric] {
		vs = slices.Clone(vs)
		slices.Sort(vs)
		m := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			m = (vs[len(vs)/2-1] + m) / 2
		}
		pts = append(pts, point{float64(n), m})
	}
	slices.SortFunc(pts, func(a, b point) int { return int(a.n - b.n) })
	return pts
}

const (
	width, height = 960, 560
	textScale     = 2 // each font pixel is textScale×textScale image pixels
	left, right   = 110, width - 40
	top, bottom   = 110, height - 80
)

var (
	white   = color.RGBA{0xff, 0xff, 0xff, 0xff}
	black   = color.RGBA{0x20, 0x20, 0x20, 0xff}
	grid    = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	palette = []color.RGBA{{0x1f, 0x77, 0xb4, 0xff}, {0xe8, 0x6a, 0x0c, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff}}
)

// draw renders one chart: x is the number of clusters, y the metric from zero.
func draw(c chart, res results) (*image.RGBA, error) {
	// A variant the input does not have is left out; a chart with nothing to draw is an error.
	var present []series
	for _, s := range c.series {
		if len(res.points(s.metric)) > 0 {
			present = append(present, s)
		}
	}
	if len(present) == 0 {
		return nil, fmt.Errorf("no values of %s", c.series[0].metric)
	}
	c.series = present
	all := make([][]point, len(c.series))
	var sizes []float64
	lo, hi := 0.0, 0.0
	for i, s := range c.series {
		all[i] = res.points(s.metric)
		for _, p := range all[i] {
			lo, hi = math.Min(lo, p.v), math.Max(hi, p.v)
			if !slices.Contains(sizes, p.n) {
				sizes = append(sizes, p.n)
			}
		}
	}
	slices.Sort(sizes)
	ticks := niceTicks(lo, hi)
	ylo, yhi := ticks[0], ticks[len(ticks)-1]
	scaleX, xLabel := math.Log10, "clusters engaged (log scale)"
	xlo, xhi := scaleX(sizes[0])-0.15, scaleX(sizes[len(sizes)-1])+0.15
	if c.linearX {
		scaleX, xLabel = func(n float64) float64 { return n }, "clusters engaged"
		xlo, xhi = 0, sizes[len(sizes)-1]*1.05
	}
	x := func(n float64) int { return left + int(math.Round((scaleX(n)-xlo)/(xhi-xlo)*(right-left))) }
	y := func(v float64) int { return bottom - int(math.Round((v-ylo)/(yhi-ylo)*(bottom-top))) }

	img := image.NewRGBA(image.Rect(0, 0, width, height))
	fill(img, img.Bounds(), white)
	decimals := max(0, -int(math.Floor(math.Log10(ticks[1]-ticks[0])+1e-9)))
	for _, t := range ticks {
		fill(img, image.Rect(left, y(t), right, y(t)+1), grid)
		label := strconv.FormatFloat(t, 'f', decimals, 64)
		text(img, left-10-textWidth(label), y(t)-7, label, black)
	}
	for _, n := range sizes {
		fill(img, image.Rect(x(n), bottom, x(n)+1, bottom+6), black)
		label := strconv.FormatFloat(n, 'f', -1, 64)
		text(img, x(n)-textWidth(label)/2, bottom+12, label, black)
	}
	fill(img, image.Rect(left, top, left+1, bottom+1), black)
	fill(img, image.Rect(left, bottom, right, bottom+1), black)
	text(img, (left+right-textWidth(xLabel))/2, bottom+40, xLabel, black)
	text(img, (width-textWidth(c.title))/2, 20, c.title, black)

	for i, pts := range all {
		col := palette[i%len(palette)]
		for j := 1; j < len(pts); j++ {
			line(img, x(pts[j-1].n), y(pts[j-1].v), x(pts[j].n), y(pts[j].v), col)
		}
		for _, p := range pts {
			fill(img, image.Rect(x(p.n)-4, y(p.v)-4, x(p.n)+5, y(p.v)+5), col)
		}
		// The legend, one line per series between the title and the plot.
		ly := 50 + i*22
		fill(img, image.Rect(left, ly+2, left+24, ly+12), col)
		text(img, left+34, ly, c.series[i].label, black)
	}
	return img, nil
}

// niceTicks returns evenly spaced round values (steps of 1, 2 or 5 times a power of ten) that
// cover [lo, hi], with about five intervals.
func niceTicks(lo, hi float64) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	first := math.Floor(lo/step+1e-9) * step
	var ticks []float64
	for i := 0; ; i++ {
		// Round away the float noise of the multiplication (0.30000000000000004).
		t, _ := strconv.ParseFloat(strconv.FormatFloat(first+float64(i)*step, 'g', 12, 64), 64)
		ticks = append(ticks, t)
		if t >= hi-1e-9*step {
			return ticks
		}
	}
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for py := r.Min.Y; py < r.Max.Y; py++ {
		for px := r.Min.X; px < r.Max.X; px++ {
			img.SetRGBA(px, py, c)
		}
	}
}

// line draws a 3-pixel-wide segment (Bresenham's algorithm with a square brush).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		fill(img, image.Rect(x0-1, y0-1, x0+2, y0+2), c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

const advance = 6 * textScale // glyph width plus one column of space

func textWidth(s string) int { return len([]rune(s))*advance - textScale }

// text draws s upper-cased with its top-left corner at (x, y).
func text(img *image.RGBA, x, y int, s string, c color.RGBA) {
	for i, r := range []rune(s) {
		g, ok := glyphs[unicode.ToUpper(r)]
		if !ok {
			g = missingGlyph
		}
		for row, bits := range g {
			for col, bit := range bits {
				if bit == '#' {
					px, py := x+i*advance+col*textScale, y+row*textScale
					fill(img, image.Rect(px, py, px+textScale, py+textScale), c)
				}
			}
		}
	}
}

func abs(v int) int { return max(v, -v) }

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
