package jobs

import "errors"

var (
	// ErrInvalidToken is returned by Start for a resume token that was never
	// issued, has expired, or has been swept.
	ErrInvalidToken = errors.New("jobs: resume token is unknown or expired")
	// ErrUnknownJob is returned for a job id that was never issued or whose
	// retention period has passed.
	ErrUnknownJob = errors.New("jobs: unknown job id")
	// ErrBadArgs is wrapped with detail when Start's arguments are out of range.
	ErrBadArgs = errors.New("jobs: invalid arguments")
	// ErrTooMany is returned when Options.MaxRunning jobs are already running.
	ErrTooMany = errors.New("jobs: too many running jobs")
	// ErrClosed is returned once Close has been called.
	ErrClosed = errors.New("jobs: store is closed")
)
