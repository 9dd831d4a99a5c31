package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// AllocProfile is the top of a Go allocation profile of a server's life
// (go tool pprof -sample_index=alloc_space -top): the bytes allocated in
// all, and the sites that allocated the most by their own (flat) bytes,
// largest first.
type AllocProfile struct {
	Total float64
	Sites []AllocSite
}

// AllocSite is one function of the profile and the bytes it allocated.
type AllocSite struct {
	Name  string
	Bytes float64
}

var allocHeader = regexp.MustCompile(`Showing nodes accounting for \S+, \S+ of (\S+) total`)

// parseAllocTop reads go tool pprof -sample_index=alloc_space -top output.
func parseAllocTop(s string) (*AllocProfile, error) {
	m := allocHeader.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("no \"Showing nodes accounting for …\" line")
	}
	total, err := parsePprofBytes(m[1])
	if err != nil {
		return nil, err
	}
	p := &AllocProfile{Total: total}
	rows, err := pprofRows(s, func(f []string) error {
		b, err := parsePprofBytes(f[0])
		if err != nil {
			return err
		}
		if b > 0 {
			p.Sites = append(p.Sites, AllocSite{Name: strings.TrimSuffix(strings.Join(f[5:], " "), " (inline)"), Bytes: b})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !rows {
		return nil, fmt.Errorf("no table of nodes")
	}
	return p, nil
}

// shortFunc drops the module path from a function name.
func shortFunc(name string) string {
	name = strings.TrimPrefix(name, "github.com/svc-dev/svc/")
	if i := strings.LastIndex(name, "/"); i >= 0 && !strings.Contains(name[:i], "(") {
		name = name[i+1:]
	}
	return name
}

// writeAllocProfile renders a type's allocation profile: what was
// allocated per request, in all and at the sites that allocated the most.
func writeAllocProfile(w io.Writer, x MemType) {
	p := x.Alloc
	reqs := x.requests()
	body := float64(x.BodyBytes())
	if p == nil || reqs <= 0 || body <= 0 {
		return
	}
	per := p.Total / float64(reqs)
	fmt.Fprintf(w, "**Allocation profile: %s.** Go's allocation profile of that run's server (`SVC_MEMPROFILE`; `go tool pprof -sample_index=alloc_space`): %s allocated over its life, start-up included, for %d requests: %s per request, %.1f× its body. By site (own bytes; tensor.MakeSlice allocates once for each buffer the tensor pools make, then the buffers are reused: its bytes are the pools' size, not a cost per request):\n\n",
		typeTitle(x.Type), mbytes(p.Total), reqs, mbytes(per), per/body)
	fmt.Fprintln(w, "| site | allocated | per request | × body | share |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|")
	for i, s := range p.Sites {
		if i == 6 {
			break
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %.2f× | %.0f %% |\n", shortFunc(s.Name), mbytes(s.Bytes), mbytes(s.Bytes/float64(reqs)), s.Bytes/float64(reqs)/body, 100*s.Bytes/p.Total)
	}
	fmt.Fprintln(w)
}

func mbytes(b float64) string { return fmt.Sprintf("%.2f MiB", b/(1<<20)) }
