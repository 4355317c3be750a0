package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"text/tabwriter"

	"github.com/mcp-conform/mcp-conform/fixtures/hostile"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/reference/cmdline"
)

func runFixture(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fixture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address; port 0 picks a free port")
	list := fs.Bool("list", false, "list the fixtures and the checks each must fail")
	storeURL := fs.String("store", "", "Redis of a replica fixture (redis://HOST:PORT/DB): run this command once per replica, same --store")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: mcp-conform fixture [--addr ADDR] NAME
       mcp-conform fixture --addr ADDR --store redis://HOST:PORT/DB REPLICA-FIXTURE
       mcp-conform fixture --list

Serves a deliberately broken reference server (short timings, tokens
alice-token and bob-token) at http://ADDR/mcp, to see a check fail. A
replica fixture is one replica of a broken replicated deployment: start
two on the same --store and check them with --url and --replica-url.

flags:`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *list {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FIXTURE\tBREAKS\tWHAT IS BROKEN")
		for _, f := range servers.All() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, strings.Join(f.Breaks, ","), f.About)
		}
		for _, f := range servers.ReplicaFixtures() {
			if len(f.Breaks) > 0 {
				fmt.Fprintf(tw, "%s (--store)\t%s\t%s\n", f.Name, strings.Join(f.Breaks, ","), f.About)
			}
		}
		h := hostile.Fixture()
		fmt.Fprintf(tw, "%s\t-\t%s\n", h.Name, h.About)
		return tw.Flush()
	}
	if fs.NArg() != 1 {
		return usageError(errors.New("want exactly one fixture name (see --list)"))
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := servers.Config()
	cfg.Logger = log
	if rf, err := servers.LookupReplicas(fs.Arg(0)); err == nil {
		if !strings.HasPrefix(*storeURL, "redis://") {
			return usageError(fmt.Errorf("replica fixture %s needs --store redis://HOST:PORT/DB", rf.Name))
		}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		r, err := rf.Start(cfg, *storeURL, ln)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--store: %w", err)
		}
		defer r.Close()
		return cmdline.UntilDone(ctx, r.Host, stdout, log)
	}
	if *storeURL != "" {
		return usageError(errors.New("--store is for replica fixtures only (see --list)"))
	}
	f, err := servers.Lookup(fs.Arg(0))
	if fs.Arg(0) == hostile.Fixture().Name {
		f, err = hostile.Fixture(), nil
	}
	if err != nil {
		return usageError(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	h, err := f.Host(cfg, ln)
	if err != nil {
		ln.Close()
		return err
	}
	return cmdline.UntilDone(ctx, h, stdout, log)
}
