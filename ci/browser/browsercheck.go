// Package browsercheck drives headless Chromium through the documentation
// pages of a running svc server, the way a person would use them: it opens
// Swagger UI at /docs, expands POST /predict, runs "Try it out" and
// "Execute" with the example body and waits for a 200; it opens ReDoc at
// /redoc and looks for each input name. Meanwhile it records every request
// the browser makes and every Content-Security-Policy violation, script
// error and failed load, and fails if a page reached outside the server's
// origin or broke.
//
// It is a module of its own, as ci/kube is, so that chromedp stays out of
// svc's go.mod; make test (target browser) vets it and runs its tests: the
// checks against a fake server that must pass and one that must fail, and
// against the real svc serving the demo model and multi_input; CheckUpload
// chooses a picture for an image input in "Try it out" and executes it.
package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// StepTimeout bounds each wait for the page.
const StepTimeout = 30 * time.Second

// Screenshots written to the screenshot directory.
const (
	ShotDocs     = "docs.png"
	ShotExecuted = "docs-executed.png"
	ShotRedoc    = "redoc.png"
)

// predictOp is the DOM id Swagger UI gives POST /predict (tag "inference",
// operationId "predict").
const predictOp = "#operations-inference-predict"

// RunBrowserChecks runs the checks against the server at baseURL with the
// Chromium binary at chromiumPath, writing screenshots to screenshotDir
// (created if missing). inputNames are the model's input names, which the
// ReDoc page must show. It returns nil when every check passed, else an
// error listing every failure.
func RunBrowserChecks(ctx context.Context, chromiumPath, baseURL, screenshotDir string, inputNames []string) error {
	base, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return fmt.Errorf("base URL %q is not an absolute URL", baseURL)
	}
	tab, cancel, rec, err := newTab(ctx, chromiumPath, screenshotDir)
	if err != nil {
		return err
	}
	defer cancel()

	var failures []error
	if err := checkSwagger(tab, base, screenshotDir); err != nil {
		failures = append(failures, fmt.Errorf("/docs: %w", err))
	}
	if err := checkRedoc(tab, base, screenshotDir, inputNames); err != nil {
		failures = append(failures, fmt.Errorf("/redoc: %w", err))
	}
	failures = append(failures, rec.problems(base)...)
	return errors.Join(failures...)
}

// newTab starts headless Chromium with a tab whose requests and problems
// a recorder notes; cancel closes both.
func newTab(ctx context.Context, chromiumPath, screenshotDir string) (context.Context, func(), *recorder, error) {
	if _, err := os.Stat(chromiumPath); err != nil {
		return nil, nil, nil, fmt.Errorf("chromium: %w", err)
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		return nil, nil, nil, fmt.Errorf("screenshot directory: %w", err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.WindowSize(1280, 2000),
	)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	cancel := func() { cancelTab(); cancelAlloc() }
	rec := &recorder{}
	if err := chromedp.Listen(tab, rec.event); err != nil {
		cancel()
		return nil, nil, nil, fmt.Errorf("starting chromium: %w", err)
	}
	return tab, cancel, rec, nil
}

func checkSwagger(ctx context.Context, base *url.URL, dir string) error {
	if err := chromedp.Do(ctx, chromedp.Navigate(base.String()+"/docs")); err != nil {
		return err
	}
	// Swagger UI renders after it fetched /openapi.json.
	if err := waitFor(ctx, fmt.Sprintf(`document.querySelector(%q) !== null`, predictOp+" .opblock-summary")); err != nil {
		return fmt.Errorf("POST /predict never appeared: %w", err)
	}
	if err := shot(ctx, dir, ShotDocs); err != nil {
		return err
	}
	// Expand the operation, then "Try it out" (skipped if the UI opens
	// operations in that mode already), then "Execute".
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(predictOp+" .opblock-summary"))); err != nil {
		return fmt.Errorf("expanding POST /predict: %w", err)
	}
	if err := waitFor(ctx, fmt.Sprintf(`document.querySelector(%q) !== null || document.querySelector(%q) !== null`,
		predictOp+" .try-out__btn", predictOp+" .execute")); err != nil {
		return fmt.Errorf("no 'Try it out' button: %w", err)
	}
	tryOut, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
		`(document.querySelector(%q) || {textContent: ""}).textContent.trim()`, predictOp+" .try-out__btn")))
	if err != nil {
		return err
	}
	if tryOut == "Try it out" {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(predictOp+" .try-out__btn"))); err != nil {
			return fmt.Errorf("clicking 'Try it out': %w", err)
		}
	}
	if err := waitFor(ctx, fmt.Sprintf(`document.querySelector(%q) !== null`, predictOp+" .execute")); err != nil {
		return fmt.Errorf("no 'Execute' button: %w", err)
	}
	// The example body must be in the editor, so that nothing is typed.
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
		`(document.querySelector(%q) || {value: ""}).value`, predictOp+" textarea.body-param__text")))
	if err != nil {
		return err
	}
	if strings.TrimSpace(body) == "" {
		return errors.New("the request body editor is empty: the document has no usable example")
	}
	status, err := execute(ctx)
	if err != nil {
		return err
	}
	if err := shot(ctx, dir, ShotExecuted); err != nil {
		return err
	}
	if !strings.HasPrefix(status, "200") {
		resp, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
			`(document.querySelector(%q) || {textContent: ""}).textContent`, predictOp+" .live-responses-table .response-col_description")))
		return fmt.Errorf("'Execute' answered %q, want 200: %.300s", status, resp)
	}
	return nil
}

// execute clicks POST /predict's "Execute" and returns the status of the
// live response once it shows.
func execute(ctx context.Context) (string, error) {
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(predictOp+" .execute"))); err != nil {
		return "", fmt.Errorf("clicking 'Execute': %w", err)
	}
	statusExpr := fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent.trim()`,
		predictOp+" .live-responses-table .response .response-col_status")
	if err := waitFor(ctx, statusExpr+` !== ""`); err != nil {
		return "", fmt.Errorf("no live response after 'Execute': %w", err)
	}
	return chromedp.Run(ctx, chromedp.Evaluate[string](statusExpr))
}

func checkRedoc(ctx context.Context, base *url.URL, dir string, inputNames []string) error {
	if err := chromedp.Do(ctx, chromedp.Navigate(base.String()+"/redoc")); err != nil {
		return err
	}
	// ReDoc renders the operation list after it parsed /openapi.json.
	if err := waitFor(ctx, `document.body.innerText.includes("/predict")`); err != nil {
		return fmt.Errorf("the page never showed /predict: %w", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		return err
	}
	if err := shot(ctx, dir, ShotRedoc); err != nil {
		return err
	}
	var missing []string
	for _, name := range inputNames {
		if !strings.Contains(text, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("input names %q are not on the page", missing)
	}
	return nil
}

// waitFor evaluates a JavaScript expression until it is true. It uses
// Runtime.evaluate from Go rather than chromedp.Poll, whose in-page helper
// compiles the predicate with new Function, which the pages' CSP forbids.
func waitFor(ctx context.Context, expr string) error {
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func shot(ctx context.Context, dir, name string) error {
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return fmt.Errorf("screenshot %s: %w", name, err)
	}
	return os.WriteFile(filepath.Join(dir, name), png, 0o644)
}

// recorder keeps what the browser reports. Its event method runs in
// chromedp's read loop, so it only appends under a lock.
type recorder struct {
	mu         sync.Mutex
	requests   []string
	failed     []string
	logs       []string
	exceptions []string
}

func (r *recorder) event(ev any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if ev.Request != nil {
			r.requests = append(r.requests, ev.Request.URL)
		}
	case *network.EventLoadingFailed:
		if !ev.Canceled {
			r.failed = append(r.failed, fmt.Sprintf("%s (%s)", ev.ErrorText, ev.BlockedReason))
		}
	case *log.EventEntryAdded:
		if ev.Entry != nil && (ev.Entry.Level == log.EntryLevelError || strings.Contains(ev.Entry.Text, "Content Security Policy")) {
			r.logs = append(r.logs, fmt.Sprintf("[%s] %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range ev.Args {
				if a != nil {
					parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
				}
			}
			r.logs = append(r.logs, "console.error: "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		if d := ev.ExceptionDetails; d != nil {
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			r.exceptions = append(r.exceptions, msg)
		}
	}
}

// problems lists requests that left the origin, failed loads, errors and
// exceptions. data: and blob: URLs stay in the page.
func (r *recorder) problems(base *url.URL) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []error
	var foreign []string
	for _, raw := range r.requests {
		u, err := url.Parse(raw)
		if err != nil {
			foreign = append(foreign, raw)
			continue
		}
		switch u.Scheme {
		case "data", "blob", "about":
			continue
		}
		if u.Scheme != base.Scheme || u.Host != base.Host {
			foreign = append(foreign, raw)
		}
	}
	if len(foreign) > 0 {
		slices.Sort(foreign)
		out = append(out, fmt.Errorf("requests left %s://%s: %s", base.Scheme, base.Host, strings.Join(slices.Compact(foreign), ", ")))
	}
	if len(r.requests) == 0 {
		out = append(out, errors.New("no request was recorded: the network listener saw nothing"))
	}
	for _, f := range r.failed {
		out = append(out, fmt.Errorf("a load failed: %s", f))
	}
	for _, l := range r.logs {
		out = append(out, fmt.Errorf("browser log: %.300s", l))
	}
	for _, e := range r.exceptions {
		out = append(out, fmt.Errorf("uncaught exception: %.300s", e))
	}
	return out
}
