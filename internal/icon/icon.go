// Package icon draws nudge's mark, a disc with a glyph for each state at a
// glance (docs/behaviour.md §6), at any size: the menu-bar icon and the
// macOS application icon come from the same drawing.
package icon

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
)

// units is the edge of the square the glyphs are drawn in; pictures of any
// size are sampled from it.
const units = 32

// Look is the icon's state at a glance.
type Look int

// The looks of the menu-bar icon.
const (
	AllFine Look = iota
	Retrying
	NeedsAttention
)

var (
	glyphs = map[Look]glyph{AllFine: checkGlyph, Retrying: arrowGlyph, NeedsAttention: bangGlyph}
	fills  = map[Look]color.NRGBA{
		AllFine:        {0x2e, 0x9d, 0x4a, 0xff},
		Retrying:       {0xe8, 0x9a, 0x10, 0xff},
		NeedsAttention: {0xd9, 0x30, 0x25, 0xff},
	}
)

// Template is look l as a black + alpha PNG of size×size pixels, which
// macOS tints to suit light and dark menu bars.
func Template(l Look, size int) []byte {
	t, _ := draw(l, size)
	return t
}

// Colour is look l as a colour PNG of size×size pixels (Linux menu bars,
// the application icon).
func Colour(l Look, size int) []byte {
	_, c := draw(l, size)
	return c
}

// A glyph reports whether a point (in icon pixels) is part of the mark
// drawn inside the disc.
type glyph func(x, y float64) bool

const (
	centre  = units / 2.0
	radius  = 14.5 // the disc
	outline = 1.4  // the dark rim that keeps the disc visible on light bars
)

func checkGlyph(x, y float64) bool {
	return nearSegment(x, y, 9.5, 16.5, 14, 21, 1.9) || nearSegment(x, y, 14, 21, 22.5, 11, 1.9)
}

// arrowGlyph is a circular arrow: a ring open at the upper right, its head
// at the ring's end pointing clockwise into the gap.
func arrowGlyph(x, y float64) bool {
	const ring, head = 7.1, -60 * math.Pi / 180
	dx, dy := x-centre, y-centre
	r := math.Hypot(dx, dy)
	a := math.Atan2(dy, dx) // screen angles grow clockwise
	if r > ring-1.5 && r < ring+1.5 && (a < head || a > 10*math.Pi/180) {
		return true
	}
	px, py := centre+ring*math.Cos(head), centre+ring*math.Sin(head) // the ring's end
	tx, ty := -math.Sin(head), math.Cos(head)                        // clockwise along the ring
	nx, ny := math.Cos(head), math.Sin(head)                         // outwards
	return inTriangle(x, y,
		px+4.5*tx, py+4.5*ty,
		px-0.5*tx+3.6*nx, py-0.5*ty+3.6*ny,
		px-0.5*tx-3.6*nx, py-0.5*ty-3.6*ny)
}

func bangGlyph(x, y float64) bool {
	return nearSegment(x, y, centre, 8.5, centre, 17.5, 2.0) || math.Hypot(x-centre, y-23) <= 2.2
}

// draw draws look l at size×size pixels: the disc with the glyph cut out
// (template) and the disc in the look's colour with the glyph in white and
// a dark rim (colour), both as PNG.
func draw(l Look, size int) (template, colour []byte) {
	ss := 4 // samples per pixel edge; large pictures need fewer
	if size > 64 {
		ss = 2
	}
	g, fill := glyphs[l], fills[l]
	scale := units / float64(size)
	tmpl := image.NewNRGBA(image.Rect(0, 0, size, size))
	col := image.NewNRGBA(image.Rect(0, 0, size, size))
	rim := color.NRGBA{0x20, 0x20, 0x20, 0xff}
	white := color.NRGBA{0xff, 0xff, 0xff, 0xff}
	for py := range size {
		for px := range size {
			var solid, r, gr, b, a float64 // solid: samples of the template's shape
			for sy := range ss {
				for sx := range ss {
					x := (float64(px) + (float64(sx)+0.5)/float64(ss)) * scale
					y := (float64(py) + (float64(sy)+0.5)/float64(ss)) * scale
					d := math.Hypot(x-centre, y-centre)
					if d > radius {
						continue
					}
					var c color.NRGBA
					switch {
					case d > radius-outline:
						c, solid = rim, solid+1
					case g(x, y):
						c = white
					default:
						c, solid = fill, solid+1
					}
					r, gr, b, a = r+float64(c.R), gr+float64(c.G), b+float64(c.B), a+1
				}
			}
			n := float64(ss * ss)
			if a > 0 {
				col.SetNRGBA(px, py, color.NRGBA{uint8(r / a), uint8(gr / a), uint8(b / a), uint8(255 * a / n)})
			}
			tmpl.SetNRGBA(px, py, color.NRGBA{0, 0, 0, uint8(255 * solid / n)})
		}
	}
	return encodePNG(tmpl), encodePNG(col)
}

func encodePNG(img image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(fmt.Sprintf("icon: encode: %v", err)) // an in-memory NRGBA always encodes
	}
	return buf.Bytes()
}

// nearSegment reports whether (x, y) is within w of the segment (ax, ay)–(bx, by).
func nearSegment(x, y, ax, ay, bx, by, w float64) bool {
	vx, vy := bx-ax, by-ay
	t := ((x-ax)*vx + (y-ay)*vy) / (vx*vx + vy*vy)
	t = max(0, min(1, t))
	return math.Hypot(x-(ax+t*vx), y-(ay+t*vy)) <= w
}

func inTriangle(x, y, ax, ay, bx, by, cx, cy float64) bool {
	side := func(px, py, qx, qy float64) float64 { return (qx-px)*(y-py) - (qy-py)*(x-px) }
	d1, d2, d3 := side(ax, ay, bx, by), side(bx, by, cx, cy), side(cx, cy, ax, ay)
	neg := d1 < 0 || d2 < 0 || d3 < 0
	pos := d1 > 0 || d2 > 0 || d3 > 0
	return !(neg && pos)
}
