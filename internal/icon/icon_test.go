package icon

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"testing"
)

// coverage is the mean alpha of a PNG, 0…1, and checks its size.
func coverage(t *testing.T, data []byte, size int) float64 {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
		t.Fatalf("picture is %v, want %d×%d", b, size, size)
	}
	var sum float64
	for y := range size {
		for x := range size {
			_, _, _, a := img.At(x, y).RGBA()
			sum += float64(a) / 0xffff
		}
	}
	return sum / float64(size*size)
}

// Every size shows the same drawing: the share of the square each look
// covers does not depend on the size it is drawn at.
func TestLooksScale(t *testing.T) {
	for _, l := range []Look{AllFine, Retrying, NeedsAttention} {
		base := coverage(t, Template(l, units), units)
		if base < 0.3 || base > 0.8 {
			t.Fatalf("look %d covers %.2f of its square at %d px", l, base, units)
		}
		for _, size := range []int{16, 64, 256} {
			if c := coverage(t, Template(l, size), size); math.Abs(c-base) > 0.03 {
				t.Errorf("look %d at %d px covers %.3f, at %d px %.3f", l, size, c, units, base)
			}
			if c := coverage(t, Colour(l, size), size); c < base {
				t.Errorf("look %d colour at %d px covers %.3f, less than its template %.3f", l, size, c, base)
			}
		}
	}
}

// The looks differ from each other, so the state shows at a glance.
func TestLooksDiffer(t *testing.T) {
	seen := map[string]Look{}
	for _, l := range []Look{AllFine, Retrying, NeedsAttention} {
		img, _ := png.Decode(bytes.NewReader(Colour(l, 64)))
		key := string(img.(*image.NRGBA).Pix)
		if prev, dup := seen[key]; dup {
			t.Errorf("looks %d and %d are the same picture", prev, l)
		}
		seen[key] = l
	}
}
