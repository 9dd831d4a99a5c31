package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/svc-dev/svc/core"
	"github.com/svc-dev/svc/core/config"
)

// Resolve resolves MODEL_NAME, in order: a filesystem path, a model
// named in the configuration file, a model in the local registry store.
func Resolve(name string, cfg config.Config, reg *Store) (core.Source, error) {
	var tried []string
	if _, err := os.Stat(name); err == nil {
		file, err := core.ResolveModelFile(name)
		if err != nil {
			return core.Source{}, err
		}
		return core.Source{Name: nameFromPath(name, file), File: file, Origin: "path"}, nil
	}
	tried = append(tried, fmt.Sprintf("path %q (no such file or directory)", name))

	if m, ok := cfg.Models[name]; ok {
		if m.Pipeline != nil {
			return core.Source{}, fmt.Errorf("model %q from %s is a pipeline (models.%s.pipeline): it is served as one model by svc serve, and this command takes one model file: give it one of the pipeline's stages", name, cfg.File, name)
		}
		p := m.Path
		if !filepath.IsAbs(p) && cfg.File != "" {
			p = filepath.Join(filepath.Dir(cfg.File), p)
		}
		file, err := core.ResolveModelFile(p)
		if err != nil {
			return core.Source{}, fmt.Errorf("model %q from %s: %w", name, cfg.File, err)
		}
		return core.Source{
			Name: name, File: file, Version: m.Version, Description: m.Description,
			Metadata: m.Metadata, Labels: m.Labels, Origin: "config",
		}, nil
	}
	if cfg.File == "" {
		tried = append(tried, fmt.Sprintf("configuration file (none found: no %s in the working directory)", config.DefaultFile))
	} else {
		tried = append(tried, fmt.Sprintf("models in %s (no model named %q)", cfg.File, name))
	}

	if reg != nil {
		src, ok, err := reg.Lookup(name)
		if err != nil {
			return core.Source{}, fmt.Errorf("model %q from the registry: %w", name, err)
		}
		if ok {
			return src, nil
		}
		tried = append(tried, fmt.Sprintf("registry %s (not pulled)", reg.Root()))
	}
	hint := "pass a path to a .onnx file or model directory, add it under models: in " + config.DefaultFile
	if strings.Count(name, "/") == 1 {
		hint += ", or run 'svc pull " + name + "'"
	} else {
		hint += ", or pull it with 'svc pull ORG/NAME'"
	}
	return core.Source{}, fmt.Errorf("%w: %q; tried %s; %s", core.ErrModelNotFound, name, strings.Join(tried, ", "), hint)
}

// nameFromPath names a model served from a path: the file's stem, or the
// directory's name for model.onnx and the Hugging Face layout.
func nameFromPath(arg, file string) string {
	stem := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if stem != "model" {
		return stem
	}
	dir := filepath.Dir(file)
	if filepath.Base(dir) == "onnx" {
		dir = filepath.Dir(dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return stem
	}
	if b := filepath.Base(abs); b != "" && b != "/" && b != "." {
		return b
	}
	return stem
}
