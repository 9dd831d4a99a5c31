//go:build linux && cgo

package sysprobe_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers/internal/ldpath"
	"github.com/svc-dev/svc/providers/internal/providertest"
	"github.com/svc-dev/svc/providers/internal/sysprobe"
)

// Libraries outside the loader's path load only when what they need was
// preloaded first: ResolveWith lists them in that order, and Preload loads
// them. Layout (generated): pip/a/libdeep.so.1 ← pip/b/libupper.so.1 ←
// app/libapp.so (no run paths at all).
func TestResolveAndPreload(t *testing.T) {
	root := t.TempDir()
	deep := providertest.BuildLib(t, filepath.Join(root, "pip", "a"), providertest.Lib{Soname: "libsvcdeep.so.1", Source: "int deep(void){return 1;}"})
	upper := providertest.BuildLib(t, filepath.Join(root, "pip", "b"), providertest.Lib{Soname: "libsvcupper.so.1", Source: "int deep(void); int upper(void){return deep();}", Needs: []string{deep}})
	app := providertest.BuildLib(t, filepath.Join(root, "app"), providertest.Lib{Soname: "libsvcapp.so", Source: "int upper(void); int app(void){return upper();}", Needs: []string{upper}})
	dirs := []string{filepath.Join(root, "pip", "b"), filepath.Join(root, "pip", "a")}

	cache, _ := ldpath.ReadCache("/etc/ld.so.cache", "amd64")
	res := sysprobe.ResolveWith(ldpath.Search{Preloaded: dirs, Cache: cache, Defaults: ldpath.DefaultDirs("amd64")}, []string{app}, nil)
	if len(res.Missing) != 0 || strings.Join(res.Preload, " ") != deep+" "+upper {
		t.Fatalf("resolution %+v, want nothing missing and %s then %s", res, deep, upper)
	}
	if miss := sysprobe.ResolveWith(ldpath.Search{Cache: cache}, []string{app}, nil).Missing; len(miss) != 1 || miss[0].Name != "libsvcupper.so.1" {
		t.Errorf("without the directories: missing %+v, want libsvcupper.so.1", miss)
	}

	var p sysprobe.Probe
	if err := p.Preload(upper); err == nil || !strings.Contains(err.Error(), "libsvcdeep.so.1") {
		t.Errorf("preloading the upper library first: %v, want the loader's error naming libsvcdeep.so.1", err)
	}
	if err := p.Preload(res.Preload...); err != nil {
		t.Fatalf("preload in order: %v", err)
	}
	if err := p.Load(app); err != nil {
		t.Errorf("the library needing them, after the preload: %v", err)
	}
}
