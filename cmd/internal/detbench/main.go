// Command detbench measures what decoding and drawing detections cost, and
// writes the detect section of BENCHMARKS.md (between <!-- detect:begin -->
// and <!-- detect:end -->; make bench runs it):
//
//	go run ./cmd/genmodels -yolov8n build/models/yolov8n-random/model.onnx
//	go run ./cmd/internal/detbench [-model build/models/yolov8n-random] [-md BENCHMARKS.md]
//
// Everything runs on one thread, in process, on the same machine in the
// same run, timed by the process's CPU time, in rounds that each time
// every figure in turn (a share is taken within each round, and the
// median round's reported):
//   - decoding: a YOLOv8-shaped output [1, 84, 8400] (80 classes) holding a
//     few hundred candidates above the confidence, in overlapping clusters,
//     decoded as a request is (threshold, class-aware suppression, the
//     letterbox of a 1280×720 picture undone);
//   - the model's run at 640×640: ONNX Runtime on one intra-op thread. No
//     trained YOLO export can be fetched here, so the model is YOLOv8n's
//     graph with random weights (cmd/genmodels -yolov8n: the same layers,
//     shapes and weight count, hence the same work; make bench writes it);
//   - drawing: a photograph as its JPEG and as PNG (kserve's sample
//     jay.jpeg, 1280×960, from the Go module cache: ci/kube requires the
//     module; -photo names another), and a synthetic 1280×720 picture of
//     gradients and noise, the worst case of a PNG drawing, each as its
//     preprocessing decoded and kept it (image.Batch.Keep, as a request
//     asking for a drawing does), a canvas made over it as a request makes
//     one (codec.Canvas), 20 boxes with labels drawn (core/codec/draw) and
//     the picture encoded in its own format, as svc answers it; the
//     request it is a share of is that picture's preprocessing (the yolo
//     preset, keeping the picture), the model's run, decoding and the
//     drawing.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	stdimage "image"
	"image/color"
	stddraw "image/draw"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/codec/detect"
	"github.com/svc-dev/svc/core/codec/draw"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
)

func main() {
	model := flag.String("model", "build/models/yolov8n-random", "the model timed at 640×640 (a folder holding model.onnx, or the file; go run ./cmd/genmodels -yolov8n writes this one)")
	md := flag.String("md", "BENCHMARKS.md", "the file whose detect section is rewritten")
	per := flag.Duration("time", 3*time.Second, "how long each figure is measured in all (over its rounds)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	photoFile := flag.String("photo", "", "a JPEG photograph to draw on (default: kserve's "+photoInModule+", from the Go module cache)")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "detbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*model, *md, *photoFile, *per); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "detbench:", err)
		os.Exit(1)
	}
}

// figures are the measured costs, per operation.
type figures struct {
	decode, model    *figure
	candidates, kept int
	// pics are the pictures drawn on, draws their figures.
	pics  []picture
	draws []drawing
	// load is the machine's load average as the run began (other work
	// beside it slows even CPU time: shared caches and cores).
	load string
}

// picture is a picture the drawings are measured on, as JPEG and as PNG.
type picture struct {
	// name says what it is; goal, whether the drawing's goal is judged on
	// it (not on the synthetic worst case).
	name string
	goal bool
	jpg  []byte
	png  []byte
}

// drawing is one picture's figures: its preprocessing as JPEG and as PNG,
// a drawing answered in each format, and those drawings' parts.
type drawing struct {
	pre, prePNG, drawJPEG, drawPNG *figure
	// The canvas over the kept picture with the boxes and labels drawn,
	// and the encoding: the JPEG's, then the PNG's.
	parts [2]parts
}

// parts are one drawing's parts: the canvas over the kept picture with
// the boxes and labels drawn on it, the encoding, and the answer's size.
type parts struct {
	shapes, encode *figure
	bytes          int
}

// loadAverage is /proc/loadavg's three averages, or "unknown".
func loadAverage() string {
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if fs := strings.Fields(string(data)); len(fs) >= 3 {
			return strings.Join(fs[:3], ", ")
		}
	}
	return "unknown"
}

func run(model, md, photoFile string, per time.Duration) error {
	if st, err := os.Stat(model); err == nil && st.IsDir() {
		model = filepath.Join(model, "model.onnx")
	}
	f := figures{load: loadAverage()}
	var b bench
	var err error
	if f.decode, f.candidates, f.kept, err = addDecode(&b); err != nil {
		return err
	}
	var closeModel func()
	f.model, closeModel, err = addModel(&b, model)
	if err != nil {
		return err
	}
	defer closeModel()
	plan, err := image.NewPlan(image.Settings{Preset: "yolo"}, tensor.Spec{Name: "images", DType: tensor.Float32, Shape: []int64{1, 3, 640, 640}})
	if err != nil {
		return err
	}
	if photoFile == "" {
		if photoFile, err = samplePhoto(); err != nil {
			return err
		}
	}
	real, err := photograph(photoFile)
	if err != nil {
		return err
	}
	f.pics = []picture{real, synthetic(1280, 720)}
	for _, pic := range f.pics {
		d, err := addDrawing(&b, plan, pic)
		if err != nil {
			return fmt.Errorf("%s: %w", pic.name, err)
		}
		f.draws = append(f.draws, d)
	}
	if err := b.measure(per); err != nil {
		return err
	}
	return replaceSection(md, report(f, model))
}

// rounds is how many rounds each figure is measured in.
const rounds = 7

// figure is one operation timed: how many times a round runs it, and
// each round's CPU time per operation.
type figure struct {
	op     func() error
	n      int
	rounds []time.Duration
}

// median is the median round's time per operation.
func (f *figure) median() time.Duration {
	r := slices.Clone(f.rounds)
	slices.Sort(r)
	return r[len(r)/2]
}

// share is the median over the rounds of part's time against the sum of
// whole's, all in the same round.
func share(part *figure, whole ...*figure) float64 {
	shares := make([]float64, len(part.rounds))
	for r := range shares {
		var sum time.Duration
		for _, w := range whole {
			sum += w.rounds[r]
		}
		shares[r] = float64(part.rounds[r]) / float64(sum)
	}
	slices.Sort(shares)
	return shares[len(shares)/2]
}

// bench is the figures of a run, measured together: each round times
// every figure in turn, so that a spell of a slower machine (other work
// beside it, which slows even CPU time through shared caches and cores)
// falls on the figures of a share alike, rather than on whichever figure
// was being measured then.
type bench struct {
	figs []*figure
}

// add is a figure for op, measured by measure.
func (b *bench) add(op func() error) *figure {
	f := &figure{op: op}
	b.figs = append(b.figs, f)
	return f
}

// measure times every figure for about per in all, over the rounds: the
// process's CPU time, on one thread (GOMAXPROCS 1 and ONNX Runtime on one
// intra-op thread).
func (b *bench) measure(per time.Duration) error {
	for _, f := range b.figs {
		n, err := calibrate(per/rounds, f.op)
		if err != nil {
			return err
		}
		f.n = n
	}
	for range rounds {
		for _, f := range b.figs {
			start := cpuTime()
			for range f.n {
				if err := f.op(); err != nil {
					return err
				}
			}
			f.rounds = append(f.rounds, (cpuTime()-start)/time.Duration(f.n))
		}
	}
	return nil
}

// calibrate is how many runs of op take about d (at least one).
func calibrate(d time.Duration, op func() error) (int, error) {
	n := 1
	for {
		start := time.Now()
		for range n {
			if err := op(); err != nil {
				return 0, err
			}
		}
		if el := time.Since(start); el > d/4 {
			return max(1, int(float64(n)*float64(d)/float64(el))), nil
		}
		n *= 4
	}
}

// yolov8Output is a [1, 84, 8400] output: 40 objects of random classes,
// each seen by 10 anchors with boxes jittered around it and scores from
// 0.3 to 0.95 (400 candidates, clusters that suppression thins to one box
// each), every other anchor scoring under 0.2 on every class.
func yolov8Output() *tensor.Tensor {
	const anchors, classes = 8400, 80
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]float32, (4+classes)*anchors)
	set := func(row, a int, v float32) { data[row*anchors+a] = v }
	for a := range anchors {
		set(0, a, rng.Float32()*640)
		set(1, a, rng.Float32()*640)
		set(2, a, 10+rng.Float32()*100)
		set(3, a, 10+rng.Float32()*100)
		for c := range classes {
			set(4+c, a, rng.Float32()*0.2)
		}
	}
	for obj := range 40 {
		cx, cy := 50+rng.Float32()*540, 50+rng.Float32()*540
		w, h := 30+rng.Float32()*170, 30+rng.Float32()*170
		class := rng.IntN(classes)
		for k := range 10 {
			a := obj*200 + k*7
			set(0, a, cx+rng.Float32()*6-3)
			set(1, a, cy+rng.Float32()*6-3)
			set(2, a, w*(0.95+rng.Float32()*0.1))
			set(3, a, h*(0.95+rng.Float32()*0.1))
			set(4+class, a, 0.3+rng.Float32()*0.65)
		}
	}
	return &tensor.Tensor{DType: tensor.Float32, Shape: []int64{1, 4 + classes, anchors}, Data: data}
}

// letterbox is the frame of a 1280×720 picture in a 640×640 input.
func letterbox() image.Frame {
	return image.Frame{Width: 1280, Height: 720, InputWidth: 640, InputHeight: 640, ScaleX: 0.5, ScaleY: 0.5,
		OffsetY: 140, ResizedWidth: 640, ResizedHeight: 360, PlaceY: 140}
}

// addDecode adds the decoding of yolov8Output to b, with the candidates
// above the confidence and the boxes kept.
func addDecode(b *bench) (*figure, int, int, error) {
	out := yolov8Output()
	head, err := detect.Resolve(detect.Spec{Shape: out.Shape, Task: detect.Detect, Classes: 80})
	if err != nil {
		return nil, 0, 0, err
	}
	dec := &detect.Decoder{Head: head}
	req := &detect.Request{Params: detect.Defaults(), Frames: []image.Frame{letterbox()}}
	candidates := 0
	for _, v := range out.Data.([]float32)[4*8400:] {
		if v > float32(req.Params.Confidence) {
			candidates++
		}
	}
	dets, err := dec.Decode(out, nil, req)
	if err != nil {
		return nil, 0, 0, err
	}
	d := b.add(func() error {
		_, err := dec.Decode(out, nil, req)
		return err
	})
	return d, candidates, len(dets[0]), nil
}

// addModel adds the model's run to b, and returns it with what closes
// the model and ONNX Runtime.
func addModel(b *bench, file string) (*figure, func(), error) {
	env, err := onnxrt.Load(onnxrt.DefaultSearch(""), false)
	if err != nil {
		return nil, nil, err
	}
	p, err := session.New(session.Options{Name: "det", File: file, Runtime: config.Runtime{IntraOpThreads: 1, InterOpThreads: 1}}, nil)
	if err != nil {
		env.Close()
		return nil, nil, fmt.Errorf("load %s (go run ./cmd/genmodels -yolov8n %s writes YOLOv8n's graph, as make bench does): %w", file, file, err)
	}
	data := make([]float32, 3*640*640)
	for i := range data {
		data[i] = float32(i%251) / 251
	}
	in := []*tensor.Tensor{{DType: tensor.Float32, Shape: []int64{1, 3, 640, 640}, Data: data}}
	run := b.add(func() error {
		res, err := p.Predict(context.Background(), in)
		if err != nil {
			return err
		}
		res.Release()
		return nil
	})
	return run, func() { p.Close(); env.Close() }, nil
}

// photoInModule is the photograph the drawings are measured on by
// default: a bird on a branch, 1280×960, a sample of the Go module
// kserveModule (which ci/kube requires).
const (
	kserveModule  = "github.com/kserve/kserve"
	photoInModule = "docs/samples/v1beta1/paddle/jay.jpeg"
)

// samplePhoto is photoInModule's path in the Go module cache, the module
// downloaded from the module proxy if it is not there (go mod download in
// ci/kube, at the version that module requires).
func samplePhoto() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", kserveModule)
	cmd.Dir = "ci/kube"
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s (in ci/kube): %w", kserveModule, err)
	}
	var m struct{ Dir, Version string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no module folder in %q", kserveModule, out)
	}
	return filepath.Join(m.Dir, photoInModule), nil
}

// photograph is the JPEG photograph in file, as it is and as an 8-bit RGB
// PNG (image/png's default level, as a PNG a user sends).
func photograph(file string) (picture, error) {
	jpg, err := os.ReadFile(file)
	if err != nil {
		return picture{}, err
	}
	img, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		return picture{}, fmt.Errorf("%s: %w", file, err)
	}
	// As 8-bit RGB: image/png writes a YCbCr picture with 16 bits a
	// channel, which few PNGs have.
	b := img.Bounds()
	rgba := stdimage.NewRGBA(b)
	stddraw.Draw(rgba, b, img, b.Min, stddraw.Src)
	var p bytes.Buffer
	if err := png.Encode(&p, rgba); err != nil {
		return picture{}, err
	}
	name := fmt.Sprintf("a %d×%d photograph (`%s`)", b.Dx(), b.Dy(), filepath.Base(file))
	if strings.HasSuffix(filepath.ToSlash(file), photoInModule) {
		name = fmt.Sprintf("a %d×%d photograph (%s's `%s`)", b.Dx(), b.Dy(), kserveModule, photoInModule)
	}
	return picture{name: name, goal: true, jpg: jpg, png: p.Bytes()}, nil
}

// synthetic is a w×h picture of smooth gradients and uniform noise, the
// same in R, G and B, as JPEG (quality 90) and as PNG: the worst case of
// a PNG drawing found, deflate finding short repeats in every row.
func synthetic(w, h int) picture {
	img := stdimage.NewRGBA(stdimage.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(3, 4))
	for y := range h {
		for x := range w {
			n := uint8(rng.IntN(24))
			img.SetRGBA(x, y, color.RGBA{uint8(x*200/w) + n, uint8(y*200/h) + n, uint8((x+y)*100/(w+h)) + n, 255})
		}
	}
	var j, p bytes.Buffer
	_ = jpeg.Encode(&j, img, &jpeg.Options{Quality: 90})
	_ = png.Encode(&p, img)
	name := fmt.Sprintf("a synthetic %d×%d picture: gradients and uniform noise, the same in R, G and B (the worst case of a PNG drawing)", w, h)
	return picture{name: name, jpg: j.Bytes(), png: p.Bytes()}
}

// addDrawing adds pic's figures to b: its preprocessing, drawing and
// its parts, as JPEG and as PNG.
func addDrawing(b *bench, plan *image.Plan, pic picture) (drawing, error) {
	var d drawing
	d.pre = addPre(b, plan, pic.jpg)
	d.prePNG = addPre(b, plan, pic.png)
	kept, err := keptPicture(plan, pic.jpg)
	if err != nil {
		return d, err
	}
	keptPNG, err := keptPicture(plan, pic.png)
	if err != nil {
		return d, err
	}
	d.drawJPEG = addDraw(b, kept, draw.JPEG)
	d.drawPNG = addDraw(b, keptPNG, draw.PNG)
	if d.parts[0], err = addParts(b, kept, draw.JPEG); err != nil {
		return d, err
	}
	d.parts[1], err = addParts(b, keptPNG, draw.PNG)
	return d, err
}

// preprocess makes the tensor of pic as a request asking for a drawing
// does, keeping the decoded picture, and returns the batch.
func preprocess(plan *image.Plan, pic []byte) (*image.Batch, error) {
	b, err := plan.Inspect([][]byte{pic}, image.Limits{MaxPixels: 1 << 30})
	if err != nil {
		return nil, err
	}
	b.Keep()
	t, err := b.Tensor(context.Background())
	if err != nil {
		return nil, err
	}
	t.Recycle()
	return b, nil
}

func addPre(b *bench, plan *image.Plan, pic []byte) *figure {
	return b.add(func() error {
		_, err := preprocess(plan, pic)
		return err
	})
}

// keptPicture is pic as its preprocessing decoded and kept it.
func keptPicture(plan *image.Plan, pic []byte) (*image.Picture, error) {
	b, err := preprocess(plan, pic)
	if err != nil {
		return nil, err
	}
	return b.Kept(0), nil
}

// shapes draws 20 boxes with their labels.
func shapes(c *draw.Canvas) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 20 {
		x, y := rng.Float64()*1100, rng.Float64()*560
		col := draw.Color(i)
		c.Box(x, y, x+40+rng.Float64()*140, y+40+rng.Float64()*120, col)
		c.Label(x, y, fmt.Sprintf("class%d 0.%02d", i, 50+i), col)
	}
}

// addDraw times a drawing as a request makes one: a canvas over the
// kept picture (codec.Canvas), 20 boxes with their labels, the encoding.
// A request's canvas owns its picture; here each drawing is made over the
// same one, which costs the same (a JPEG's planes are only read; a PNG's
// picture is drawn on again).
func addDraw(b *bench, kept *image.Picture, mediaType string) *figure {
	var out bytes.Buffer
	return b.add(func() error {
		c, err := codec.Canvas(kept)
		if err != nil {
			return err
		}
		shapes(c)
		out.Reset()
		return c.Encode(&out, mediaType)
	})
}

// addParts times a drawing's parts alone: the canvas with the shapes
// drawn on it, and the encoding of a canvas drawn so.
func addParts(b *bench, kept *image.Picture, mediaType string) (parts, error) {
	var p parts
	p.shapes = b.add(func() error {
		c, err := codec.Canvas(kept)
		if err != nil {
			return err
		}
		shapes(c)
		return nil
	})
	c, err := codec.Canvas(kept)
	if err != nil {
		return p, err
	}
	shapes(c)
	var out bytes.Buffer
	if err := c.Encode(&out, mediaType); err != nil {
		return p, err
	}
	p.bytes = out.Len()
	p.encode = b.add(func() error { out.Reset(); return c.Encode(&out, mediaType) })
	return p, nil
}

// ms is f's median time in milliseconds.
func ms(f *figure) string { return fmt.Sprintf("%.2f", float64(f.median())/float64(time.Millisecond)) }

func report(f figures, model string) string {
	var b strings.Builder
	rev, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if name, ok := strings.CutPrefix(line, "model name\t: "); ok {
				cpu = name
				break
			}
		}
	}
	fmt.Fprintf(&b, "## Detection: decoding and drawing against the request (cmd/internal/detbench)\n\n")
	fmt.Fprintf(&b, "Written by `go run ./cmd/internal/detbench` (part of `make bench`) at `%s` on %s, %s, %d cores; one thread, in process, by the process's CPU time (wall-clock time on a loaded machine is not reproducible), in %d rounds that each time every figure in turn: a time is the median round's, a share the median of the rounds' shares, each taken within one round; the load average as it began was %s.\n\n",
		strings.TrimSpace(string(rev)), time.Now().UTC().Format("2006-01-02"), cpu, runtime.NumCPU(), rounds, f.load)
	decodeShare := share(f.decode, f.model)
	fmt.Fprintf(&b, "| step | ms | share | goal |\n|---|--:|--:|---|\n")
	fmt.Fprintf(&b, "| the model's run at 640×640 (%s, one intra-op thread) | %s | | |\n", modelName(model), ms(f.model))
	fmt.Fprintf(&b, "| decoding a YOLOv8 output [1, 84, 8400], %d candidates above 0.25, %d boxes kept, letterbox undone | %s | %.2f%% of the run | ≤ 5%%: %s |\n",
		f.candidates, f.kept, ms(f.decode), 100*decodeShare, verdict(decodeShare <= 0.05))
	for i, pic := range f.pics {
		d := f.draws[i]
		for k, x := range []struct {
			name   string
			pre, t *figure
		}{{"JPEG", d.pre, d.drawJPEG}, {"PNG", d.prePNG, d.drawPNG}} {
			share := share(x.t, f.model, f.decode, x.pre, x.t)
			goal := "(no goal: the worst case)"
			if pic.goal {
				goal = "≤ 10%: " + verdict(share <= 0.10)
			}
			fmt.Fprintf(&b, "| %s, as %s: preprocessing (yolo preset), its decoded picture kept for the drawing | %s | | |\n", pic.name, x.name, ms(x.pre))
			fmt.Fprintf(&b, "| drawing 20 boxes and labels on it, answered as %s (the canvas over the kept picture, the shapes, the encoding) | %s | %.1f%% of the request | %s |\n",
				x.name, ms(x.t), 100*share, goal)
			p := d.parts[k]
			if k == 0 {
				fmt.Fprintf(&b, "| of it: 20 boxes and labels painted into its decoded planes | %s | | |\n| of it: encoding (quality %d, straight from the planes; %d KiB) | %s | | |\n",
					ms(p.shapes), draw.JPEGQuality, p.bytes>>10, ms(p.encode))
			} else {
				fmt.Fprintf(&b, "| of it: 20 boxes and labels drawn on its decoded RGBA picture | %s | | |\n| of it: encoding (rows filtered with Up, deflate's fastest level; %d KiB) | %s | | |\n",
					ms(p.shapes), p.bytes>>10, ms(p.encode))
			}
		}
	}
	b.WriteString("\nA request is its picture's preprocessing, the model's run, decoding and the drawing; HTTP and the body's transfer, left out, would make the shares smaller. A picture is answered in its own format unless `Accept` names another (docs/images.md), so the JPEG drawing is a share of a JPEG's request and the PNG drawing of a PNG's. ")
	b.WriteString("A drawing is made on the picture its preprocessing decoded and kept (not decoded a second time, nor copied): a JPEG's shapes are painted into its YCbCr planes (luma per pixel, chroma per sample by the shape's mean cover of its pixels) and the JPEG encoded straight from them, with no colour conversion to RGB and back; a PNG's RGBA picture is drawn on itself. The encoding is most of a drawing; the boxes and labels themselves are a small part (only what a shape covers is rasterised). JPEG is svc's baseline encoder (core/codec/draw, 4:2:0, the quantizers folded into a float AAN DCT), about half image/jpeg's cost for the same quality (`go test -bench Encode ./core/codec/draw/`). PNG is each row filtered with Up and compressed by klauspost/compress's flate at its fastest level (with the zlib checksum summed in 16-bit lanes), about half compress/zlib's cost for a smaller answer; image/png's best speed, which tries five filters on every row, costs more again. The goal is judged on the photograph. The synthetic picture is the worst case found for a PNG drawing: its noise, uniform and the same in R, G and B, leaves deflate short repeats in every row, which its fastest level spends most of the encoding finding (Huffman codes alone would take less than half the time, for a 1.7 times larger answer; on the photograph they take as long, for a 1.6 times larger one).\n")
	return b.String()
}

// modelName says which model was timed: YOLOv8n's graph with random
// weights (no trained export can be fetched here) or another one's folder.
func modelName(file string) string {
	name := filepath.Base(filepath.Dir(file))
	if name == "yolov8n-random" {
		return "YOLOv8n's layers with random weights, `go run ./cmd/genmodels -yolov8n`: the work of the trained model"
	}
	return name
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// replaceSection writes text between the markers of md.
func replaceSection(md, text string) error {
	const begin, end = "<!-- detect:begin -->", "<!-- detect:end -->"
	data, err := os.ReadFile(md)
	if err != nil {
		return err
	}
	doc := string(data)
	i, j := strings.Index(doc, begin+"\n"), strings.Index(doc, end+"\n")
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s ... %s section", md, begin, end)
	}
	doc = doc[:i+len(begin)+1] + text + doc[j:]
	return os.WriteFile(md, []byte(doc), 0o644)
}
