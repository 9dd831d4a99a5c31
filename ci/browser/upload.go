package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/chromedp/chromedp"
)

// ShotUpload is the screenshot of /docs after a picture was uploaded and
// executed.
const ShotUpload = "docs-upload.png"

// CheckUpload drives /docs of a server whose model has an image input
// named input: it expands POST /predict, turns "Try it out" on, switches
// the request body to multipart/form-data, gives the input's file field
// the picture at picturePath, executes, and expects a 200 whose body
// contains want (a label the model answers). It is what a person does to
// try a vision model from the browser.
func CheckUpload(ctx context.Context, chromiumPath, baseURL, screenshotDir, input, picturePath, want string) error {
	base, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return fmt.Errorf("base URL %q is not an absolute URL", baseURL)
	}
	tab, cancel, rec, err := newTab(ctx, chromiumPath, screenshotDir)
	if err != nil {
		return err
	}
	defer cancel()
	if err := openTryOut(tab, base); err != nil {
		return fmt.Errorf("/docs: %w", err)
	}
	if err := uploadAndExecute(tab, input, picturePath, want); err != nil {
		_ = shot(tab, screenshotDir, ShotUpload)
		return fmt.Errorf("/docs upload: %w", err)
	}
	if err := shot(tab, screenshotDir, ShotUpload); err != nil {
		return err
	}
	return errors.Join(rec.problems(base)...)
}

// openTryOut opens /docs, expands POST /predict and turns "Try it out" on.
func openTryOut(ctx context.Context, base *url.URL) error {
	if err := chromedp.Do(ctx, chromedp.Navigate(base.String()+"/docs")); err != nil {
		return err
	}
	if err := waitFor(ctx, fmt.Sprintf(`document.querySelector(%q) !== null`, predictOp+" .opblock-summary")); err != nil {
		return fmt.Errorf("POST /predict never appeared: %w", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(predictOp+" .opblock-summary"))); err != nil {
		return fmt.Errorf("expanding POST /predict: %w", err)
	}
	if err := waitFor(ctx, fmt.Sprintf(`document.querySelector(%q) !== null`, predictOp+" .try-out__btn")); err != nil {
		return fmt.Errorf("no 'Try it out' button: %w", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(predictOp+" .try-out__btn"))); err != nil {
		return fmt.Errorf("clicking 'Try it out': %w", err)
	}
	return waitFor(ctx, fmt.Sprintf(`document.querySelector(%q) !== null`, predictOp+" .execute"))
}

// uploadAndExecute picks multipart/form-data, sets the file and executes.
func uploadAndExecute(ctx context.Context, input, picturePath, want string) error {
	// Swagger UI is React: set the select's value through the native
	// setter and let the change event reach React.
	picked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
		const s = document.querySelector(%q);
		if (!s || ![...s.options].some(o => o.value === "multipart/form-data")) return false;
		Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(s, "multipart/form-data");
		s.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`, predictOp+" .opblock-section-request-body select")))
	if err != nil {
		return err
	}
	if !picked {
		return errors.New("the request body offers no multipart/form-data")
	}
	if err := waitFor(ctx, fmt.Sprintf(`document.querySelector(%q) !== null`, predictOp+" .opblock-section-request-body input[type=file]")); err != nil {
		return fmt.Errorf("no file field after choosing multipart/form-data: %w", err)
	}
	// The form lists the inputs in order, each with its name; the file
	// field of input is in the row that names it.
	field, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => {
		const rows = [...document.querySelectorAll(%q)];
		const i = rows.findIndex(r => r.querySelector("input[type=file]") && (r.querySelector(".parameter__name") || {textContent: ""}).textContent.trim().replace(/\s*\*.*$/s, "").replace(/required$/, "").trim() === %q);
		if (i < 0) return "";
		rows[i].setAttribute("data-svc-upload", "1");
		return %q + " [data-svc-upload] input[type=file]";
	})()`, predictOp+" .opblock-section-request-body tr", input, predictOp)))
	if err != nil {
		return err
	}
	if field == "" {
		return fmt.Errorf("no file field for input %q", input)
	}
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS(field), []string{picturePath})); err != nil {
		return fmt.Errorf("choosing the file: %w", err)
	}
	status, err := execute(ctx)
	if err != nil {
		return err
	}
	// The body shows once Swagger UI has rendered it.
	bodyExpr := fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent`, predictOp+" .live-responses-table .response-col_description pre")
	if err := waitFor(ctx, bodyExpr+` !== ""`); err != nil {
		return fmt.Errorf("no response body after 'Execute': %w", err)
	}
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](bodyExpr))
	if err != nil {
		return err
	}
	if !strings.HasPrefix(status, "200") || !strings.Contains(body, want) {
		return fmt.Errorf("'Execute' answered %q, want 200 with %q: %.300s", status, want, body)
	}
	return nil
}
