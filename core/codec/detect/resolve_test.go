package detect

import "testing"

// TestMetadataPairs reads Ultralytics' kpt_shape and imgsz metadata as
// exports write them, and refuses what is not a pair it can use.
func TestMetadataPairs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		value  string
		kpt    [2]int
		kptOK  bool
		size   [2]int
		sizeOK bool
	}{
		{"[17, 3]", [2]int{17, 3}, true, [2]int{17, 3}, true},
		{" (640, 480) ", [2]int{}, false, [2]int{640, 480}, true},
		{"[5,2]", [2]int{5, 2}, true, [2]int{5, 2}, true},
		{"[17, 4]", [2]int{}, false, [2]int{17, 4}, true},
		{"[0, 3]", [2]int{}, false, [2]int{}, false},
		{"640", [2]int{}, false, [2]int{}, false},
		{"[a, 3]", [2]int{}, false, [2]int{}, false},
		{"", [2]int{}, false, [2]int{}, false},
		{"[640, -1]", [2]int{}, false, [2]int{}, false},
	} {
		n, d, ok := KeypointShape(map[string]string{"kpt_shape": tt.value})
		if ok != tt.kptOK || [2]int{n, d} != tt.kpt {
			t.Errorf("kpt_shape %q: %d, %d, %v; want %v, %v", tt.value, n, d, ok, tt.kpt, tt.kptOK)
		}
		h, w, ok := InputSize(map[string]string{"imgsz": tt.value})
		if ok != tt.sizeOK || [2]int{h, w} != tt.size {
			t.Errorf("imgsz %q: %d, %d, %v; want %v, %v", tt.value, h, w, ok, tt.size, tt.sizeOK)
		}
	}
}
