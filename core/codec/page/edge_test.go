package page

import (
	"slices"
	"testing"

	"github.com/svc-dev/svc/core/codec/geom"
)

// TestBoxesEdgeCases: maps that hold no text, or are not maps, give no
// boxes and no panic; a map that is all text gives the page's box.
func TestBoxesEdgeCases(t *testing.T) {
	full := make([]float32, 64*32)
	for i := range full {
		full[i] = 1
	}
	tests := []struct {
		name      string
		pred      []float32
		w, h      int
		wantBoxes int
	}{
		{"nil map", nil, 64, 32, 0},
		{"map shorter than its size", make([]float32, 10), 64, 32, 0},
		{"zero width", make([]float32, 10), 0, 10, 0},
		{"negative height", make([]float32, 10), 10, -1, 0},
		{"blank page", make([]float32, 64*32), 64, 32, 0},
		{"one pixel", []float32{1}, 1, 1, 0},
		{"all text", full, 64, 32, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			boxes := DefaultDB.Boxes(tt.pred, tt.w, tt.h, 128, 64)
			if len(boxes) != tt.wantBoxes {
				t.Fatalf("%d boxes, want %d: %v", len(boxes), tt.wantBoxes, boxes)
			}
			if tt.wantBoxes == 1 {
				got := Filter(boxes, 128, 64)
				want := Quad{{X: 0, Y: 0}, {X: 127, Y: 0}, {X: 127, Y: 63}, {X: 0, Y: 63}}
				if len(got) != 1 || got[0].Quad != want || got[0].Score != 1 {
					t.Fatalf("all-text page: %v, want %v with score 1", got, want)
				}
			}
		})
	}
}

// TestCropEdgeCases: boxes with no area crop to nothing; a tall box is
// turned; a box across the page's edge replicates the border.
func TestCropEdgeCases(t *testing.T) {
	img := Image{Pix: make([]uint8, 40*30*3), W: 40, H: 30, C: 3}
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	tests := []struct {
		name string
		q    Quad
		w, h int
	}{
		{"point", Quad{{X: 5, Y: 5}, {X: 5, Y: 5}, {X: 5, Y: 5}, {X: 5, Y: 5}}, 0, 0},
		{"flat", Quad{{X: 5, Y: 5}, {X: 20, Y: 5}, {X: 20, Y: 5}, {X: 5, Y: 5}}, 0, 0},
		{"wide", Quad{{X: 2, Y: 3}, {X: 30, Y: 3}, {X: 30, Y: 12}, {X: 2, Y: 12}}, 28, 9},
		{"tall, turned", Quad{{X: 2, Y: 3}, {X: 10, Y: 3}, {X: 10, Y: 28}, {X: 2, Y: 28}}, 25, 8},
		{"square", Quad{{X: 0, Y: 0}, {X: 10, Y: 0}, {X: 10, Y: 10}, {X: 0, Y: 10}}, 10, 10},
		{"across the edge", Quad{{X: -5, Y: -5}, {X: 50, Y: -5}, {X: 50, Y: 40}, {X: -5, Y: 40}}, 55, 45},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Crop(img, tt.q)
			if c.W != tt.w || c.H != tt.h || len(c.Pix) != tt.w*tt.h*3 {
				t.Fatalf("crop %d×%d (%d bytes), want %d×%d", c.W, c.H, len(c.Pix), tt.w, tt.h)
			}
		})
	}
}

// TestFilterAndSort: boxes of 3 pixels or less go; the reading order
// keeps a line together when its boxes' tops differ by less than 10
// pixels.
func TestFilterAndSort(t *testing.T) {
	box := func(x, y, w, h int) Box {
		return Box{Quad: Quad{{X: x, Y: y}, {X: x + w, Y: y}, {X: x + w, Y: y + h}, {X: x, Y: y + h}}}
	}
	if got := Filter([]Box{box(0, 0, 3, 20), box(0, 0, 20, 3), box(0, 0, 4, 4)}, 100, 100); len(got) != 1 {
		t.Fatalf("Filter kept %d boxes, want the 4×4 one: %v", len(got), got)
	}
	boxes := []Box{box(60, 12, 20, 10), box(5, 40, 20, 10), box(10, 5, 20, 10), box(40, 14, 10, 10)}
	Sort(boxes)
	var xs []int
	for _, b := range boxes {
		xs = append(xs, b.Quad[0].X)
	}
	if want := []int{10, 40, 60, 5}; !slices.Equal(xs, want) {
		t.Fatalf("reading order %v, want %v", xs, want)
	}
	Sort(nil)
	if got := geom.FindContours(nil, 3, 3); got != nil {
		t.Fatalf("contours of no map: %v", got)
	}
}
