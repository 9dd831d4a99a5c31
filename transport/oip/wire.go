package oip

import (
	"encoding/json"
	"fmt"
)

// ServerMetadata is the answer of GET /v2.
type ServerMetadata struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

// TensorMetadata describes one input or output in the model metadata.
type TensorMetadata struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// ModelMetadata is the answer of GET /v2/models/{name}.
type ModelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
}

// ModelReady is the answer of GET /v2/models/{name}/ready when ready.
type ModelReady struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("oip: encode %T: %v", v, err))
	}
	return b
}
