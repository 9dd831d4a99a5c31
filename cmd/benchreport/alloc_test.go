package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseAllocTop(t *testing.T) {
	const head = "File: svc\nType: alloc_space\nShowing nodes accounting for 70MB, 95.87% of 72.50MB total\n      flat  flat%   sum%        cum   cum%\n"
	tests := []struct {
		name    string
		text    string
		want    *AllocProfile
		wantErr string
	}{
		{
			name: "sites with their own bytes, in order",
			text: head +
				"   44.01MB 60.52% 60.52%    44.01MB 60.52%  github.com/svc-dev/svc/core/tensor.MakeSlice[go.shape.int64]\n" +
				"  512.50kB  0.69% 61.21%     1.50MB  2.07%  slices.Grow[go.shape.[]uint8,go.shape.uint8] (inline)\n" +
				"         0     0% 61.21%    60.00MB 82.00%  github.com/gorilla/mux.(*Router).ServeHTTP\n" +
				"      100B     0% 61.21%       100B     0%  runtime.malg\n",
			want: &AllocProfile{Total: 72.5 * (1 << 20), Sites: []AllocSite{
				{"github.com/svc-dev/svc/core/tensor.MakeSlice[go.shape.int64]", 44.01 * (1 << 20)},
				{"slices.Grow[go.shape.[]uint8,go.shape.uint8]", 512.5 * (1 << 10)},
				{"runtime.malg", 100},
			}},
		},
		{name: "gigabytes", text: strings.Replace(head, "72.50MB", "1.5GB", 1), want: &AllocProfile{Total: 1.5 * (1 << 30)}},
		{name: "no header", text: "      flat  flat%   sum%        cum   cum%\n", wantErr: "no \"Showing nodes"},
		{name: "no table", text: "Showing nodes accounting for 1MB, 100% of 1MB total\n", wantErr: "no table of nodes"},
		{name: "unknown unit", text: head + "   44.01Mi 60.52% 60.52%    44.01MB 60.52%  f\n", wantErr: `pprof size "44.01Mi": unknown unit`},
		{name: "bad number", text: head + "   4x.0MB 60.52% 60.52%    44.01MB 60.52%  f\n", wantErr: `pprof size "4x.0MB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAllocTop(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestShortFunc(t *testing.T) {
	tests := []struct{ in, want string }{
		{"github.com/svc-dev/svc/core/tensor/tensorjson.(*decoder).result", "tensorjson.(*decoder).result"},
		{"github.com/svc-dev/svc/core.(*Pool).run", "core.(*Pool).run"},
		{"slices.Grow[go.shape.[]uint8,go.shape.uint8]", "slices.Grow[go.shape.[]uint8,go.shape.uint8]"},
		{"github.com/gorilla/mux.(*Router).ServeHTTP", "mux.(*Router).ServeHTTP"},
	}
	for _, tt := range tests {
		if got := shortFunc(tt.in); got != tt.want {
			t.Errorf("shortFunc(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestReadMemTypeAlloc: a type's allocation profile is read with its run
// when the file is there, left out when it is not, and a file that does
// not parse is an error that names it.
func TestReadMemTypeAlloc(t *testing.T) {
	run, rss := readFixture(t, "load", "mem-type-str.json"), readFixture(t, "load", "mem-type-str.rss.json")
	for _, tt := range []struct {
		name, alloc string // alloc "": no file
		sites       int    // sites read; -1: no profile
		err         string
	}{
		{"read", readFixture(t, "load", "mem-type-str.alloc.txt"), 5, ""},
		{"missing", "", -1, ""},
		{"malformed", "File: svc\nType: alloc_space\n", 0, "mem-type-str.alloc.txt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := fixtureDir(t, map[string]string{"mem-type-str.json": run, "mem-type-str.rss.json": rss, "mem-type-str.alloc.txt": tt.alloc})
			got, err := readMemLoad(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("readMemLoad: %v; want an error naming %s", err, tt.err)
				}
				return
			}
			if err != nil || len(got.Types) != 1 {
				t.Fatalf("readMemLoad = %+v, %v; want the string run", got, err)
			}
			sites := -1
			if a := got.Types[0].Alloc; a != nil {
				sites = len(a.Sites)
			}
			if sites != tt.sites {
				t.Fatalf("%d sites read, want %d", sites, tt.sites)
			}
		})
	}
}
