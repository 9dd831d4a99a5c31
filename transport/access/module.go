package access

import (
	"fmt"
	"net/http"
	"os"

	"github.com/rs/cors"
	"go.uber.org/fx"

	"github.com/svc-dev/svc/core/config"
	"github.com/svc-dev/svc/transport"
)

// Module provides the HTTP server's access-control middleware from the
// configuration's access section. Keys are read at start-up, before the
// model loads: a missing file, or no keys where keys were asked for, fails
// start-up.
var Module = fx.Module("access",
	fx.Provide(func(a config.Access) (transport.AccessControl, error) {
		return New(a, os.LookupEnv)
	}),
	// Read the keys at construction, whoever asks for the middleware.
	fx.Invoke(func(transport.AccessControl) {}),
)

// CORS lists: the request headers a browser may send, and the response
// headers its scripts may read.
var (
	AllowedHeaders = []string{"Authorization", "Content-Type", "Inference-Header-Content-Length", transport.RequestIDHeader}
	ExposedHeaders = []string{transport.RequestIDHeader, "Inference-Header-Content-Length"}
	AllowedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost}
)

// New builds the middleware for a: CORS (outermost, so that a preflight
// needs no key and a 401 carries the CORS headers a browser needs to read
// it), then the key check. It returns nil when both are off. lookupEnv
// reads the environment (os.LookupEnv).
func New(a config.Access, lookupEnv func(string) (string, bool)) (transport.AccessControl, error) {
	keys, err := LoadKeys(a, lookupEnv)
	if err != nil {
		return nil, err
	}
	var mw []transport.Middleware
	if len(a.CORS.AllowedOrigins) > 0 {
		c := cors.New(cors.Options{
			AllowedOrigins:   a.CORS.AllowedOrigins,
			AllowedMethods:   AllowedMethods,
			AllowedHeaders:   AllowedHeaders,
			ExposedHeaders:   ExposedHeaders,
			AllowCredentials: false,
			MaxAge:           int(a.CORS.MaxAge.Std().Seconds()),
		})
		mw = append(mw, c.Handler)
	}
	if keys != nil {
		mw = append(mw, RequireKey(keys))
	}
	if len(mw) == 0 {
		return nil, nil
	}
	return func(h http.Handler) http.Handler { return transport.Chain(h, mw...) }, nil
}

// LoadKeys gathers the keys of a's file and environment variable; nil when
// neither is configured. Errors name the setting and never hold a key.
func LoadKeys(a config.Access, lookupEnv func(string) (string, bool)) (*Keys, error) {
	if a.APIKeysFile == "" && a.APIKeysEnv == "" {
		return nil, nil
	}
	var all []string
	if a.APIKeysFile != "" {
		ks, err := ReadKeysFile(a.APIKeysFile)
		if err != nil {
			return nil, fmt.Errorf("access.api_keys_file: %w", err)
		}
		all = append(all, ks...)
	}
	if a.APIKeysEnv != "" {
		v, _ := lookupEnv(a.APIKeysEnv)
		all = append(all, ParseKeysEnv(v)...)
	}
	keys := NewKeys(all)
	if keys.Len() == 0 {
		var from []string
		if a.APIKeysFile != "" {
			from = append(from, "file "+a.APIKeysFile)
		}
		if a.APIKeysEnv != "" {
			from = append(from, "environment variable "+a.APIKeysEnv)
		}
		return nil, fmt.Errorf("access: %w in %s", ErrNoKeys, joinOr(from))
	}
	return keys, nil
}

func joinOr(s []string) string {
	if len(s) == 2 {
		return s[0] + " or " + s[1]
	}
	return s[0]
}
