package main

import (
	"fmt"
	"regexp"
)

// servedNamePattern is what --name accepts: a name that is one path segment
// of /v2/models/NAME without escaping, as Kubernetes and KServe object names
// are.
var servedNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// maxServedName bounds --name (a Kubernetes object name is at most 253).
const maxServedName = 253

// checkServedName reports why name cannot be a served model name.
func checkServedName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("is empty")
	case len(name) > maxServedName:
		return fmt.Errorf("is %d characters long; at most %d are allowed", len(name), maxServedName)
	case !servedNamePattern.MatchString(name):
		return fmt.Errorf("%q: use letters, digits, '.', '_' and '-', starting with a letter or digit", name)
	}
	return nil
}
