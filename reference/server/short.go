package server

import "time"

// ShortTimings is a configuration whose timings are seconds instead of
// minutes, so that waiting out an idle session or an evicted event takes
// a test seconds: the embedded target of `mcp-conform server` and the
// broken fixtures run on it. It also turns recovery hints on and binds
// two bearer principals, alice (with two tokens, as after a refresh) and bob.
func ShortTimings() Config {
	return Config{
		ReaperInterval:       200 * time.Millisecond,
		IdleThreshold:        time.Second,
		GracePeriod:          time.Second,
		EventMaxAge:          3 * time.Second,
		EventCleanupInterval: 250 * time.Millisecond,
		SSEKeepAlive:         500 * time.Millisecond,
		SSERetry:             500 * time.Millisecond,
		RecoveryHint:         true,
		TaskPollInterval:     200 * time.Millisecond,
		BearerTokens:         map[string]string{"alice-token": "alice", "alice-token-refreshed": "alice", "bob-token": "bob"},
	}
}
