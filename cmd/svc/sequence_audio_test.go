package main_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The test audio of the sequence tests: speech synthesised by espeak-ng
// (Debian's, installed by ci/install-deps.sh), resampled to Silero VAD's
// 16 kHz, placed at known times between stretches of silence and noise.

const (
	vadRate  = 16000
	vadChunk = 512 // samples per step: 32 ms
)

// speechInterval is where speech lies in a scene, in seconds.
type speechInterval struct{ Start, End float64 }

// scene is test audio at 16 kHz and where its speech lies.
type scene struct {
	Samples []float32
	Speech  []speechInterval
}

// synth speaks text with espeak-ng and returns it at 16 kHz.
func synth(t testing.TB, voice, text string) []float32 {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Fatal("espeak-ng is missing: run ci/install-deps.sh (make test does it), or apt-get install espeak-ng")
	}
	wav := filepath.Join(t.TempDir(), "speech.wav")
	out, err := exec.Command("espeak-ng", "-v", voice, "-s", "150", "-w", wav, text).CombinedOutput()
	if err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	data, err := os.ReadFile(wav)
	if err != nil {
		t.Fatal(err)
	}
	pcm, rate := parseWAV(t, data)
	return resample(pcm, rate, vadRate)
}

// parseWAV reads a RIFF WAVE file of 16-bit mono PCM, as espeak-ng writes
// it, into samples in [-1, 1) and its sample rate.
func parseWAV(t testing.TB, data []byte) ([]float32, int) {
	t.Helper()
	if len(data) < 12 || string(data[:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		t.Fatal("espeak-ng wrote no RIFF WAVE file")
	}
	rate, bits, channels := 0, 0, 0
	for p := 12; p+8 <= len(data); {
		id, size := string(data[p:p+4]), int(binary.LittleEndian.Uint32(data[p+4:p+8]))
		body := data[p+8 : min(p+8+size, len(data))]
		switch id {
		case "fmt ":
			channels = int(binary.LittleEndian.Uint16(body[2:4]))
			rate = int(binary.LittleEndian.Uint32(body[4:8]))
			bits = int(binary.LittleEndian.Uint16(body[14:16]))
		case "data":
			if bits != 16 || channels != 1 {
				t.Fatalf("WAV of %d-bit samples, %d channels: want 16-bit mono", bits, channels)
			}
			pcm := make([]float32, len(body)/2)
			for i := range pcm {
				pcm[i] = float32(int16(binary.LittleEndian.Uint16(body[2*i:]))) / 32768
			}
			return pcm, rate
		}
		p += 8 + size + size%2
	}
	t.Fatal("WAV file without a data chunk")
	return nil, 0
}

// resample converts x from rate in to rate out by band-limited
// interpolation: each output sample is the input convolved with a sinc
// low-pass at 95 % of the lower Nyquist frequency, Hann-windowed over 32
// input samples on each side of the output's position.
func resample(x []float32, in, out int) []float32 {
	if in == out {
		return x
	}
	const half = 32
	ratio := float64(in) / float64(out)
	cutoff := 0.95 * 0.5 * math.Min(1, 1/ratio) // in cycles per input sample
	n := int(float64(len(x)) / ratio)
	y := make([]float32, n)
	for i := range y {
		pos := float64(i) * ratio
		center := int(math.Floor(pos))
		var sum float64
		for k := center - half + 1; k <= center+half; k++ {
			if k < 0 || k >= len(x) {
				continue
			}
			d := pos - float64(k)
			w := 0.5 + 0.5*math.Cos(math.Pi*d/half)
			sinc := 2 * cutoff
			if d != 0 {
				sinc = math.Sin(2*math.Pi*cutoff*d) / (math.Pi * d)
			}
			sum += float64(x[k]) * sinc * w
		}
		y[i] = float32(sum)
	}
	return y
}

// trim returns where the sound of x begins and ends: the first and last
// samples louder than -40 dBFS (espeak-ng pads its speech with silence).
func trim(x []float32) (int, int) {
	const floor = 0.01
	first, last := 0, len(x)
	for first < len(x) && math.Abs(float64(x[first])) < floor {
		first++
	}
	for last > first && math.Abs(float64(x[last-1])) < floor {
		last--
	}
	return first, last
}

// part is a stretch of a scene: speech (text) or, with no text, seconds of
// silence with noise at noise RMS.
type part struct {
	text    string
	seconds float64
	noise   float64
}

// makeScene lays out parts one after the other; seed makes its noise.
func makeScene(t testing.TB, voice string, seed uint64, parts ...part) scene {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 31))
	var sc scene
	for _, p := range parts {
		if p.text == "" {
			n := int(p.seconds * vadRate)
			for range n {
				sc.Samples = append(sc.Samples, float32(rng.NormFloat64()*p.noise))
			}
			continue
		}
		speech := synth(t, voice, p.text)
		first, last := trim(speech)
		at := len(sc.Samples)
		sc.Samples = append(sc.Samples, speech[first:last]...)
		sc.Speech = append(sc.Speech, speechInterval{Start: float64(at) / vadRate, End: float64(at+last-first) / vadRate})
	}
	// Whole chunks only.
	for len(sc.Samples)%vadChunk != 0 {
		sc.Samples = append(sc.Samples, 0)
	}
	return sc
}

// testScene is the speech the sequence tests detect: three phrases between
// silence and noise.
func testScene(t testing.TB, seed uint64) scene {
	return makeScene(t, "en-us", seed,
		part{seconds: 1.0, noise: 0.001},
		part{text: "the quick brown fox jumps over the lazy dog"},
		part{seconds: 1.5, noise: 0.005},
		part{text: "streams of audio carry state from one chunk to the next"},
		part{seconds: 1.2, noise: 0},
		part{text: "hello world"},
		part{seconds: 1.0, noise: 0.003},
	)
}

// chunks cuts a scene into steps of vadChunk samples.
func (sc scene) chunks() [][]float32 {
	var out [][]float32
	for i := 0; i+vadChunk <= len(sc.Samples); i += vadChunk {
		out = append(out, sc.Samples[i:i+vadChunk])
	}
	return out
}

// segments finds speech in a stream of per-chunk probabilities, smoothed
// as voice activity detectors do: speech begins at a chunk above 0.5 and
// ends at the first chunk below 0.35 (hysteresis); gaps shorter than
// 250 ms are bridged and segments shorter than 100 ms dropped.
func segments(probs []float32) []speechInterval {
	const step = float64(vadChunk) / vadRate
	var segs []speechInterval
	in := false
	var start float64
	for i, p := range probs {
		at := float64(i) * step
		switch {
		case !in && p > 0.5:
			in, start = true, at
		case in && p < 0.35:
			in = false
			segs = append(segs, speechInterval{start, at})
		}
	}
	if in {
		segs = append(segs, speechInterval{start, float64(len(probs)) * step})
	}
	var merged []speechInterval
	for _, s := range segs {
		if n := len(merged); n > 0 && s.Start-merged[n-1].End < 0.25 {
			merged[n-1].End = s.End
			continue
		}
		merged = append(merged, s)
	}
	var out []speechInterval
	for _, s := range merged {
		if s.End-s.Start >= 0.1 {
			out = append(out, s)
		}
	}
	return out
}
