package decode

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func piece(start, end int, label string, score float64) Piece {
	return Piece{Start: start, End: end, Class: Class{Label: label, Score: score}}
}

func TestEntities(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		pieces []Piece
		want   []Entity
	}{
		{"none", "hello", nil, []Entity{}},
		{"O is left out", "hello world", []Piece{piece(0, 5, "O", 0.9), piece(6, 11, "O", 0.8)}, []Entity{}},
		{
			"B then I merge, score the mean", "John Smith lives",
			[]Piece{piece(0, 4, "B-PER", 0.9), piece(5, 10, "I-PER", 0.7), piece(11, 16, "O", 0.99)},
			[]Entity{{"PER", 0, 10, "John Smith", 0.8}},
		},
		{
			"sub-word pieces continue with I-", "Johnson went",
			[]Piece{piece(0, 4, "B-PER", 0.6), piece(4, 7, "I-PER", 0.8), piece(8, 12, "O", 1)},
			[]Entity{{"PER", 0, 7, "Johnson", 0.7}},
		},
		{
			"B starts a new entity of the same tag", "Ann Bob",
			[]Piece{piece(0, 3, "B-PER", 0.5), piece(4, 7, "B-PER", 0.7)},
			[]Entity{{"PER", 0, 3, "Ann", 0.5}, {"PER", 4, 7, "Bob", 0.7}},
		},
		{
			"an I of another tag starts an entity", "Paris Inc",
			[]Piece{piece(0, 5, "B-LOC", 0.5), piece(6, 9, "I-ORG", 0.25)},
			[]Entity{{"LOC", 0, 5, "Paris", 0.5}, {"ORG", 6, 9, "Inc", 0.25}},
		},
		{
			"labels without a prefix group by equal label", "New York now",
			[]Piece{piece(0, 3, "LOC", 0.5), piece(4, 8, "LOC", 1), piece(9, 12, "O", 1)},
			[]Entity{{"LOC", 0, 8, "New York", 0.75}},
		},
		{
			"offsets are characters, not bytes", "Zoë Øster és",
			[]Piece{piece(0, 3, "B-PER", 1), piece(4, 9, "I-PER", 0.5), piece(10, 12, "O", 1)},
			[]Entity{{"PER", 0, 9, "Zoë Øster", 0.75}},
		},
		{
			"an offset past the text is clamped", "abc",
			[]Piece{piece(1, 10, "B-X", 1)},
			[]Entity{{"X", 1, 10, "bc", 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Entities(tt.text, tt.pieces); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEntitiesJSON(t *testing.T) {
	items := [][]Entity{{{"PER", 0, 4, "Jo\"n", 0.875}}, {}}
	got := string(AppendEntitiesJSON(nil, items))
	want := `[[{"entity":"PER","start":0,"end":4,"text":"Jo\"n","score":0.875}],[]]`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	b, err := json.Marshal(items[0][0])
	if err != nil || string(b) != `{"entity":"PER","start":0,"end":4,"text":"Jo\"n","score":0.875}` {
		t.Fatalf("MarshalJSON: %s %v", b, err)
	}
}

func TestClassifierSigmoid(t *testing.T) {
	got, err := Classifier{Sigmoid: true, TopK: 3, Labels: []string{"a", "b", "c"}}.Decode(f32([]int64{1, 3}, 0, 2, -800))
	if err != nil {
		t.Fatal(err)
	}
	want := []Class{{"b", 1, 1 / (1 + math.Exp(-2))}, {"a", 0, 0.5}, {"c", 2, 0}}
	if !reflect.DeepEqual(got[0], want) {
		t.Fatalf("got %v, want %v", got[0], want)
	}
	if _, err := (Classifier{Sigmoid: true, Softmax: true}).Decode(f32([]int64{1, 1}, 0)); err == nil {
		t.Fatal("softmax and sigmoid both set: no error")
	}
}
