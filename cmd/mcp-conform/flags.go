package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("empty value")
	}
	*l = append(*l, v)
	return nil
}

// bearerTokens is the repeatable NAME=TOKEN flag.
type bearerTokens struct {
	byToken map[string]string
}

func (b *bearerTokens) String() string {
	if b == nil {
		return ""
	}
	names := make([]string, 0, len(b.byToken))
	for _, n := range b.byToken {
		names = append(names, n+"=***")
	}
	return strings.Join(names, ",")
}

func (b *bearerTokens) Set(v string) error {
	name, token, ok := strings.Cut(v, "=")
	if !ok || name == "" || token == "" {
		return fmt.Errorf("want NAME=TOKEN, got %q", v)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return fmt.Errorf("token for %q contains whitespace", name)
	}
	if b.byToken == nil {
		b.byToken = map[string]string{}
	}
	if other, dup := b.byToken[token]; dup && other != name {
		return fmt.Errorf("token for %q is already used by %q", name, other)
	}
	b.byToken[token] = name
	return nil
}

// parallelFlag checks --parallel: the harness takes 0 to mean its default,
// but on the command line 0 is a mistake.
func parallelFlag(n int) error {
	if n < 1 {
		return usageError{fmt.Errorf("--parallel must be 1 or more, got %d", n)}
	}
	return nil
}

// originList is the repeatable --allowed-origin flag: each value must be an
// origin, scheme://host[:port], as browsers send it.
type originList []string

func (l *originList) String() string { return strings.Join(*l, ",") }

func (l *originList) Set(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("want an origin such as https://app.example or http://localhost:3000, got %q", v)
	}
	*l = append(*l, v)
	return nil
}

// defaultSuggestion is where 'server' writes a suggested target profile;
// when reports/ does not exist it says so instead.
const defaultSuggestion = "reports/profile.suggested.yaml"

// explicitDir checks that the directory of a file flag the user set
// exists, so a typo does not cost a whole run.
func explicitDir(fs *flag.FlagSet, name, path string) error {
	if !flagSet(fs, name) || path == "" {
		return nil
	}
	if dir := filepath.Dir(path); dir != "." {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usageError{fmt.Errorf("--%s: directory %s does not exist", name, dir)}
		}
	}
	return nil
}

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
