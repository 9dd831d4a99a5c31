package ldpath_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/providers/internal/ldpath"
	"github.com/svc-dev/svc/providers/internal/providertest"
)

// The cache parser agrees with ldconfig -p on this machine's
// /etc/ld.so.cache: every soname and the path of its first entry.
func TestReadCacheMatchesLdconfig(t *testing.T) {
	got, err := ldpath.ReadCache("/etc/ld.so.cache", runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ldconfig", "-p").Output()
	if err != nil {
		t.Fatalf("ldconfig -p: %v", err)
	}
	arch := map[string]string{"amd64": "x86-64", "arm64": "AArch64"}[runtime.GOARCH]
	want := map[string]string{}
	for _, line := range strings.Split(string(out), "\n")[1:] {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), " (")
		if !ok {
			continue
		}
		flags, path, _ := strings.Cut(rest, ") => ")
		if !strings.HasPrefix(flags, "libc6") || (arch != "" && !strings.Contains(flags, arch)) {
			continue
		}
		if _, dup := want[name]; !dup {
			want[name] = path
		}
	}
	if len(want) == 0 || want["libc.so.6"] == "" {
		t.Fatalf("ldconfig -p lists no libc.so.6:\n%s", out)
	}
	if len(got) != len(want) {
		t.Errorf("%d sonames, ldconfig -p lists %d", len(got), len(want))
	}
	for name, path := range want {
		if got[name] != path {
			t.Errorf("%s → %q, ldconfig -p says %q", name, got[name], path)
		}
	}
}

func TestParseCacheRejects(t *testing.T) {
	tests := []struct {
		name string
		give []byte
	}{
		{"empty", nil},
		{"old format", []byte("ld.so-1.7.0\x00\x00\x00\x00\x00" + strings.Repeat("\x00", 48))},
		{"entries past the end", append([]byte("glibc-ld.so.cache1.1\xff\xff\x00\x00"), make([]byte, 24)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ldpath.ParseCache(tt.give, "amd64"); err == nil {
				t.Error("parsed")
			}
		})
	}
}

// layout builds, in a temporary directory:
//
//	app/libtop.so      needs libmid.so.1  (RUNPATH $ORIGIN/../mid)
//	mid/libmid.so.1    needs libleaf.so.2 (no RUNPATH: LD_LIBRARY_PATH, preloaded dirs)
//	                   needs libgone.so.3 (never found)
//	leaf/libleaf.so.2  needs libc.so.6    (the loader cache)
//	rp/libtoprp.so     needs libmid.so.1 via DT_RPATH $ORIGIN/../mid, which libmid's
//	                   own needs inherit: libleaf.so.2 copied beside libmid finds it
func layout(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	gone := providertest.BuildLib(t, filepath.Join(root, "gone"), providertest.Lib{Soname: "libgone.so.3", Source: "int gone(void){return 3;}"})
	leaf := providertest.BuildLib(t, filepath.Join(root, "leaf"), providertest.Lib{Soname: "libleaf.so.2", Source: "int leaf(void){return 2;}"})
	mid := providertest.BuildLib(t, filepath.Join(root, "mid"), providertest.Lib{Soname: "libmid.so.1", Source: "int mid(void){return 1;}", Needs: []string{leaf, gone}})
	providertest.BuildLib(t, filepath.Join(root, "app"), providertest.Lib{Soname: "libtop.so", Source: "int top(void){return 0;}", Needs: []string{mid},
		Flags: []string{"-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../mid"}})
	providertest.BuildLib(t, filepath.Join(root, "rp"), providertest.Lib{Soname: "libtoprp.so", Source: "int toprp(void){return 0;}", Needs: []string{mid},
		Flags: []string{"-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/../mid:$ORIGIN/../leaf"}})
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestResolve(t *testing.T) {
	root := layout(t)
	cache, err := ldpath.ReadCache("/etc/ld.so.cache", runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	notELF := filepath.Join(t.TempDir(), "notelf")
	if err := os.MkdirAll(notELF, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notELF, "libleaf.so.2"), []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		lib         string
		search      ldpath.Search
		wantMissing []string
		wantLeaf    string // where libleaf.so.2 resolves ("" = missing)
	}{
		{
			name:        "RUNPATH finds the direct need only; the rest is missing",
			lib:         "app/libtop.so",
			search:      ldpath.Search{Cache: cache},
			wantMissing: []string{"libleaf.so.2", "libgone.so.3"},
		},
		{
			name:        "LD_LIBRARY_PATH",
			lib:         "app/libtop.so",
			search:      ldpath.Search{Cache: cache, LibraryPath: []string{filepath.Join(root, "leaf")}},
			wantMissing: []string{"libgone.so.3"},
			wantLeaf:    "leaf/libleaf.so.2",
		},
		{
			name:        "a preloaded directory",
			lib:         "app/libtop.so",
			search:      ldpath.Search{Cache: cache, Preloaded: []string{filepath.Join(root, "leaf")}},
			wantMissing: []string{"libgone.so.3"},
			wantLeaf:    "leaf/libleaf.so.2",
		},
		{
			name:        "a file that is not ELF is passed over",
			lib:         "app/libtop.so",
			search:      ldpath.Search{Cache: cache, LibraryPath: []string{notELF, filepath.Join(root, "leaf")}},
			wantMissing: []string{"libgone.so.3"},
			wantLeaf:    "leaf/libleaf.so.2",
		},
		{
			name:        "DT_RPATH is inherited by the libraries it loads",
			lib:         "rp/libtoprp.so",
			search:      ldpath.Search{Cache: cache},
			wantMissing: []string{"libgone.so.3"},
			wantLeaf:    "leaf/libleaf.so.2",
		},
		{
			name:        "without the loader cache and default directories libc is missing too",
			lib:         "app/libtop.so",
			search:      ldpath.Search{LibraryPath: []string{filepath.Join(root, "leaf")}},
			wantMissing: []string{"libc.so.6", "libgone.so.3"},
			wantLeaf:    "leaf/libleaf.so.2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.search.Resolve(filepath.Join(root, tt.lib))
			if err != nil {
				t.Fatal(err)
			}
			got := res.MissingNames()
			slices.Sort(got)
			want := slices.Clone(tt.wantMissing)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("missing %v, want %v", got, want)
			}
			if res.Found["libmid.so.1"] != filepath.Join(root, "mid", "libmid.so.1") {
				t.Errorf("libmid.so.1 → %q", res.Found["libmid.so.1"])
			}
			wantLeaf := ""
			if tt.wantLeaf != "" {
				wantLeaf = filepath.Join(root, tt.wantLeaf)
			}
			if res.Found["libleaf.so.2"] != wantLeaf {
				t.Errorf("libleaf.so.2 → %q, want %q", res.Found["libleaf.so.2"], wantLeaf)
			}
			for _, m := range res.Missing {
				if m.Name == "libgone.so.3" && m.NeededBy != filepath.Join(root, "mid", "libmid.so.1") {
					t.Errorf("libgone.so.3 needed by %q, want libmid.so.1", m.NeededBy)
				}
			}
		})
	}
	if _, err := (ldpath.Search{}).Resolve(filepath.Join(root, "nothing.so")); err == nil {
		t.Error("resolving a missing file: no error")
	}
}

func TestSplitPath(t *testing.T) {
	if got := ldpath.SplitPath(" /a::/b;/c: "); !slices.Equal(got, []string{"/a", "/b", "/c"}) {
		t.Errorf("SplitPath = %q", got)
	}
}
