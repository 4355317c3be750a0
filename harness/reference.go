package harness

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/mcp-conform/mcp-conform/target"
)

// ReferenceProfile is the built-in target profile of the embedded
// reference server: what server.ShortTimings configures, declared.
func ReferenceProfile() *target.Profile {
	c := server.ShortTimings()
	writeTimeout := c.WriteTimeout
	if writeTimeout == 0 {
		writeTimeout = server.DefaultWriteTimeout
	}
	return &target.Profile{
		Tools: target.Tools{
			Notifying: &target.NotifyingTool{
				Tool:          target.Tool{Name: "long_operation", Arguments: map[string]any{"steps": 5, "interval_ms": 200}},
				Method:        target.DefaultNotificationMethod,
				Notifications: 5,
				Interval:      target.Duration(200 * time.Millisecond),
			},
			Stateful: &target.Tool{Name: "counter_increment"},
			Resumable: &target.ResumableTool{
				Tool: target.Tool{Name: "job_start", Arguments: map[string]any{"steps": 1, "interval_ms": 0}},
				Poll: "job_get",
			},
			Task: &target.TaskTool{
				Tool:     target.Tool{Name: "long_operation", Arguments: map[string]any{"steps": 5, "interval_ms": 200}},
				Duration: target.Duration(time.Second),
			},
			Stepping: &target.SteppingTool{
				Tool:     target.Tool{Name: "tally_steps", Arguments: map[string]any{"tally": target.Key, "steps": 40, "interval_ms": 50}},
				Read:     target.Tool{Name: "tally_get", Arguments: map[string]any{"tally": target.Key}},
				Steps:    40,
				Interval: target.Duration(50 * time.Millisecond),
			},
		},
		Listen: &target.Listen{
			Notifications: map[string]any{"resourceSubscriptions": []any{"tally://" + target.Key}},
			Trigger:       target.Tool{Name: "tally_steps", Arguments: map[string]any{"tally": target.Key, "steps": 1, "interval_ms": 0}},
			Method:        "notifications/resources/updated",
		},
		Timings: target.Timings{
			IdleThreshold:        target.Duration(c.IdleThreshold),
			GracePeriod:          target.Duration(c.GracePeriod),
			ReaperInterval:       target.Duration(c.ReaperInterval),
			EventMaxAge:          target.Duration(c.EventMaxAge),
			EventCleanupInterval: target.Duration(c.EventCleanupInterval),
			WriteTimeout:         target.Duration(writeTimeout),
			KeepAlive:            target.Duration(c.SSEKeepAlive),
		},
		Principals:   []target.Principal{{Name: "alice", Token: "alice-token", RefreshedToken: "alice-token-refreshed"}, {Name: "bob", Token: "bob-token"}},
		Origins:      target.Origins{Allowed: "http://localhost:3000", Disallowed: "https://evil.example"},
		RecoveryHint: true,
	}
}

// referenceTarget is the reference server run in-process on a loopback
// port with short timings.
type referenceTarget struct{ *server.Host }

// startReference starts the embedded reference server on a free port.
func startReference(log io.Writer) (*referenceTarget, error) {
	h, err := StartReference(server.ShortTimings(), log)
	if err != nil {
		return nil, err
	}
	return &referenceTarget{h}, nil
}

// StartReference starts a reference server configured by cfg on a free
// loopback port, logging warnings to log.
func StartReference(cfg server.Config, log io.Writer) (*server.Host, error) {
	cfg.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("embedded reference server: %w", err)
	}
	h, err := server.NewHost(cfg, ln, server.HostOptions{})
	if err != nil {
		ln.Close()
		return nil, err
	}
	return h, nil
}

// Restart is F-RESTART for the embedded server: every session is lost.
func (rt *referenceTarget) Restart(context.Context) error { return rt.Host.Restart() }
