package main_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestSequenceStepHeaders: a /predict step of a sequence takes the
// request's X-Request-Timeout as every /predict does: one that has passed
// before the step's turn answers 504 and the step never runs (the sum
// goes on from the step before); a bad value is a 400.
func TestSequenceStepHeaders(t *testing.T) {
	t.Parallel()
	s := startServer(t, model("running_sum.onnx"))
	step := func(x string, headers ...string) response {
		t.Helper()
		return s.do(http.MethodPost, "/predict", "application/json", strings.NewReader(`{"x": [[`+x+`]]}`), headers...)
	}
	if r := step("2", "X-Sequence-Id", "a", "X-Sequence-Start", "true"); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"sum":[[2]]`) {
		t.Fatalf("first step: %d %s", r.Status, r.Body)
	}
	if r := step("5", "X-Sequence-Id", "a", "X-Request-Timeout", "1ns"); r.Status != http.StatusGatewayTimeout || !strings.Contains(string(r.Body), "its timeout of 1ns passed") {
		t.Errorf("a step whose timeout passed: %d %s, want 504", r.Status, r.Body)
	}
	if r := step("1", "X-Sequence-Id", "a", "X-Request-Timeout", "soon"); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "X-Request-Timeout") {
		t.Errorf("a step with a bad timeout: %d %s, want 400", r.Status, r.Body)
	}
	if r := step("3", "X-Sequence-Id", "a", "X-Request-Timeout", "10s", "X-Request-Priority", "1"); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"sum":[[5]]`) {
		t.Errorf("the next step: %d %s, want the sum 2+3 (the timed-out step never ran)", r.Status, r.Body)
	}
}
