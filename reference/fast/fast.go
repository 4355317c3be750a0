// Package fast holds short timings for the reference server and the target
// profile that declares them, so that the grace and eviction checks take
// seconds. The harness uses them for its embedded reference server, and the
// broken fixtures start from them.
package fast

import (
	"time"

	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/mcp-conform/mcp-conform/target"
)

// Config returns a reference server configuration with short timings,
// recovery hints on, and two bearer principals (alice, bob).
func Config() server.Config {
	return server.Config{
		ReaperInterval:       200 * time.Millisecond,
		IdleThreshold:        time.Second,
		GracePeriod:          time.Second,
		EventMaxAge:          2 * time.Second,
		EventCleanupInterval: 250 * time.Millisecond,
		SSEKeepAlive:         500 * time.Millisecond,
		SSERetry:             500 * time.Millisecond,
		RecoveryHint:         true,
		BearerTokens:         map[string]string{"alice-token": "alice", "bob-token": "bob"},
	}
}

// Profile returns the target profile of a server run with Config.
func Profile() *target.Config {
	c := Config()
	return &target.Config{
		Tools: target.Tools{
			Notifying: &target.NotifyingTool{
				Tool:          target.Tool{Name: "long_operation", Arguments: map[string]any{"steps": 5, "interval_ms": 200}},
				Method:        target.DefaultNotificationMethod,
				Notifications: 5,
				Interval:      target.Duration(200 * time.Millisecond),
			},
			Stateful: &target.Tool{Name: "counter_increment"},
		},
		Timings: target.Timings{
			IdleThreshold:        target.Duration(c.IdleThreshold),
			GracePeriod:          target.Duration(c.GracePeriod),
			ReaperInterval:       target.Duration(c.ReaperInterval),
			EventMaxAge:          target.Duration(c.EventMaxAge),
			EventCleanupInterval: target.Duration(c.EventCleanupInterval),
		},
		Principals:   []target.Principal{{Name: "alice", Token: "alice-token"}, {Name: "bob", Token: "bob-token"}},
		Origins:      target.Origins{Allowed: "http://localhost:3000", Disallowed: "https://evil.example"},
		RecoveryHint: true,
	}
}
