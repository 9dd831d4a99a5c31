package registry

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultRevision is the branch pulled when a reference names none.
const DefaultRevision = "main"

// Ref names a Hugging Face Hub repository and, optionally, a revision:
// ORG/NAME[@REVISION]. A revision is a branch, a tag or a commit hash.
type Ref struct {
	// Repo is "org/name".
	Repo string
	// Revision is "" for the default branch.
	Revision string
}

// ParseRef parses ORG/NAME[@REVISION].
func ParseRef(s string) (Ref, error) {
	repo, rev, hasRev := strings.Cut(s, "@")
	if err := validRepo(repo); err != nil {
		return Ref{}, fmt.Errorf("%q is not a model reference: %w; expected ORG/NAME[@REVISION]", s, err)
	}
	if hasRev {
		if err := validRevision(rev); err != nil {
			return Ref{}, fmt.Errorf("%q is not a model reference: %w", s, err)
		}
	}
	return Ref{Repo: repo, Revision: rev}, nil
}

func (r Ref) String() string {
	if r.Revision == "" {
		return r.Repo
	}
	return r.Repo + "@" + r.Revision
}

// revisionOrDefault is the revision pulled: the one named, else main.
func (r Ref) revisionOrDefault() string {
	if r.Revision == "" {
		return DefaultRevision
	}
	return r.Revision
}

// validRepo checks a repository id against the Hub's rules: ORG/NAME, each
// part of letters, digits, '-', '_' and '.', neither starting nor ending
// with '-' or '.', without "--" or "..", at most 96 characters.
func validRepo(repo string) error {
	org, name, ok := strings.Cut(repo, "/")
	if !ok || strings.Contains(name, "/") {
		return fmt.Errorf("the repository must be ORG/NAME")
	}
	for _, part := range []string{org, name} {
		if part == "" || len(part) > 96 {
			return fmt.Errorf("the repository must be ORG/NAME with parts of 1 to 96 characters")
		}
		for _, c := range part {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				return fmt.Errorf("%q has a character other than letters, digits, '-', '_' and '.'", part)
			}
		}
		if strings.Contains(part, "--") || strings.Contains(part, "..") {
			return fmt.Errorf("%q contains \"--\" or \"..\"", part)
		}
		if strings.ContainsAny(part[:1], "-.") || strings.ContainsAny(part[len(part)-1:], "-.") {
			return fmt.Errorf("%q starts or ends with '-' or '.'", part)
		}
	}
	return nil
}

// validRevision accepts git branch, tag and commit names: printable, no
// spaces, no "..", not starting or ending with '/'.
func validRevision(rev string) error {
	if rev == "" {
		return fmt.Errorf("the revision after '@' is empty")
	}
	if len(rev) > 255 || strings.Contains(rev, "..") || strings.HasPrefix(rev, "/") || strings.HasSuffix(rev, "/") {
		return fmt.Errorf("revision %q is not a valid branch, tag or commit", rev)
	}
	for _, c := range rev {
		if c <= ' ' || c == 0x7f || strings.ContainsRune(`\~^:?*[`, c) {
			return fmt.Errorf("revision %q is not a valid branch, tag or commit", rev)
		}
	}
	return nil
}

// repoKey names a repository's directory: "org--name" (the Hub forbids
// "--" inside names, so the mapping is one to one).
func repoKey(repo string) string { return strings.Replace(repo, "/", "--", 1) }

// refFile names a revision's file under refs/: branch names may hold '/'.
func refFile(rev string) string { return url.PathEscape(rev) }

// isHex reports whether s is a lowercase hexadecimal string.
func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isCommit reports whether s is a full git commit hash.
func isCommit(s string) bool { return len(s) == 40 && isHex(s) }

// ShortCommit is the 7-character form of a commit hash, as the Hub shows.
func ShortCommit(commit string) string {
	if len(commit) > 7 {
		return commit[:7]
	}
	return commit
}
