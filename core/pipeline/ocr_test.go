package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec/decode"
	"github.com/svc-dev/svc/core/codec/image"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/core/onnxrt/onnxrttest"
	"github.com/svc-dev/svc/core/sched"
	"github.com/svc-dev/svc/core/session"
	"github.com/svc-dev/svc/core/tensor"
)

const (
	python = "/usr/bin/python3"
	models = "../../build/models/"
)

// opener opens sessions of one model file, as the server's opener does.
type opener struct{ name, file string }

func (o opener) Open(int) (core.Session, error) {
	return session.New(session.Options{Name: o.name, File: o.file, Runtime: config.Default().Runtime}, nil)
}

func (opener) Placement(core.Provider) (core.Placement, error) { return nil, nil }

// stage serves one of build/models' PaddleOCR models behind the
// scheduler that serves single models, batching on.
func stage(t *testing.T, name string) core.Runner {
	t.Helper()
	s := sched.New(sched.Config{Sessions: 1, Slots: 2, Batching: sched.Batching{Enabled: true, MaxBatchSize: 16, MaxQueueDelay: time.Millisecond}}, nil, nil, nil)
	sc, err := s.Schedule(opener{name: name, file: filepath.Join(models, name, "model.onnx")})
	if err != nil {
		t.Fatalf("%s (make models fetches it): %v", name, err)
	}
	t.Cleanup(func() { sc.Close() })
	return sc
}

// realStages opens the detector, classifier and recogniser once for the
// package's tests.
func realStages(t *testing.T) Stages {
	t.Helper()
	onnxrttest.Load(t)
	labels, err := decode.LoadLabels(filepath.Join(models, "paddleocr-rec", "ppocr_keys_v1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return Stages{Detect: stage(t, "paddleocr-det"), Classify: stage(t, "paddleocr-cls"), Recognize: stage(t, "paddleocr-rec"), Labels: labels}
}

type drawnLine struct {
	Text   string `json:"text"`
	Box    [4]int `json:"box"`
	Column int    `json:"column"`
}

type renderedPage struct {
	Name  string      `json:"name"`
	W     int         `json:"w"`
	H     int         `json:"h"`
	Lines []drawnLine `json:"lines"`
}

// renderPages draws the test's pages (testdata/render_ocr.py) into a
// temporary directory.
func renderPages(t *testing.T) (string, map[string]renderedPage) {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command(python, "testdata/render_ocr.py", dir).Output()
	if err != nil {
		t.Fatalf("render_ocr.py (python3-pil, fonts-dejavu-core): %v", err)
	}
	var pages []renderedPage
	if err := json.Unmarshal(out, &pages); err != nil {
		t.Fatal(err)
	}
	m := map[string]renderedPage{}
	for _, p := range pages {
		m[p.Name] = p
	}
	return dir, m
}

// score is what reading a page got right.
type score struct {
	chars, errs   int // characters drawn but spaces, edit distance over them
	spaced, serrs int // the same with the spaces
	lines, found  int // lines drawn, found (IoU ≥ 0.5)
	orderBroken   int // found lines of a column read before the one above
	extra         int // lines read where none was drawn
	readLines     int
}

func (s score) String() string {
	return fmt.Sprintf("characters %d/%d read (%.1f %%; %.1f %% with the spaces), lines %d/%d found (%.1f %%), %d out of order, %d read where none was drawn",
		s.chars-s.errs, s.chars, s.charPct(), 100*float64(s.spaced-s.serrs)/float64(max(s.spaced, 1)), s.found, s.lines, 100*float64(s.found)/float64(max(s.lines, 1)), s.orderBroken, s.extra)
}

func (s score) charPct() float64 { return 100 * float64(s.chars-s.errs) / float64(max(s.chars, 1)) }

func (s *score) add(o score) {
	s.chars += o.chars
	s.errs += o.errs
	s.spaced += o.spaced
	s.serrs += o.serrs
	s.lines += o.lines
	s.found += o.found
	s.orderBroken += o.orderBroken
	s.extra += o.extra
	s.readLines += o.readLines
}

// iou is the intersection over union of two boxes [x0, y0, x1, y1].
func iou(a, b [4]int) float64 {
	ix := min(a[2], b[2]) - max(a[0], b[0])
	iy := min(a[3], b[3]) - max(a[1], b[1])
	if ix <= 0 || iy <= 0 {
		return 0
	}
	inter := float64(ix * iy)
	area := func(r [4]int) float64 { return float64((r[2] - r[0]) * (r[3] - r[1])) }
	return inter / (area(a) + area(b) - inter)
}

func bounds(q [4][2]int) [4]int {
	r := [4]int{q[0][0], q[0][1], q[0][0], q[0][1]}
	for _, p := range q[1:] {
		r[0], r[1], r[2], r[3] = min(r[0], p[0]), min(r[1], p[1]), max(r[2], p[0]), max(r[3], p[1])
	}
	return r
}

// editDistance is Levenshtein's distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// grade matches each drawn line with the line read whose box overlaps it
// most (IoU ≥ 0.5), and scores the page.
func grade(want renderedPage, got Page) score {
	var s score
	s.readLines = len(got.Lines)
	used := make([]bool, len(got.Lines))
	lastInColumn := map[int]int{}
	for _, w := range want.Lines {
		s.lines++
		bare := strings.ReplaceAll(w.Text, " ", "")
		s.chars += len([]rune(bare))
		s.spaced += len([]rune(w.Text))
		best, bestIoU := -1, 0.5
		for j, l := range got.Lines {
			if v := iou(w.Box, bounds(l.Box)); v >= bestIoU {
				best, bestIoU = j, v
			}
		}
		if best < 0 {
			if os.Getenv("OCR_SHOW") != "" {
				fmt.Printf("not found %q %v\n", w.Text, w.Box)
			}
			s.errs += len([]rune(bare))
			s.serrs += len([]rune(w.Text))
			continue
		}
		used[best] = true
		s.found++
		read := got.Lines[best].Text
		d := min(editDistance(bare, strings.ReplaceAll(read, " ", "")), len([]rune(bare)))
		if d > 0 && os.Getenv("OCR_SHOW") != "" {
			fmt.Printf("drawn %q read %q %v\n", w.Text, read, got.Lines[best].Score)
		}
		s.errs += d
		s.serrs += min(editDistance(w.Text, read), len([]rune(w.Text)))
		if last, ok := lastInColumn[w.Column]; ok && best < last {
			s.orderBroken++
		}
		lastInColumn[w.Column] = best
	}
	for j, u := range used {
		if !u && os.Getenv("OCR_SHOW") != "" {
			fmt.Printf("extra %q %v\n", got.Lines[j].Text, bounds(got.Lines[j].Box))
		}
		if !u {
			s.extra++
		}
	}
	return s
}

// TestOCRReadsRenderedPages reads pages drawn with Pillow in several
// fonts and sizes through the real detector, classifier and recogniser,
// each behind the scheduler, and grades what was read against what was
// drawn: characters (edit distance), lines found (IoU ≥ 0.5), reading
// order per column; an upside-down page with and without the classifier;
// a blank and a tiny page read as no lines.
func TestOCRReadsRenderedPages(t *testing.T) {
	st := realStages(t)
	dir, pages := renderPages(t)
	ocr, err := NewOCR(st, DefaultOCR)
	if err != nil {
		t.Fatal(err)
	}
	noCls := DefaultOCR
	noCls.Classify = false
	cases := []struct {
		page     string
		set      OCRSettings
		minChars float64 // per cent of the characters read
		minLines float64 // per cent of the lines found
	}{
		{"letter", DefaultOCR, 95, 95},
		{"columns", DefaultOCR, 95, 95},
		{"wide", DefaultOCR, 95, 95},
		{"letter", noCls, 95, 95},
		{"columns", noCls, 95, 95},
		{"wide", noCls, 95, 95},
		{"upside", DefaultOCR, 90, 95},
		{"upside", noCls, 0, 0}, // measured: without the classifier, an upside-down line reads as noise
		{"blank", DefaultOCR, 0, 0},
		{"tiny", DefaultOCR, 0, 0},
	}
	var upright score
	for _, c := range cases {
		name := fmt.Sprintf("%s/classify=%v", c.page, c.set.Classify)
		t.Run(name, func(t *testing.T) {
			want := pages[c.page]
			data, err := os.ReadFile(filepath.Join(dir, c.page+".png"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ocr.Read(context.Background(), data, image.Limits{}, c.set)
			if err != nil {
				t.Fatal(err)
			}
			s := grade(want, got)
			t.Logf("%s: %v", name, s)
			if c.page != "upside" && c.page != "blank" && c.page != "tiny" && c.set.Classify {
				upright.add(s)
			}
			if len(want.Lines) == 0 {
				if len(got.Lines) != 0 || got.Text != "" {
					t.Errorf("a page with no text: read %d lines %q", len(got.Lines), got.Text)
				}
				return
			}
			if s.charPct() < c.minChars {
				t.Errorf("%.1f %% of the characters read, want ≥ %.0f %%", s.charPct(), c.minChars)
			}
			if 100*float64(s.found) < c.minLines*float64(s.lines) {
				t.Errorf("%d of %d lines found, want ≥ %.0f %%", s.found, s.lines, c.minLines)
			}
			if s.orderBroken != 0 && c.page != "upside" {
				t.Errorf("%d lines out of reading order in their column", s.orderBroken)
			}
			var texts []string
			for _, l := range got.Lines {
				texts = append(texts, l.Text)
			}
			if got.Text != strings.Join(texts, "\n") {
				t.Errorf("text %q is not the lines joined", got.Text)
			}
		})
	}
	t.Logf("upright pages, classifier on: %v", upright)
}

// fake is a model that only describes itself: one input, one output.
type fake struct {
	name    string
	in, out []int64
}

func (f fake) Info() core.ModelInfo {
	return core.ModelInfo{Name: f.name, Outputs: []core.OutputSpec{{Name: "y", Type: "float32", Shape: f.out}}}
}

func (f fake) Specs() []tensor.Spec {
	return []tensor.Spec{{Name: "x", DType: tensor.Float32, Shape: f.in, Required: true}}
}

func (fake) Predict(context.Context, []*tensor.Tensor) (core.Result, error) {
	return nil, fmt.Errorf("a fake does not run")
}

// TestNewOCRNamesTheStage gives the page reader stages that are missing
// or whose model has the wrong shape: the error names the stage and says
// what it wants.
func TestNewOCRNamesTheStage(t *testing.T) {
	det := fake{"det", []int64{-1, 3, -1, -1}, []int64{-1, 1, -1, -1}}
	cls := fake{"cls", []int64{-1, 3, 48, 192}, []int64{-1, 2}}
	rec := fake{"rec", []int64{-1, 3, 48, -1}, []int64{-1, -1, 5}}
	labels := []string{"a", "b", "c"}
	cases := []struct {
		name string
		st   Stages
		want string // "" for no error
	}{
		{"all", Stages{Detect: det, Classify: cls, Recognize: rec, Labels: labels}, ""},
		{"no classifier", Stages{Detect: det, Recognize: rec, Labels: labels}, ""},
		{"recogniser without the space", Stages{Detect: det, Recognize: fake{"rec", []int64{-1, 3, 48, -1}, []int64{-1, -1, 4}}, Labels: labels}, ""},
		{"no detector", Stages{Classify: cls, Recognize: rec, Labels: labels}, "detect: no model"},
		{"no recogniser", Stages{Detect: det, Labels: labels}, "recognize: no model"},
		{"no characters", Stages{Detect: det, Recognize: rec}, "recognize: no character list"},
		{"classifier as detector", Stages{Detect: cls, Recognize: rec, Labels: labels}, `detect: model "cls" gives y [-1, 2] float32, want a probability map [N, 1, H, W]`},
		{"recogniser as classifier", Stages{Detect: det, Classify: rec, Recognize: rec, Labels: labels}, `classify: model "rec" gives y [-1, -1, 5] float32, want two classes (0, 180) [N, 2]`},
		{"detector as recogniser", Stages{Detect: det, Recognize: det, Labels: labels}, `recognize: model "det" gives y [-1, 1, -1, -1] float32, want CTC scores [N, T, 5] (blank, 3 characters, space)`},
		{"other characters", Stages{Detect: det, Recognize: rec, Labels: []string{"a"}}, `recognize: model "rec" gives y [-1, -1, 5] float32, want CTC scores [N, T, 3] (blank, 1 characters, space)`},
		{"grey classifier", Stages{Detect: det, Classify: fake{"cls", []int64{-1, 1, 48, 192}, []int64{-1, 2}}, Recognize: rec, Labels: labels}, `classify: model "cls" takes x [-1, 1, 48, 192] float32, want [N, 3, 48, 192] float32`},
		{"tall recogniser", Stages{Detect: det, Recognize: fake{"rec", []int64{-1, 3, 32, -1}, []int64{-1, -1, 5}}, Labels: labels}, `recognize: model "rec" takes x [-1, 3, 32, -1] float32, want [N, 3, 48, W] float32`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewOCR(c.st, DefaultOCR)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("NewOCR: %v", err)
			case c.want != "" && (err == nil || err.Error() != c.want):
				t.Fatalf("NewOCR: %v, want %q", err, c.want)
			}
		})
	}
}

// gate wraps a stage's scheduler and counts the runs under way at once:
// the first run waits (at most a minute) for a second to begin, so that
// runs that may overlap do.
type gate struct {
	core.Runner
	stats   func() core.SchedStats
	mu      sync.Mutex
	now     int // runs under way
	most    int // the most at once
	overlap chan struct{}
	closed  bool
}

func newGate(r core.Runner) *gate {
	return &gate{Runner: r, stats: r.(interface{ Stats() core.SchedStats }).Stats, overlap: make(chan struct{})}
}

func (g *gate) Stats() core.SchedStats { return g.stats() }

func (g *gate) Predict(ctx context.Context, in []*tensor.Tensor) (core.Result, error) {
	g.mu.Lock()
	g.now++
	g.most = max(g.most, g.now)
	if g.now >= 2 && !g.closed {
		g.closed = true
		close(g.overlap)
	}
	g.mu.Unlock()
	select {
	case <-g.overlap:
	case <-time.After(time.Minute):
		g.mu.Lock()
		if !g.closed {
			g.closed = true
			close(g.overlap)
		}
		g.mu.Unlock()
	}
	defer func() {
		g.mu.Lock()
		g.now--
		g.mu.Unlock()
	}()
	return g.Runner.Predict(ctx, in)
}

// plain hides a stage's scheduler's Stats: the page reader runs its
// batches one after another.
type plain struct{ core.Runner }

// TestOCRRunsBatchesAtOnce reads the letter (24 lines: four batches for
// the classifier, four for the recogniser) through stages whose
// scheduler runs two at once: a page's batches of that stage run two at
// once, never more, and the page read is the one read with its batches
// one after another.
func TestOCRRunsBatchesAtOnce(t *testing.T) {
	st := realStages(t)
	dir, _ := renderPages(t)
	data, err := os.ReadFile(filepath.Join(dir, "letter.png"))
	if err != nil {
		t.Fatal(err)
	}
	one, err := NewOCR(Stages{Detect: st.Detect, Classify: plain{st.Classify}, Recognize: plain{st.Recognize}, Labels: st.Labels}, DefaultOCR)
	if err != nil {
		t.Fatal(err)
	}
	want, err := one.Read(context.Background(), data, image.Limits{}, DefaultOCR)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Lines) < 2*max(DefaultOCR.ClsBatch, DefaultOCR.RecBatch) {
		t.Fatalf("the letter read as %d lines, want at least two batches", len(want.Lines))
	}
	cases := []struct {
		stage string
		wrap  func(s *Stages, g *gate)
	}{
		{"classify", func(s *Stages, g *gate) { s.Classify = g }},
		{"recognize", func(s *Stages, g *gate) { s.Recognize = g }},
	}
	for _, c := range cases {
		t.Run(c.stage, func(t *testing.T) {
			s := Stages{Detect: st.Detect, Classify: plain{st.Classify}, Recognize: plain{st.Recognize}, Labels: st.Labels}
			inner := st.Recognize
			if c.stage == "classify" {
				inner = st.Classify
			}
			g := newGate(inner)
			c.wrap(&s, g)
			ocr, err := NewOCR(s, DefaultOCR)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ocr.Read(context.Background(), data, image.Limits{}, DefaultOCR)
			if err != nil {
				t.Fatal(err)
			}
			if slots := g.Stats().Sessions; slots != 2 || g.most != slots {
				t.Errorf("%d batches at once, the stage's scheduler runs %d", g.most, slots)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read with batches at once:\n%+v\nwant, as one after another:\n%+v", got, want)
			}
		})
	}
}
