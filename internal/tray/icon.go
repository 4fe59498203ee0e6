package tray

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
)

// iconSize is the icons' edge in pixels; hosts scale them to the bar.
const iconSize = 32

// icon is one look's pair: a black + alpha template that macOS tints for
// light and dark bars, and a colour picture that Linux shows.
type icon struct{ template, colour []byte }

// icons holds the pictures of every look, drawn once.
var icons = map[look]icon{
	allFine:        drawIcon(checkGlyph, color.NRGBA{0x2e, 0x9d, 0x4a, 0xff}),
	retrying:       drawIcon(arrowGlyph, color.NRGBA{0xe8, 0x9a, 0x10, 0xff}),
	needsAttention: drawIcon(bangGlyph, color.NRGBA{0xd9, 0x30, 0x25, 0xff}),
}

// A glyph reports whether a point (in icon pixels) is part of the mark
// drawn inside the disc.
type glyph func(x, y float64) bool

const (
	centre  = iconSize / 2.0
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

// drawIcon draws the disc with g cut out (template) and the disc in fill
// with g in white and a dark rim (colour), both as PNG.
func drawIcon(g glyph, fill color.NRGBA) icon {
	const ss = 4 // samples per pixel edge
	tmpl := image.NewNRGBA(image.Rect(0, 0, iconSize, iconSize))
	col := image.NewNRGBA(image.Rect(0, 0, iconSize, iconSize))
	rim := color.NRGBA{0x20, 0x20, 0x20, 0xff}
	white := color.NRGBA{0xff, 0xff, 0xff, 0xff}
	for py := range iconSize {
		for px := range iconSize {
			var solid, r, gr, b, a float64 // solid: samples of the template's shape
			for sy := range ss {
				for sx := range ss {
					x, y := float64(px)+(float64(sx)+0.5)/ss, float64(py)+(float64(sy)+0.5)/ss
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
			const n = ss * ss
			if a > 0 {
				col.SetNRGBA(px, py, color.NRGBA{uint8(r / a), uint8(gr / a), uint8(b / a), uint8(255 * a / n)})
			}
			tmpl.SetNRGBA(px, py, color.NRGBA{0, 0, 0, uint8(255 * solid / n)})
		}
	}
	return icon{template: encodePNG(tmpl), colour: encodePNG(col)}
}

func encodePNG(img image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(fmt.Sprintf("tray: encode icon: %v", err)) // an in-memory NRGBA always encodes
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
