package image

import (
	"math"

	"github.com/svc-dev/svc/core/tensor"
)

// resizeAreaFast is OpenCV's INTER_AREA for integer factors: the mean of
// each ix×iy block, rounded half up for 2×2 (its SIMD kernel), half to even
// otherwise (float32 times 1/area).
func resizeAreaFast(src pixels, ix, iy int, win window, dst []uint8) {
	c := src.c
	area := ix * iy
	inv := float32(1) / float32(area)
	for y := range win.h {
		sy := (win.y0 + y) * iy
		d := dst[y*win.w*c : (y+1)*win.w*c]
		for i := range win.w {
			sx := (win.x0 + i) * ix
			for ch := range c {
				sum := 0
				for yy := sy; yy < sy+iy; yy++ {
					row := src.pix[(yy*src.w+sx)*c+ch:]
					for xx := 0; xx < ix; xx++ {
						sum += int(row[xx*c])
					}
				}
				if area == 4 {
					d[i*c+ch] = uint8((sum + 2) >> 2)
				} else {
					d[i*c+ch] = uint8(math.RoundToEven(float64(float32(sum) * inv)))
				}
			}
		}
	}
}

// decimate is one term of OpenCV's area tables: output di takes source si
// with weight alpha.
type decimate struct {
	di, si int
	alpha  float32
}

// areaTable is computeResizeAreaTab, keeping the outputs in [lo, hi).
func areaTable(ssize, dsize int, scale float64, lo, hi int) []decimate {
	var tab []decimate
	for dx := lo; dx < hi; dx++ {
		fsx1 := float64(dx) * scale
		fsx2 := fsx1 + scale
		cell := math.Min(scale, float64(ssize)-fsx1)
		sx1, sx2 := int(math.Ceil(fsx1)), int(math.Floor(fsx2))
		sx2 = min(sx2, ssize-1)
		sx1 = min(sx1, sx2)
		if float64(sx1)-fsx1 > 1e-3 {
			tab = append(tab, decimate{dx, sx1 - 1, float32((float64(sx1) - fsx1) / cell)})
		}
		for sx := sx1; sx < sx2; sx++ {
			tab = append(tab, decimate{dx, sx, float32(1 / cell)})
		}
		if fsx2-float64(sx2) > 1e-3 {
			tab = append(tab, decimate{dx, sx2, float32(math.Min(math.Min(fsx2-float64(sx2), 1), cell) / cell)})
		}
	}
	return tab
}

// resizeArea is OpenCV's ResizeArea_Invoker for 8 bits: float32 sums of
// weighted source pixels, row by row, rounded half to even.
func resizeArea(src pixels, xtab, ytab []decimate, win window, dst []uint8) {
	c := src.c
	n := win.w * c
	store := tensor.MakeSlice[float32](2 * n)
	defer tensor.PutSlice(store)
	buf, sum := store[:n], store[n:2*n]
	clear(sum)
	prev := win.y0
	flush := func(dy int) {
		d := dst[(dy-win.y0)*n : (dy-win.y0+1)*n]
		for i, v := range sum {
			d[i] = sat8(int32(math.RoundToEven(float64(v))))
		}
	}
	for _, yt := range ytab {
		s := src.pix[yt.si*src.w*c : (yt.si+1)*src.w*c]
		clear(buf)
		for _, t := range xtab {
			di, si := (t.di-win.x0)*c, t.si*c
			for ch := range c {
				buf[di+ch] = buf[di+ch] + float32(float32(s[si+ch])*t.alpha)
			}
		}
		beta := yt.alpha
		if yt.di != prev {
			flush(prev)
			for i, v := range buf {
				sum[i] = float32(beta * v)
			}
			prev = yt.di
			continue
		}
		for i, v := range buf {
			sum[i] = sum[i] + float32(beta*v)
		}
	}
	flush(prev)
}
