package catalogue

// Target-profile keys a check can need (see package target).
const (
	KeyNotifying    Key = "tools.notifying"
	KeyStateful     Key = "tools.stateful"
	KeyGraceTimings Key = "timings.idle_threshold+grace_period+reaper_interval"
	KeyEventMaxAge  Key = "timings.event_max_age"
	KeyPrincipals   Key = "principals"
	KeyOriginDenied Key = "origins.disallowed"
	KeyRecoveryHint Key = "recovery_hint"
	KeyResumable    Key = "tools.resumable"
	KeyTask         Key = "tools.task"
	// KeyRefreshedToken is a second token of the first principal, as a
	// token refresh would give it.
	KeyRefreshedToken Key = "principals[0].refreshed_token"
	// The sessionless revision (2026-07-28).
	KeyStepping  Key = "tools.stepping"
	KeyListen    Key = "listen"
	KeyKeepAlive Key = "timings.keep_alive"
)
