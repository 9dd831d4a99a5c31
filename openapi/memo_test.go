package openapi

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestValidateBodyRemembersAcceptedStandIns: a stand-in kin-openapi
// accepted is accepted again without it; bodies that fail still fail each
// time (the memo holds only acceptances), whatever was accepted before
// them; the memo is bounded; concurrent use agrees with the verdicts.
func TestValidateBodyRemembersAcceptedStandIns(t *testing.T) {
	v := mixedValidator(t)
	ctx := context.Background()
	type check struct {
		body string
		want string // "" = valid
	}
	valid := `{"features": [[1,2,3]], "x": 1, "text": ["a"]}`
	sameStandIn := `{"text": ["b", "c"], "features": [[9,9,9],[1,1,1]], "x": 2.5}`
	checks := []check{
		{valid, ""},
		{valid, ""},
		{sameStandIn, ""},
		{`{"features": [[1,2,3]], "x": "one", "text": ["a"]}`, "Invalid input type for 'x': expected array"},
		{`{"features": [[1,2,3]], "text": ["a"]}`, "Missing required input: 'x'"},
		{`{"features": [[1,2,3]], "x": 1, "text": ["a"], "y": 1}`, "Unknown input 'y'; the model's inputs are: 'features', 'x', 'text', 'bias', 'mask', 'in\"put\\', '?'"},
		{`{"features": [[1,2,3]], "x": 1, "text": ["a"], "y": 1}`, "Unknown input 'y'; the model's inputs are: 'features', 'x', 'text', 'bias', 'mask', 'in\"put\\', '?'"},
		{`{"features": [[1,2,3]], "x": 1, "text": ["a"]`, "Invalid JSON body: unexpected end of input at byte 45"},
	}
	run := func(c check) error {
		err := v.ValidateBody(ctx, []byte(c.body))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			return fmt.Errorf("%s: got %q, want %q", c.body, got, c.want)
		}
		return nil
	}
	for _, c := range checks {
		if err := run(c); err != nil {
			t.Fatal(err)
		}
	}
	if n := v.remembered(); n != 1 {
		t.Fatalf("%d stand-ins remembered, want 1 (the valid bodies share one; failures are not kept)", n)
	}

	// Concurrent readers while the memo grows.
	more := []check{
		{`{"features": [1,2,3], "x": [1], "text": "a"}`, ""},
		{`{"features": [1,2,3], "x": 1, "text": "a", "bias": [1]}`, ""},
		{`{"features": [1,2,3], "x": 1, "text": "a", "mask": [[true, false]]}`, ""},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			all := append(append([]check(nil), checks...), more...)
			for i := 0; i < 200; i++ {
				if err := run(all[(i+g)%len(all)]); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := v.remembered(); n != 1+len(more) {
		t.Fatalf("%d stand-ins remembered, want %d", n, 1+len(more))
	}

	// Bounded: past maxPassed nothing more is kept, and what is kept
	// still answers.
	for i := 0; i < maxPassed+50; i++ {
		v.remember([]byte(fmt.Sprintf(`{"stand-in %d":0}`, i)))
	}
	if n := v.remembered(); n != maxPassed {
		t.Fatalf("%d stand-ins remembered, want the bound %d", n, maxPassed)
	}
	for _, c := range checks {
		if err := run(c); err != nil {
			t.Fatal(err)
		}
	}
}

// remembered is the number of stand-ins v accepts without kin-openapi.
func (v *Validator) remembered() int {
	if m := v.passed.Load(); m != nil {
		return len(*m)
	}
	return 0
}
