package geom

import (
	"cmp"
	"slices"
)

func sign(v int64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// sklansky is OpenCV 4.6's Sklansky_ on integer points: one quarter of the
// hull, from start to end over the sorted points, into stack; it returns
// the stack's size.
func sklansky(pts []Point, order []int, start, end int, stack []int, nsign, sign2 int) int {
	incr := 1
	if end <= start {
		incr = -1
	}
	at := func(i int) Point { return pts[order[i]] }
	pprev, pcur, pnext := start, start+incr, start+2*incr
	size := 3
	if start == end || at(start) == at(end) {
		stack[0] = start
		return 1
	}
	stack[0], stack[1], stack[2] = pprev, pcur, pnext
	end += incr
	for pnext != end {
		cury, nexty := at(pcur).Y, at(pnext).Y
		by := nexty - cury
		if sign(int64(by)) != nsign {
			ax, ay := at(pcur).X-at(pprev).X, cury-at(pprev).Y
			bx := at(pnext).X - at(pcur).X
			convexity := int64(ay)*int64(bx) - int64(ax)*int64(by)
			if sign(convexity) == sign2 && (ax != 0 || ay != 0) {
				pprev, pcur = pcur, pnext
				pnext += incr
				stack[size] = pnext
				size++
			} else if pprev == start {
				pcur = pnext
				stack[1] = pcur
				pnext += incr
				stack[2] = pnext
			} else {
				stack[size-2] = pnext
				pcur = pprev
				pprev = stack[size-4]
				size--
			}
		} else {
			pnext += incr
			stack[size-1] = pnext
		}
	}
	return size - 1
}

// ConvexHull returns the indices into pts of their convex hull's vertices,
// in the order and from the vertex cv2.convexHull(pts, clockwise,
// returnPoints=False) gives them.
func ConvexHull(pts []Point, clockwise bool) []int {
	total := len(pts)
	if total == 0 {
		return nil
	}
	order := make([]int, total)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(pts[a].X, pts[b].X); c != 0 {
			return c
		}
		if c := cmp.Compare(pts[a].Y, pts[b].Y); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // OpenCV breaks ties by address
	})
	miny, maxy := 0, 0
	for i := 1; i < total; i++ {
		y := pts[order[i]].Y
		if pts[order[miny]].Y > y {
			miny = i
		}
		if pts[order[maxy]].Y < y {
			maxy = i
		}
	}
	if pts[order[0]] == pts[order[total-1]] {
		return []int{order[0]}
	}
	stack := make([]int, total+2)
	hull := make([]int, 0, total)
	tl := stack
	tlCount := sklansky(pts, order, 0, maxy, tl, -1, 1)
	tr := stack[tlCount:]
	trCount := sklansky(pts, order, total-1, maxy, tr, -1, -1)
	if !clockwise {
		tl, tr = tr, tl
		tlCount, trCount = trCount, tlCount
	}
	for i := 0; i < tlCount-1; i++ {
		hull = append(hull, order[tl[i]])
	}
	for i := trCount - 1; i > 0; i-- {
		hull = append(hull, order[tr[i]])
	}
	stop := -1
	if trCount > 2 {
		stop = tr[1]
	} else if tlCount > 2 {
		stop = tl[tlCount-2]
	}
	bl := stack
	blCount := sklansky(pts, order, 0, miny, bl, 1, -1)
	br := stack[blCount:]
	brCount := sklansky(pts, order, total-1, miny, br, 1, 1)
	if clockwise {
		bl, br = br, bl
		blCount, brCount = brCount, blCount
	}
	if stop >= 0 {
		check := -1
		if blCount > 2 {
			check = bl[1]
		} else if blCount+brCount > 2 {
			check = br[2-blCount]
		}
		if check == stop || (check >= 0 && pts[order[check]] == pts[order[stop]]) {
			blCount = min(blCount, 2)
			brCount = min(brCount, 2)
		}
	}
	for i := 0; i < blCount-1; i++ {
		hull = append(hull, order[bl[i]])
	}
	for i := brCount - 1; i > 0; i-- {
		hull = append(hull, order[br[i]])
	}
	return cyclicShift(hull, stack)
}

// cyclicShift rotates the hull so that its indices ascend or descend when
// a rotation can make them, as OpenCV does.
func cyclicShift(hull, scratch []int) []int {
	nout := len(hull)
	if nout < 3 {
		return hull
	}
	minIdx, maxIdx, lt := 0, 0, 0
	for i := 1; i < nout; i++ {
		idx := hull[i]
		if hull[i-1] < idx {
			lt++
		}
		if lt > 1 && lt <= i-2 {
			break
		}
		if idx < hull[minIdx] {
			minIdx = i
		}
		if idx > hull[maxIdx] {
			maxIdx = i
		}
	}
	mmdist := maxIdx - minIdx
	if mmdist < 0 {
		mmdist = -mmdist
	}
	if !((mmdist == 1 || mmdist == nout-1) && (lt <= 1 || lt >= nout-2)) {
		return hull
	}
	ascending := (maxIdx+1)%nout == minIdx
	i0 := maxIdx
	if ascending {
		i0 = minIdx
	}
	if i0 == 0 {
		return hull
	}
	j, i := i0, 0
	for ; i < nout; i++ {
		cur := hull[j]
		scratch[i] = cur
		nj := j + 1
		if nj >= nout {
			nj = 0
		}
		if i < nout-1 && ascending != (cur < hull[nj]) {
			break
		}
		j = nj
	}
	if i == nout {
		copy(hull, scratch[:nout])
	}
	return hull
}
