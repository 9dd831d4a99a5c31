package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"go.uber.org/fx"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/codec"
	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport/oip"
)

// warmUpSample provides the warm-up inference from the sample svc.yml
// names (models.NAME.warmup): an Open Inference Protocol request, read
// once at start, run on each loaded generation (at start and at every
// reload) in place of inputs of ones. No sample: no option.
func warmUpSample(m config.Model) (fx.Option, error) {
	if m.WarmUp == "" {
		return fx.Options(), nil
	}
	body, err := os.ReadFile(m.WarmUp)
	if err != nil {
		return nil, fmt.Errorf("warm-up sample: %w", err)
	}
	var doc struct {
		Inputs []json.RawMessage `json:"inputs"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("warm-up sample %s: not an inference request: %w", m.WarmUp, err)
	}
	if len(doc.Inputs) == 0 {
		return nil, fmt.Errorf("warm-up sample %s: no inputs (want an inference request: {\"inputs\": [...]})", m.WarmUp)
	}
	return fx.Provide(func(c *codec.Codec) core.WarmUpSample {
		return func(r core.Runner) error {
			media, err := c.For(r)
			if err != nil {
				return err
			}
			return oip.RunSample(context.Background(), r, media, body)
		}
	}), nil
}
