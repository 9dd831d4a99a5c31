package image

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/svc-dev/svc/core/tensor"
)

// Settings is what svc.yml declares under models.<m>.inputs.<in>.image,
// and what GET /info shows of an image input (its JSON form). A
// preset fills every field it names; a field set explicitly overrides it.
type Settings struct {
	// Preset is one of Presets(): imagenet, paddleocr-cls, paddleocr-rec,
	// yolo.
	Preset string `yaml:"preset" json:"preset,omitempty"`
	// Size is [height, width]. Omitted, it comes from the model's fixed
	// dims. In height mode with a dynamic model width, Size[1] is the
	// narrowest batch width (PaddleOCR's imgW; 0 for none).
	Size []int `yaml:"size" json:"size,omitempty"`
	// Resize is stretch, fit (letterbox), cover (shorter side to size,
	// centre crop) or height (to the height keeping aspect, pad right).
	Resize string `yaml:"resize" json:"resize"`
	// Interpolation is nearest, bilinear, bicubic or area (cv2.INTER_*).
	Interpolation string `yaml:"interpolation" json:"interpolation"`
	// Color is rgb, bgr or grey.
	Color string `yaml:"color" json:"color"`
	// Scale multiplies the pixel (0..255) before mean and std.
	Scale *float64 `yaml:"scale" json:"scale,omitempty"`
	// Mean and Std are per channel (or one value for all):
	// (pixel*scale - mean)/std.
	Mean []float64 `yaml:"mean" json:"mean,omitempty"`
	Std  []float64 `yaml:"std" json:"std,omitempty"`
	// Layout is nchw or nhwc; inferred from the model's shape when the
	// channel axis is unambiguous.
	Layout string `yaml:"layout" json:"layout"`
	// Pad is the value of the padding of fit and height, in pixel units
	// (0..255, fractions allowed) before normalisation: it goes through
	// (pad*scale - mean)/std without being rounded to a byte, so 127.5
	// with scale 1/255, mean 0.5, std 0.5 is exactly 0 in the tensor.
	Pad *float64 `yaml:"pad" json:"pad,omitempty"`
	// WidthMultiple (height mode, dynamic width): the batch width is
	// rounded up to a multiple of it.
	WidthMultiple int `yaml:"width_multiple" json:"width_multiple,omitempty"`
	// MaxWidth (height mode): no item is wider; a wider line is squeezed.
	MaxWidth int `yaml:"max_width" json:"max_width,omitempty"`
}

// Resize modes.
const (
	Stretch = "stretch"
	Fit     = "fit"
	Cover   = "cover"
	Height  = "height"
)

// Interpolations.
const (
	Nearest  = "nearest"
	Bilinear = "bilinear"
	Bicubic  = "bicubic"
	Area     = "area"
)

func ptr(f float64) *float64 { return &f }

var presets = map[string]Settings{
	"imagenet": {
		Size: []int{224, 224}, Resize: Cover, Interpolation: Bilinear, Color: "rgb",
		Scale: ptr(1.0 / 255), Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225},
		Layout: "nchw",
	},
	"paddleocr-cls": {
		Size: []int{48, 192}, Resize: Height, Interpolation: Bilinear, Color: "bgr",
		Scale: ptr(1.0 / 255), Mean: []float64{0.5}, Std: []float64{0.5}, Layout: "nchw", Pad: ptr(127.5),
	},
	// paddleocr-rec: height 48, width ceil(48·w/h) capped at 3200; the batch
	// is as wide as its widest line, at least 320 (PaddleOCR's imgW),
	// rounded up to a multiple of 8; padding is 0 after normalisation.
	"paddleocr-rec": {
		Size: []int{48, 320}, Resize: Height, Interpolation: Bilinear, Color: "bgr",
		Scale: ptr(1.0 / 255), Mean: []float64{0.5}, Std: []float64{0.5}, Layout: "nchw", Pad: ptr(127.5),
		WidthMultiple: 8, MaxWidth: 3200,
	},
	"yolo": {
		Size: []int{640, 640}, Resize: Fit, Interpolation: Bilinear, Color: "rgb",
		Scale: ptr(1.0 / 255), Layout: "nchw", Pad: ptr(114),
	},
}

// Presets lists the preset names, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Plan is a resolved Settings for one model input: how to turn encoded
// images into its tensor. It is immutable and safe for concurrent use.
type Plan struct {
	set      Settings
	preset   bool // normalisation from a preset (dropped for uint8)
	dtype    tensor.DType
	nhwc     bool
	channels int // 1 or 3
	bgr      bool
	height   int
	width    int // 0: dynamic (height mode)
	minWidth int // height mode with dynamic width
	interp   int
	scale    float64
	mean     [3]float64
	std      [3]float64
	pad      float64
}

func configErr(field, format string, args ...any) error {
	return fmt.Errorf("image settings: %s: %s", field, fmt.Sprintf(format, args...))
}

// merge lays the explicit fields of s over the preset's.
func merge(s Settings) (Settings, bool, error) {
	if s.Preset == "" {
		return s, false, nil
	}
	p, ok := presets[s.Preset]
	if !ok {
		return s, false, configErr("preset", "unknown preset %q (one of %s)", s.Preset, strings.Join(Presets(), ", "))
	}
	p.Preset = s.Preset
	if s.Size != nil {
		p.Size = s.Size
	}
	for _, f := range []struct{ dst, src *string }{
		{&p.Resize, &s.Resize}, {&p.Interpolation, &s.Interpolation}, {&p.Color, &s.Color}, {&p.Layout, &s.Layout},
	} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	normalised := s.Scale == nil && s.Mean == nil && s.Std == nil
	if s.Scale != nil {
		p.Scale = s.Scale
	}
	if s.Mean != nil {
		p.Mean = s.Mean
	}
	if s.Std != nil {
		p.Std = s.Std
	}
	if s.Pad != nil {
		p.Pad = s.Pad
	}
	if s.WidthMultiple != 0 {
		p.WidthMultiple = s.WidthMultiple
	}
	if s.MaxWidth != 0 {
		p.MaxWidth = s.MaxWidth
	}
	return p, normalised, nil
}

// NewPlan resolves s (preset first, explicit fields over it) against the
// model input's spec. Its errors are configuration errors that name the
// field.
func NewPlan(s Settings, spec tensor.Spec) (*Plan, error) {
	s, fromPreset, err := merge(s)
	if err != nil {
		return nil, err
	}
	p := &Plan{preset: fromPreset}
	if err := p.resolveShape(&s, spec); err != nil {
		return nil, err
	}
	if err := p.resolveSize(&s, spec); err != nil {
		return nil, err
	}
	if err := p.resolveModes(&s); err != nil {
		return nil, err
	}
	if err := p.resolveNorm(&s); err != nil {
		return nil, err
	}
	p.set = s
	return p, nil
}

func (p *Plan) resolveShape(s *Settings, spec tensor.Spec) error {
	switch spec.DType {
	case tensor.Float32, tensor.Float16, tensor.Uint8:
		p.dtype = spec.DType
	default:
		return configErr("input "+spec.Name, "element type %s: images go into float32, float16 or uint8 inputs", spec.DType)
	}
	if len(spec.Shape) != 4 {
		return configErr("input "+spec.Name, "shape %s: images go into rank-4 inputs [N,C,H,W] or [N,H,W,C]", tensor.FormatShape(spec.Shape))
	}
	isC := func(d int64) bool { return d == 1 || d == 3 }
	switch strings.ToLower(s.Layout) {
	case "nchw":
		p.nhwc = false
	case "nhwc":
		p.nhwc = true
	case "":
		c1, c3 := isC(spec.Shape[1]), isC(spec.Shape[3])
		if c1 == c3 {
			return configErr("layout", "input %s has shape %s: cannot tell the channel axis, set layout: nchw or nhwc", spec.Name, tensor.FormatShape(spec.Shape))
		}
		p.nhwc = c3
	default:
		return configErr("layout", "%q: one of nchw, nhwc", s.Layout)
	}
	s.Layout = "nchw"
	cdim := spec.Shape[1]
	if p.nhwc {
		s.Layout, cdim = "nhwc", spec.Shape[3]
	}
	switch strings.ToLower(s.Color) {
	case "", "rgb", "bgr":
		p.channels, p.bgr = 3, strings.EqualFold(s.Color, "bgr")
		if s.Color == "" {
			s.Color = "rgb"
			if cdim == 1 {
				s.Color, p.channels = "grey", 1
			}
		}
	case "grey", "gray":
		p.channels, s.Color = 1, "grey"
	default:
		return configErr("color", "%q: one of rgb, bgr, grey", s.Color)
	}
	s.Color = strings.ToLower(s.Color)
	if cdim >= 0 && cdim != int64(p.channels) {
		return configErr("color", "%s needs %d channels but input %s has %d (shape %s)", s.Color, p.channels, spec.Name, cdim, tensor.FormatShape(spec.Shape))
	}
	return nil
}

func (p *Plan) resolveSize(s *Settings, spec tensor.Spec) error {
	mh, mw := spec.Shape[2], spec.Shape[3]
	if p.nhwc {
		mh, mw = spec.Shape[1], spec.Shape[2]
	}
	if s.Size != nil && (len(s.Size) != 2 || s.Size[0] < 0 || s.Size[1] < 0) {
		return configErr("size", "%v: [height, width] with positive numbers", s.Size)
	}
	h, w := -1, -1
	if s.Size != nil {
		h, w = s.Size[0], s.Size[1]
	}
	if mh >= 0 && h > 0 && int64(h) != mh {
		return configErr("size", "height %d but input %s has a fixed height of %d", h, spec.Name, mh)
	}
	if h <= 0 {
		h = int(mh)
	}
	if h <= 0 {
		return configErr("size", "input %s has a dynamic height: set size: [height, width]", spec.Name)
	}
	if strings.EqualFold(s.Resize, Height) && mw < 0 {
		p.height, p.width, p.minWidth = h, 0, max(w, 0)
		if s.MaxWidth < 0 || s.WidthMultiple < 0 {
			return configErr("max_width", "max_width and width_multiple must not be negative")
		}
		if s.MaxWidth == 0 {
			s.MaxWidth = 32 * h
		}
		s.Size = []int{h, p.minWidth}
		return nil
	}
	if mw >= 0 && w > 0 && int64(w) != mw {
		return configErr("size", "width %d but input %s has a fixed width of %d", w, spec.Name, mw)
	}
	if w <= 0 {
		w = int(mw)
	}
	if w <= 0 {
		return configErr("size", "input %s has a dynamic width: set size: [height, width] (or resize: height)", spec.Name)
	}
	p.height, p.width = h, w
	s.Size = []int{h, w}
	return nil
}

func (p *Plan) resolveModes(s *Settings) error {
	s.Resize = strings.ToLower(s.Resize)
	switch s.Resize {
	case "":
		s.Resize = Stretch
	case Stretch, Fit, Cover, Height:
	default:
		return configErr("resize", "%q: one of stretch, fit, cover, height", s.Resize)
	}
	s.Interpolation = strings.ToLower(s.Interpolation)
	switch s.Interpolation {
	case "", Bilinear, "linear":
		s.Interpolation, p.interp = Bilinear, interLinear
	case Nearest:
		p.interp = interNearest
	case Bicubic, "cubic":
		s.Interpolation, p.interp = Bicubic, interCubic
	case Area:
		p.interp = interArea
	default:
		return configErr("interpolation", "%q: one of nearest, bilinear, bicubic, area", s.Interpolation)
	}
	if s.Resize != Height && (s.WidthMultiple != 0 || s.MaxWidth != 0) {
		return configErr("width_multiple", "width_multiple and max_width apply to resize: height only")
	}
	if s.Resize == Height && p.width > 0 {
		s.WidthMultiple, s.MaxWidth = 0, 0
	}
	if s.WidthMultiple == 0 && s.Resize == Height && p.width == 0 {
		s.WidthMultiple = 1
	}
	return nil
}

func (p *Plan) resolveNorm(s *Settings) error {
	if p.dtype == tensor.Uint8 {
		if !p.preset && (s.Scale != nil || s.Mean != nil || s.Std != nil) {
			return configErr("scale", "a uint8 input takes the pixels as they are: scale, mean and std need a float input")
		}
		s.Scale, s.Mean, s.Std = nil, nil, nil
	}
	p.scale = 1
	if s.Scale != nil {
		if math.IsNaN(*s.Scale) || math.IsInf(*s.Scale, 0) || *s.Scale == 0 {
			return configErr("scale", "%v is not a usable factor", *s.Scale)
		}
		p.scale = *s.Scale
	}
	fill := func(field string, v []float64, def float64, out *[3]float64) error {
		switch len(v) {
		case 0:
			*out = [3]float64{def, def, def}
		case 1:
			*out = [3]float64{v[0], v[0], v[0]}
		case p.channels:
			copy(out[:], v)
		default:
			return configErr(field, "%d values for %d channels (give one per channel, or one for all)", len(v), p.channels)
		}
		for _, x := range out {
			if math.IsNaN(x) || math.IsInf(x, 0) || (field == "std" && x == 0) {
				return configErr(field, "%v is not usable", v)
			}
		}
		return nil
	}
	if err := fill("mean", s.Mean, 0, &p.mean); err != nil {
		return err
	}
	if err := fill("std", s.Std, 1, &p.std); err != nil {
		return err
	}
	if s.Pad != nil {
		if math.IsNaN(*s.Pad) || math.IsInf(*s.Pad, 0) {
			return configErr("pad", "%v is not a number", *s.Pad)
		}
		p.pad = *s.Pad
	}
	return nil
}

// Resolved is the effective settings, presets applied (for /info).
func (p *Plan) Resolved() Settings {
	s := p.set
	s.Size = slices.Clone(s.Size)
	s.Mean, s.Std = slices.Clone(s.Mean), slices.Clone(s.Std)
	if s.Scale != nil {
		s.Scale = ptr(*s.Scale)
	}
	if s.Pad != nil {
		s.Pad = ptr(*s.Pad)
	}
	return s
}

// Describe is one line for /info and OpenAPI, e.g. "image, resized to
// 224×224 (cover, bilinear), RGB, NCHW float32, ImageNet mean/std".
func (p *Plan) Describe() string {
	var b strings.Builder
	b.WriteString("image, ")
	s := p.set
	switch {
	case p.width == 0:
		fmt.Fprintf(&b, "resized to height %d keeping aspect (%s), width up to %d padded to the batch's widest", p.height, s.Interpolation, s.MaxWidth)
		if s.WidthMultiple > 1 {
			fmt.Fprintf(&b, " rounded up to %d", s.WidthMultiple)
		}
		if p.minWidth > 0 {
			fmt.Fprintf(&b, ", at least %d", p.minWidth)
		}
	case s.Resize == Height:
		fmt.Fprintf(&b, "resized to height %d keeping aspect (%s), padded right to width %d", p.height, s.Interpolation, p.width)
	default:
		fmt.Fprintf(&b, "resized to %d×%d (%s, %s)", p.height, p.width, s.Resize, s.Interpolation)
	}
	fmt.Fprintf(&b, ", %s, %s %s", strings.ToUpper(s.Color), strings.ToUpper(s.Layout), p.dtype)
	switch {
	case p.dtype == tensor.Uint8:
		b.WriteString(", pixels 0–255")
	case s.Preset == "imagenet" && s.Mean != nil && p.mean == [3]float64{0.485, 0.456, 0.406}:
		b.WriteString(", ImageNet mean/std")
	case p.mean == [3]float64{} && p.std == [3]float64{1, 1, 1}:
		fmt.Fprintf(&b, ", pixel×%.6g", p.scale)
	default:
		fmt.Fprintf(&b, ", (pixel×%.6g − mean %v) / std %v", p.scale, p.mean[:p.channels], p.std[:p.channels])
	}
	if s.Resize == Fit || s.Resize == Height {
		fmt.Fprintf(&b, ", pad %g", p.pad)
	}
	return b.String()
}
