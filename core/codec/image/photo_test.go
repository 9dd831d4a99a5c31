package image

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// photo is a deterministic natural-ish picture: gradients, noise, discs and
// bars with hard and soft edges.
func photo(w, h int, seed uint64) *image.NRGBA {
	r := rand.New(rand.NewPCG(seed, 7))
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	type disc struct {
		x, y, rad float64
		c         [3]float64
	}
	discs := make([]disc, 12)
	for i := range discs {
		discs[i] = disc{r.Float64() * float64(w), r.Float64() * float64(h), (0.03 + r.Float64()*0.2) * float64(min(w, h)),
			[3]float64{r.Float64() * 255, r.Float64() * 255, r.Float64() * 255}}
	}
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			c := [3]float64{40 + 180*fx, 30 + 150*fy, 120 + 100*math.Sin(6*fx+3*fy)}
			for _, d := range discs {
				dist := math.Hypot(float64(x)-d.x, float64(y)-d.y)
				if a := math.Min(1, math.Max(0, d.rad-dist)); a > 0 {
					for k := range c {
						c[k] = c[k]*(1-a) + d.c[k]*a
					}
				}
			}
			if (x/17)%9 == 0 {
				c[0], c[1], c[2] = 250, 250, 250
			}
			i := m.PixOffset(x, y)
			for k := range 3 {
				m.Pix[i+k] = uint8(math.Max(0, math.Min(255, c[k]+r.NormFloat64()*6)))
			}
			m.Pix[i+3] = 255
		}
	}
	return m
}

func encode(t testing.TB, path string, m image.Image, asJPEG bool) {
	t.Helper()
	var b bytes.Buffer
	var err error
	if asJPEG {
		err = jpeg.Encode(&b, m, &jpeg.Options{Quality: 90})
	} else {
		err = png.Encode(&b, m)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
