// Package store is the state of the reference server that outlives one
// request: the session table's records, session state (the counter), the
// replay events and the notification routing between replicas. Two
// implementations: Memory (one process, the default) and, in package
// redisstore, Redis (any number of replicas).
//
// The go-sdk transports serving a session stay in the process that serves
// the request; what a replica needs to serve a session it did not create is
// here, so it can rebuild them (see the server's adopt).
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/jobs"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// Session is a session table record.
type Session struct {
	ID        string
	Principal string
	// Version is the negotiated protocol revision; Init the client's
	// initialize params (JSON), replayed to rebuild the session elsewhere.
	Version string
	Init    []byte
}

// ErrGone means the session is not (or no longer) in the table.
var ErrGone = errors.New("store: session not found")

// ErrUnavailable means the store could not be reached (a shared store's
// server is down, stopped or cut off): the operation may work later, and
// says nothing of the session.
var ErrUnavailable = errors.New("session store unavailable")

// ErrNotStored means a stream missed events while the store was out of
// reach: it cannot be resumed without a gap, so it is not resumed.
var ErrNotStored = errors.New("the stream's events could not all be stored while the session store was unavailable")

// Availability is implemented by a store that can be out of reach (Redis).
// Memory, in the process, never is.
type Availability interface {
	// Outage reports whether the store is out of reach now, and when it
	// last came back from an outage (zero if it never was out of reach).
	Outage() (down bool, back time.Time)
	// OnRecover has f called, in a goroutine of its own, each time the
	// store answers again after an outage, until cancel is called.
	OnRecover(f func()) (cancel func())
}

// Store is the state replicas share.
type Store interface {
	// Shared reports whether other processes see this store: then every
	// replica may serve any session, and expiry is decided by the store.
	Shared() bool

	// Create adds a session record; Save overwrites it (a re-initialize).
	Create(ctx context.Context, s Session, now time.Time) error
	Save(ctx context.Context, s Session) error
	// Load returns the record of id; ok is false if it is not in the table.
	Load(ctx context.Context, id string) (s Session, ok bool, err error)
	// Touch records activity on id at now and ends its grace period.
	// It returns ErrGone if id is not in the table.
	Touch(ctx context.Context, id string, now time.Time) (cancelledGrace bool, err error)
	// Remove takes id out of the table; removed is true for exactly one
	// caller, whichever replica it runs on.
	Remove(ctx context.Context, id string) (removed bool, err error)
	// Increment adds one to the session's counter and returns it.
	Increment(ctx context.Context, id string) (int64, error)

	// StartGrace starts the grace period, ending at deadline, of every
	// session idle since before idleSince, and returns them.
	StartGrace(ctx context.Context, idleSince, deadline time.Time) ([]string, error)
	// Expire removes the sessions whose grace period ended by now and
	// returns them; each id is returned to one caller only.
	Expire(ctx context.Context, now time.Time) ([]string, error)
	// Gone reports ids removed by other processes, until ctx ends.
	Gone(ctx context.Context) <-chan string

	// Listen counts a standalone GET of id served somewhere (delta +1 on
	// attach, -1 on detach); Listening reports whether one is.
	Listen(ctx context.Context, id string, delta int) error
	Listening(ctx context.Context, id string) (bool, error)
	// Delivered records that a client got standalone event index of id;
	// LastDelivered returns the highest so recorded, -1 for none.
	Delivered(ctx context.Context, id string, index int) error
	LastDelivered(ctx context.Context, id string) (int, error)

	// Events is the replay store.
	Events() Events
	// Jobs shares jobs and resume tokens between replicas; nil in one process.
	Jobs() jobs.Mirror
	// Tasks holds tasks for every replica; nil in one process.
	Tasks() tasks.Shared
	// Follow delivers every event appended to the stream from now on,
	// until ctx ends, in append order. It returns once subscribed.
	Follow(ctx context.Context, sessionID, streamID string) (<-chan eventstore.Event, error)
	// Replay returns the stored events with data after index, with their
	// indexes; errors as Events.Check.
	Replay(ctx context.Context, sessionID, streamID string, index int) ([]eventstore.Event, error)
	// Requests is how many responses a POST stream carries (1 if unknown):
	// a replica following it knows when it is finished.
	Requests(ctx context.Context, sessionID, streamID string) int
	// Lease records, for ttl, that this process runs the calls ids of a POST
	// stream; it renews it while they run. Leased reports whether the lease
	// is held, and the ids last recorded, after it lapsed too.
	Lease(ctx context.Context, sessionID, streamID string, ids []json.RawMessage, ttl time.Duration) error
	Leased(ctx context.Context, sessionID, streamID string) (held bool, ids []json.RawMessage, err error)
	// Claim reports true to the first caller for name within ttl.
	Claim(ctx context.Context, name string, ttl time.Duration) (bool, error)

	Close() error
}

// Events is what the server needs of a replay store; *eventstore.Store is one.
type Events interface {
	mcp.EventStore
	Check(sessionID, streamID string, index int) error
	Prime(sessionID, streamID string, index int, skipEvicted bool) (eventstore.Priming, error)
	Forget(sessionID string)
	Stats() eventstore.Stats
	Sweep()
	Run(ctx context.Context)
}

var _ Events = (*eventstore.Store)(nil)
