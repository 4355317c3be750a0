package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/harness"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/target"
)

// The files init writes, relative to --dir (the server's repository).
const (
	initProfile  = "mcp-conform.yaml"
	initExpected = "mcp-conform-expected-failures.txt"
	initWorkflow = ".github/workflows/mcp-conform.yml"
)

const initUsage = `usage: mcp-conform init (--url URL | --server-cmd CMD [--url URL]) [--dir DIR] [--force]
                        [--bearer-token TOKEN] [--checks SET] [--strict] [--protocol-version V] [--focus REGEX] [--action OWNER/REPO@REF]

Writes what a server's repository needs to run mcp-conform in CI, into
--dir: a target profile to edit, suggested from the server's tools/list
(` + initProfile + `); a baseline of the checks the server fails today,
each with why, from a first run with that profile (` + initExpected + `);
and a GitHub Actions workflow that runs the mcp-conform action with both
(` + initWorkflow + `). Then
  mcp-conform server --url URL --target-profile ` + initProfile + ` --expected-failures ` + initExpected + `
passes on the same server, and fails on a new failure (or on a listed
check that passes: delete its line). An existing file is never
overwritten without --force, and no file is written through a symbolic
link, even with --force. With --bearer-token the profile holds the
token, and only its owner may read it (mode 0600). With --server-cmd the
harness starts the server on a free port ({port} in the command and in
--url, by default http://127.0.0.1:{port}/mcp), as the workflow's action
will.

Exit status: 0 files written, 1 the first run failed to complete,
2 usage or setup error.

flags:`

func runInit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o harness.Options
	fs.StringVar(&o.URL, "url", "", "MCP endpoint of the server (with --server-cmd: default http://127.0.0.1:{port}/mcp)")
	fs.StringVar(&o.ServerCmd, "server-cmd", "", "command that starts the server, with {port} for a free port")
	fs.DurationVar(&o.ServerStartTimeout, "server-start-timeout", 30*time.Second, "how long a --server-cmd server may take to answer")
	dir := fs.String("dir", ".", "the server's repository, where the files go")
	force := fs.Bool("force", false, "overwrite files that exist")
	checks := fs.String("checks", string(catalogue.CheckSetAll), "the check set to run: spec, resilience or all")
	renameFlag(fs, "profile", "checks")
	fs.BoolVar(&o.Strict, "strict", false, "failed SHOULD checks fail the run, so they go into the baseline too")
	fs.StringVar(&o.ProtocolVersion, "protocol-version", harness.DiscoverRevisions, "protocol revision to check, as in mcp-conform server (default: those the server speaks)")
	fs.StringVar(&o.Focus, "focus", "", "run only the checks whose name matches this regexp, here and in the workflow")
	token := fs.String("bearer-token", "", "send Authorization: Bearer TOKEN, for a server that needs one (it goes into the profile, mode 0600: use a test token)")
	action := fs.String("action", defaultAction(), "the mcp-conform action the workflow uses, OWNER/REPO@REF: where this repository is published")
	fs.Usage = func() {
		fmt.Fprintln(stderr, initUsage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	switch {
	case o.URL == "" && o.ServerCmd == "":
		return usageError(errors.New("want --url URL, or --server-cmd CMD to start the server"))
	case o.URL == "":
		o.URL = "http://127.0.0.1:{port}/mcp"
	}
	if !strings.Contains(*action, "/") || !strings.Contains(*action, "@") {
		return usageError(fmt.Errorf("--action must look like OWNER/REPO@REF, got %q", *action))
	}
	if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		return usageError(fmt.Errorf("--dir: %s is not a directory", *dir))
	}
	paths := map[string]string{}
	var exist []string
	for _, f := range []string{initProfile, initExpected, initWorkflow} {
		paths[f] = filepath.Join(*dir, filepath.FromSlash(f))
		switch err := initTarget(*dir, f); {
		case errors.Is(err, iofs.ErrExist):
			exist = append(exist, paths[f])
		case err != nil:
			return err
		}
	}
	if len(exist) > 0 && !*force {
		return usageError(fmt.Errorf("%s %s: nothing written (--force overwrites)", strings.Join(exist, ", "), plural(len(exist), "exists", "exist")))
	}
	o.Checks = catalogue.CheckSet(*checks)
	o.Parallel = harness.DefaultParallel(catalogue.Server)
	o.Timeout = harness.DefaultTimeout

	w := &initWriter{dir: *dir, force: *force}
	defer w.undo()
	text, err := suggestFor(ctx, o, *token)
	if err != nil {
		return verdict(nil, err)
	}
	if err := w.write(initProfile, withToken(text, *token), profileMode(*token)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "mcp-conform init: a first run with %s, to find what the server fails today\n", paths[initProfile])
	o.TargetProfile = paths[initProfile]
	// The run rewrites the profile with what each missing key would enable.
	o.SuggestProfile = paths[initProfile]
	run, err := harness.Run(ctx, o, stdout, stderr)
	if se := new(harness.SetupError); errors.As(err, &se) {
		return usageError(fmt.Errorf("the first run: %w", se))
	} else if err != nil {
		return fmt.Errorf("the first run: %w", err)
	}
	if err := finishProfile(paths[initProfile], run.Target, o.URL, *token); err != nil {
		return err
	}
	failed := baseline(run, o, time.Now())
	if err := w.write(initExpected, failed, 0o644); err != nil {
		return err
	}
	if err := w.write(initWorkflow, workflow(o, *action), 0o644); err != nil {
		return err
	}
	w.keep()
	n, blocked := run.Counts[report.Fail], run.Counts[report.Blocked]
	secret := ""
	if *token != "" {
		secret = "; it holds the --bearer-token, so it is readable by you alone: mode 0600"
	}
	fmt.Fprintf(stdout, "\nwrote %s (edit it: each key you fill in enables checks%s)\n", paths[initProfile], secret)
	fmt.Fprintf(stdout, "wrote %s (%d %s the server fails today", paths[initExpected], n, plural(n, "check", "checks"))
	if blocked > 0 {
		fmt.Fprintf(stdout, ", and %d blocked by them", blocked)
	}
	fmt.Fprintln(stdout, ")")
	fmt.Fprintf(stdout, "wrote %s (it uses %s: change that if your copy of mcp-conform is published elsewhere)\n", paths[initWorkflow], *action)
	if i := run.Counts[report.Inconclusive]; i > 0 {
		fmt.Fprintf(stdout, "note: %d %s inconclusive in this run; they are not in the baseline\n", i, plural(i, "check was", "checks were"))
	}
	fmt.Fprintf(stdout, "\nNext: mcp-conform server %s--target-profile %s --expected-failures %s\n",
		targetFlags(o), shellQuote(paths[initProfile]), shellQuote(paths[initExpected]))
	return nil
}

// suggestFor starts the server if init was given its command, and returns
// the target profile suggested from its tools.
func suggestFor(ctx context.Context, o harness.Options, token string) (string, error) {
	url := o.URL
	if o.ServerCmd != "" {
		p, err := harness.StartProcess(ctx, o.ServerCmd, o.URL, o.ServerStartTimeout)
		if err != nil {
			return "", &harness.SetupError{Err: err}
		}
		defer p.Close()
		url = p.URL()
	}
	cfg := &target.Profile{}
	if token != "" {
		cfg.Headers = map[string]string{"Authorization": "Bearer " + token}
	}
	text, err := harness.SuggestProfile(ctx, url, o.ProtocolVersion, cfg)
	// The server's port is the first run's; the profile is for every run.
	return withURL(text, url, o.URL), err
}

// withURL puts url for runURL in the first line of a suggested profile,
// which names the server; no other line is touched.
func withURL(text, runURL, url string) string {
	first, rest, _ := strings.Cut(text, "\n")
	return strings.Replace(first, harness.QuoteYAML(runURL), harness.QuoteYAML(url), 1) + "\n" + rest
}

// profileMode is the mode of init's profile: with a token in it, readable
// by its owner alone.
func profileMode(token string) iofs.FileMode {
	if token != "" {
		return 0o600
	}
	return 0o644
}

// tokenNote starts the headers block init adds for --bearer-token.
const tokenNote = "# The bearer token given to mcp-conform init (--bearer-token)"

// withToken adds the token to a suggested profile as a header of every
// request (its own headers and principals blocks are commented out).
func withToken(text, token string) string {
	// At the start of a line: a tool name is always quoted.
	if token == "" || strings.HasPrefix(text, tokenNote) || strings.Contains(text, "\n"+tokenNote) {
		return text
	}
	return text + "\n" + tokenNote + `.
# Declaring two principals instead (above) also enables RECREATE-OWNER-ONLY
# and RESUME-TOKEN-OWNER.
headers:
  Authorization: ` + harness.QuoteYAML("Bearer "+token) + "\n"
}

// finishProfile puts back what the first run's rewrite of the profile
// (with what each missing key would enable) leaves out: the server's URL
// as given, and the token.
func finishProfile(path, runURL, url, token string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := withToken(withURL(string(data), runURL, url), token)
	return writeError(harness.WriteFile(path, []byte(text), profileMode(token), true))
}

// initTarget checks the path of rel, one of init's files, under dir: no
// symbolic link on the way (a link committed to the repository, even a
// dangling one, would put the file anywhere) and nothing but directories
// above it. It is iofs.ErrExist for a file that exists.
func initTarget(dir, rel string) error {
	p := dir
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, iofs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case st.Mode()&iofs.ModeSymlink != 0:
			return usageError(fmt.Errorf("%s is a symbolic link: init writes nothing through one (remove it, or choose another --dir)", p))
		case i < len(parts)-1 && !st.IsDir():
			return usageError(fmt.Errorf("%s is not a directory", p))
		}
	}
	return iofs.ErrExist
}

// initWriter writes init's files under dir, and removes those it created
// when init does not finish, so that running it again needs no --force.
type initWriter struct {
	dir     string
	force   bool
	created []string
}

func (w *initWriter) write(rel, text string, perm iofs.FileMode) error {
	path := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := initTarget(w.dir, rel); err != nil && !errors.Is(err, iofs.ErrExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := within(w.dir, filepath.Dir(path)); err != nil {
		return err
	}
	_, err := os.Lstat(path)
	created := errors.Is(err, iofs.ErrNotExist)
	if err := harness.WriteFile(path, []byte(text), perm, w.force); err != nil {
		return writeError(err)
	}
	if created {
		w.created = append(w.created, path)
	}
	return nil
}

// within refuses a directory that, resolved, is not dir or below it.
func within(dir, sub string) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	resolved, err := filepath.EvalSymlinks(sub)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(root, resolved); err != nil || !filepath.IsLocal(rel) {
		return usageError(fmt.Errorf("%s leads out of %s: init writes nothing there", sub, dir))
	}
	return nil
}

func (w *initWriter) keep() { w.created = nil }

func (w *initWriter) undo() {
	for _, p := range w.created {
		os.Remove(p)
	}
}

// baseline is the expected-failures file: the checks that failed the run,
// each with the first line of why, and those their failures blocked. A
// blocked check is listed too: once its root is an expected failure, its
// own failure no longer counts as the root's (a root blocks only checks
// whose failure is no more severe than its own), so unlisted it would fail
// the next run.
func baseline(run *report.Run, o harness.Options, now time.Time) string {
	var b strings.Builder
	server := "the server at " + o.URL
	if o.ServerCmd != "" {
		server = "the server '" + o.ServerCmd + "' starts"
	}
	fmt.Fprintf(&b, "# The checks %s fails, found by mcp-conform init\n# on %s", server, now.UTC().Format(time.DateOnly))
	fmt.Fprintf(&b, " (check set %s, protocol %s%s), each with the first line of why.\n", o.Checks, run.ProtocolVersion, map[bool]string{true: ", strict"}[o.Strict])
	b.WriteString("# A listed check may fail; one that passes fails the run: when you fix\n")
	b.WriteString("# one, delete its line. A failure not listed here fails the run.\n\n")
	n := 0
	for _, c := range report.RootsFirst(run.Checks) {
		if c.Verdict != report.Fail && c.Verdict != report.Blocked {
			continue
		}
		n++
		why := strings.Join(strings.Fields(oneLine(c.Message)), " ")
		if c.Verdict == report.Blocked {
			why = "blocked by " + strings.Join(c.BlockedBy, ", ")
		}
		if r := []rune(why); len(r) > 200 {
			why = string(r[:199]) + "…"
		}
		fmt.Fprintf(&b, "%-28s # %s: %s\n", c.Name(), c.Level, why)
	}
	if n == 0 {
		b.WriteString("# None: every required check passed.\n")
	}
	return b.String()
}

// oneLine is the first non-empty line of s.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// targetFlags are the server flags that reach the target, for the
// command init suggests next.
func targetFlags(o harness.Options) string {
	s := ""
	if o.ServerCmd != "" {
		s += "--server-cmd " + shellQuote(o.ServerCmd) + " "
	}
	s += "--url " + shellQuote(o.URL) + " "
	if o.Checks != catalogue.CheckSetAll {
		s += "--checks " + string(o.Checks) + " "
	}
	if o.Strict {
		s += "--strict "
	}
	if o.ProtocolVersion != harness.DiscoverRevisions {
		s += "--protocol-version " + o.ProtocolVersion + " "
	}
	if o.Focus != "" {
		s += "--focus " + shellQuote(o.Focus) + " "
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
