package page

import (
	"math"
	"sync"
)

// OpenCV's remap fixed point: 5 fractional bits of position, 15 of weight.
const (
	interBits     = 5
	interTabSize  = 1 << interBits
	remapCoefBits = 15
	remapCoefOne  = 1 << remapCoefBits
)

// cubicTab is OpenCV's BicubicTab_i: for each of the 32×32 sub-pixel
// positions (y fraction major), the 4×4 weights in 15-bit fixed point,
// corrected to sum to one.
var cubicTab = sync.OnceValue(func() *[interTabSize * interTabSize][16]int32 {
	var tab1 [interTabSize][4]float32
	scale := float32(1) / interTabSize
	for i := range interTabSize {
		x := float32(i) * scale
		const a = float32(-0.75)
		c := &tab1[i]
		c[0] = float32(float32(float32(float32(a*(x+1))-5*a)*(x+1))+8*a)*(x+1) - 4*a
		c[1] = float32(float32(float32(float32((a+2)*x)-(a+3))*x)*x) + 1
		c[2] = float32(float32(float32(float32((a+2)*(1-x))-(a+3))*(1-x))*(1-x)) + 1
		c[3] = 1 - c[0] - c[1] - c[2]
	}
	tab := new([interTabSize * interTabSize][16]int32)
	for i := range interTabSize {
		for j := range interTabSize {
			it := &tab[i*interTabSize+j]
			isum := int32(0)
			for k1 := range 4 {
				for k2 := range 4 {
					v := float32(tab1[i][k1] * tab1[j][k2])
					it[k1*4+k2] = int32(saturateShort(math.RoundToEven(float64(float32(v * remapCoefOne)))))
					isum += it[k1*4+k2]
				}
			}
			if diff := isum - remapCoefOne; diff != 0 {
				mk1, mk2, Mk1, Mk2 := 2, 2, 2, 2
				for k1 := 2; k1 < 4; k1++ {
					for k2 := 2; k2 < 4; k2++ {
						if it[k1*4+k2] < it[mk1*4+mk2] {
							mk1, mk2 = k1, k2
						} else if it[k1*4+k2] > it[Mk1*4+Mk2] {
							Mk1, Mk2 = k1, k2
						}
					}
				}
				if diff < 0 {
					it[Mk1*4+Mk2] -= diff
				} else {
					it[mk1*4+mk2] -= diff
				}
			}
		}
	}
	return tab
})

func saturateShort(v float64) int16 {
	return int16(min(max(v, math.MinInt16), math.MaxInt16))
}

// roundInt is cvRound of a double clamped to int's range, as warpPerspective
// computes it: half to even.
func roundInt(v float64) int {
	v = min(max(v, math.MinInt32), math.MaxInt32)
	return int(math.RoundToEven(v))
}

// warpCubicReplicate is cv2.warpPerspective(img, M, (w, h),
// flags=INTER_CUBIC, borderMode=BORDER_REPLICATE) given the inverse map
// m: positions computed per 32-wide block as OpenCV's invoker computes
// them, quantised to 1/32 pixel, then remap's bicubic in fixed point.
func warpCubicReplicate(img Image, m [9]float64, w, h int) Image {
	out := Image{Pix: make([]uint8, w*h*img.C), W: w, H: h, C: img.C}
	tab := cubicTab()
	const block = 32
	bh0 := min(block/2, h)
	bw0 := min(block*block/bh0, w)
	cn := img.C
	var sx, sy [4]int
	for y := range h {
		for x := 0; x < w; x += bw0 {
			bw := min(bw0, w-x)
			X0 := m64(m[0], float64(x)) + m64(m[1], float64(y)) + m[2]
			Y0 := m64(m[3], float64(x)) + m64(m[4], float64(y)) + m[5]
			W0 := m64(m[6], float64(x)) + m64(m[7], float64(y)) + m[8]
			for x1 := range bw {
				W := W0 + m64(m[6], float64(x1))
				if W != 0 {
					W = interTabSize / W
				}
				X := roundInt(m64(X0+m64(m[0], float64(x1)), W))
				Y := roundInt(m64(Y0+m64(m[3], float64(x1)), W))
				ix := int(saturateShort(float64(X>>interBits))) - 1
				iy := int(saturateShort(float64(Y>>interBits))) - 1
				wt := &tab[(Y&(interTabSize-1))*interTabSize+(X&(interTabSize-1))]
				for i := range 4 {
					sx[i] = min(max(ix+i, 0), img.W-1)
					sy[i] = min(max(iy+i, 0), img.H-1)
				}
				d := out.Pix[(y*w+x+x1)*cn:]
				for k := range cn {
					sum := int32(0)
					for i := range 4 {
						row := img.Pix[sy[i]*img.W*cn:]
						for j := range 4 {
							sum += int32(row[sx[j]*cn+k]) * wt[i*4+j]
						}
					}
					d[k] = uint8(min(max((sum+(1<<(remapCoefBits-1)))>>remapCoefBits, 0), 255))
				}
			}
		}
	}
	return out
}
