package core

// Source is a model resolved from MODEL_NAME: what to load and how to
// describe it.
type Source struct {
	// Name is the model's name in /health and /info.
	Name string
	// File is the .onnx file to load.
	File string
	// Version, Description, Metadata and Labels come from the configuration
	// or the registry; empty values fall back to the model's own.
	Version     string
	Description string
	Metadata    map[string]string
	Labels      map[string][]string
	// Origin says how the name was resolved: "path", "config" or "registry".
	Origin string
}
