package core

import "context"

type paramsKey struct{}

// WithParams returns ctx carrying a request's parameters (the v1 query
// string, v2 parameters, as text) for a runner that reads them: a
// pipeline's per-request overrides.
func WithParams(ctx context.Context, params map[string]string) context.Context {
	if len(params) == 0 {
		return ctx
	}
	return context.WithValue(ctx, paramsKey{}, params)
}

// ParamsOf returns the parameters WithParams put in ctx (nil: none).
func ParamsOf(ctx context.Context) map[string]string {
	p, _ := ctx.Value(paramsKey{}).(map[string]string)
	return p
}
