// Package jobs is the store behind the reference server's job_start and
// job_get tools.
//
// A job belongs to a conversation, an application-level thread that
// deliberately outlives MCP sessions: when a session expires the client
// initializes a new one and calls job_start with the resume token returned
// by its last completed job, and the new job continues the same
// conversation with the next turn number.
//
// Resume tokens are issued only when a job completes. A token stays valid
// for TokenTTL after issue, may be used any number of times (so a retried
// resume does not fail), and is not revoked when a newer token for the same
// conversation is issued. The turn of a resumed job is the turn that issued
// the token plus one, so retrying a resume with the same token yields the
// same turn number again.
//
// Jobs are not tied to sessions. A completed job is retained for JobTTL and
// then becomes unknown. Expiry is decided by the store's clock at lookup
// time; Sweep (run periodically by Run) only reclaims the memory.
package jobs
