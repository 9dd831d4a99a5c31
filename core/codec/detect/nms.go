package detect

import (
	"cmp"
	"slices"
)

// byScore orders candidates best first; a stable sort keeps equal scores
// in row order, as torch's stable sort in torchvision's nms does.
func byScore(a, b candidate) int { return cmp.Compare(b.score, a.score) }

// best keeps the maxDet best candidates, best first (layouts whose model
// has suppressed already, or needs none).
func best(c []candidate, maxDet int) []candidate {
	slices.SortStableFunc(c, byScore)
	return c[:min(len(c), maxDet)]
}

// suppress is Ultralytics' batched non-maximum suppression over
// torchvision's nms: the candidates (at most maxNMS, the best) sorted by
// score, each box offset by its class × maxWH unless agnostic, so that
// boxes of different classes never overlap; then, greedily, each box not
// yet suppressed is kept and suppresses every later box whose IoU with it
// is over p.IoU. It computes in float32 as torchvision's CPU kernel does,
// and stops once it has kept p.MaxDet boxes (the rest would be cut).
func suppress(c []candidate, p Params) []candidate {
	slices.SortStableFunc(c, byScore)
	if len(c) > maxNMS {
		c = c[:maxNMS]
	}
	boxes := make([][4]float32, len(c))
	areas := make([]float32, len(c))
	for i, x := range c {
		var off float32
		if !p.Agnostic {
			off = float32(x.class) * maxWH
		}
		b := [4]float32{x.box[0] + off, x.box[1] + off, x.box[2] + off, x.box[3] + off}
		boxes[i] = b
		areas[i] = float32((b[2] - b[0]) * (b[3] - b[1]))
	}
	suppressed := make([]bool, len(c))
	kept := make([]candidate, 0, min(len(c), p.MaxDet))
	for i := range c {
		if len(kept) == p.MaxDet {
			break
		}
		if suppressed[i] {
			continue
		}
		kept = append(kept, c[i])
		bi := boxes[i]
		for j := i + 1; j < len(c); j++ {
			if suppressed[j] {
				continue
			}
			bj := boxes[j]
			w := max(0, min(bi[2], bj[2])-max(bi[0], bj[0]))
			h := max(0, min(bi[3], bj[3])-max(bi[1], bj[1]))
			inter := float32(w * h)
			ovr := inter / float32(areas[i]+areas[j]-inter)
			if float64(ovr) > p.IoU {
				suppressed[j] = true
			}
		}
	}
	return kept
}
