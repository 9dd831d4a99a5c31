package bench_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/svc-dev/svc/cmd/internal/bench"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestCheckURL(t *testing.T) {
	tests := []struct {
		give        string
		allowRemote bool
		want        string
		wantRemote  bool
		wantErr     string
	}{
		{give: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{give: "http://127.0.0.1:8080/", want: "http://127.0.0.1:8080"},
		{give: "http://localhost:8080", want: "http://localhost:8080"},
		{give: "http://LOCALHOST.:8080", want: "http://LOCALHOST.:8080"},
		{give: "http://svc.localhost:8080", want: "http://svc.localhost:8080"},
		{give: "http://127.3.2.1", want: "http://127.3.2.1"},
		{give: "http://[::1]:8080", want: "http://[::1]:8080"},
		{give: "https://127.0.0.1:8443/prefix/", want: "https://127.0.0.1:8443/prefix"},
		{give: "http://10.0.0.7:8080", wantRemote: true},
		{give: "http://0.0.0.0:8080", wantRemote: true},
		{give: "http://[2001:db8::1]:8080", wantRemote: true},
		{give: "http://example.com", wantRemote: true},
		{give: "http://127.0.0.1.example.com", wantRemote: true},
		{give: "http://10.0.0.7:8080", allowRemote: true, want: "http://10.0.0.7:8080"},
		{give: "http://example.com", allowRemote: true, want: "http://example.com"},
		{give: "ftp://127.0.0.1", wantErr: "want http://HOST:PORT"},
		{give: "127.0.0.1:8080", wantErr: "invalid --url"},
		{give: "http://", wantErr: "no host"},
		{give: "http://127.0.0.1:8080/?x=1", wantErr: "without user, query or fragment"},
		{give: "http://u:p@127.0.0.1:8080", wantErr: "without user, query or fragment"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			u, err := bench.CheckURL(tt.give, tt.allowRemote)
			switch {
			case tt.wantRemote:
				if !errors.Is(err, bench.ErrRemote) || !contains(err.Error(), "--allow-remote") {
					t.Fatalf("err = %v, want a refusal naming --allow-remote", err)
				}
			case tt.wantErr != "":
				if err == nil || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
			default:
				if err != nil || u.String() != tt.want {
					t.Fatalf("= %v, %v; want %s", u, err, tt.want)
				}
			}
		})
	}
}
