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
// Jobs and tokens belong to the principal that started them (anonymous
// clients share the empty principal): another principal's job id is
// unknown to it and its token invalid. A running job belongs to the session
// it was started in as well: when that session ends, the server cancels
// it (CancelSession), and it issues no token, so the conversation continues
// from the token of its last completed job. Tokens already issued outlive
// their session: that is what they are for.
//
// Work is bounded: steps × interval of one job, running jobs in all and per
// client (a principal, or an anonymous session), and completed jobs kept in
// all and per client, beyond which the oldest are dropped with their tokens.
// A completed job is otherwise retained for JobTTL and then becomes
// unknown. Expiry is decided by the store's clock at lookup time; Sweep
// (run periodically by Run) only reclaims the memory.
package jobs
