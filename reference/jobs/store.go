package jobs

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Argument limits for Start; they bound the work a single call can request.
const (
	MaxSteps    = 10000
	MaxInterval = 60 * time.Second
	MaxDuration = time.Hour // steps × interval
)

// Defaults applied by New for zero Options fields.
const (
	// DefaultTokenTTL is only a fallback: the server is expected to pass its
	// idle threshold + grace period + 10 minutes.
	DefaultTokenTTL            = 15 * time.Minute
	DefaultMaxRunning          = 1000
	DefaultMaxRunningPerOwner  = 10
	DefaultMaxRetained         = 10000
	DefaultMaxRetainedPerOwner = 100
)

// Options configures a Store.
type Options struct {
	TokenTTL   time.Duration // <= 0 means DefaultTokenTTL
	JobTTL     time.Duration // <= 0 means TokenTTL
	MaxRunning int           // <= 0 means DefaultMaxRunning
	// MaxRunningPerOwner bounds one owner's running jobs (see Owner.key), so
	// one client cannot take every slot; <= 0 means DefaultMaxRunningPerOwner.
	MaxRunningPerOwner int
	// MaxRetained and MaxRetainedPerOwner bound the completed jobs kept,
	// in all and per owner; beyond them the oldest go first, with their
	// resume tokens. <= 0 means the defaults.
	MaxRetained         int
	MaxRetainedPerOwner int
	Clock               clock.Clock // nil means clock.RealClock{}
	// Mirror shares jobs and tokens with other replicas; nil for none.
	Mirror Mirror
}

// Owner is who starts a job: the principal (empty when anonymous) and the
// MCP session it was started in.
type Owner struct {
	Principal string
	Session   string
}

// Key is what quotas count by: the principal, or the session for anonymous
// clients, who share the empty principal.
func (o Owner) Key() string {
	if o.Principal != "" {
		return "p\x00" + o.Principal
	}
	return "s\x00" + o.Session
}

// Status is a job's lifecycle state.
type Status string

// Job states.
const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	// StatusCancelled: the session that started the job ended first. It
	// issues no resume token; the conversation goes on from the token of
	// its last completed job.
	StatusCancelled Status = "cancelled"
)

// Snapshot is a point-in-time view of a job, as returned by job_get.
type Snapshot struct {
	JobID          string `json:"job_id"`
	ConversationID string `json:"conversation_id"`
	Turn           int    `json:"turn"`
	Status         Status `json:"status"`
	Progress       int    `json:"progress"`
	Steps          int    `json:"steps"`
	Result         string `json:"result,omitempty"`
	ResumeToken    string `json:"resume_token,omitempty"`
}

// Store holds jobs and resume tokens. It is safe for concurrent use.
type Store struct {
	tokenTTL            time.Duration
	jobTTL              time.Duration
	maxRunning          int
	maxRunningPerOwner  int
	maxRetained         int
	maxRetainedPerOwner int
	clk                 clock.Clock
	mirror              Mirror

	mu       sync.Mutex
	jobs     map[string]*job
	tokens   map[string]tokenEntry
	running  int
	closed   bool
	owners   map[string]*ownerJobs // by Owner.key, while it has jobs
	finished []*job                // ended jobs, oldest first (see endLocked)
	retained int                   // ended jobs not dropped

	done chan struct{} // closed by Close to stop job goroutines and Run
	wg   sync.WaitGroup
}

type job struct {
	id       string
	owner    Owner
	convID   string
	turn     int
	steps    int
	interval time.Duration
	stop     chan struct{} // closed to cancel the job

	// Guarded by Store.mu.
	progress    int
	status      Status
	result      string
	token       string
	completedAt time.Time

	finished chan struct{} // closed when the job completes or is cancelled
	dropped  bool          // removed by a sweep or a retention bound
}

// ownerJobs counts one owner's running jobs and lists its ended ones.
type ownerJobs struct {
	running int
	ended   []*job // oldest first
}

type tokenEntry struct {
	principal string
	convID    string
	turn      int
	expires   time.Time
}

// New returns an empty Store.
func New(opts Options) *Store {
	s := &Store{
		tokenTTL:   opts.TokenTTL,
		jobTTL:     opts.JobTTL,
		maxRunning: opts.MaxRunning,
		clk:        opts.Clock,
		mirror:     opts.Mirror,
		jobs:       make(map[string]*job),
		tokens:     make(map[string]tokenEntry),
		owners:     make(map[string]*ownerJobs),
		done:       make(chan struct{}),

		maxRunningPerOwner:  orDefault(opts.MaxRunningPerOwner, DefaultMaxRunningPerOwner),
		maxRetained:         orDefault(opts.MaxRetained, DefaultMaxRetained),
		maxRetainedPerOwner: orDefault(opts.MaxRetainedPerOwner, DefaultMaxRetainedPerOwner),
	}
	if s.tokenTTL <= 0 {
		s.tokenTTL = DefaultTokenTTL
	}
	if s.jobTTL <= 0 {
		s.jobTTL = s.tokenTTL
	}
	if s.maxRunning <= 0 {
		s.maxRunning = DefaultMaxRunning
	}
	if s.clk == nil {
		s.clk = clock.RealClock{}
	}
	return s
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Start begins a job of steps steps, one every interval, for owner. With an
// empty resumeToken it opens a new conversation at turn 1; otherwise it
// continues the token's conversation at the token's turn + 1, if the token
// was issued to owner's principal. It returns at once with the job running
// and no progress, unless interval is 0: such a job has nothing to wait for
// and has completed when Start returns, so a client that ends its session
// at once (a short-lived process) does not see it cancelled.
func (s *Store) Start(owner Owner, steps int, interval time.Duration, resumeToken string) (Snapshot, error) {
	if steps < 1 || steps > MaxSteps {
		return Snapshot{}, fmt.Errorf("%w: steps must be between 1 and %d, got %d", ErrBadArgs, MaxSteps, steps)
	}
	if interval < 0 || interval > MaxInterval {
		return Snapshot{}, fmt.Errorf("%w: interval must be between 0 and %v, got %v", ErrBadArgs, MaxInterval, interval)
	}
	if total := time.Duration(steps) * interval; total > MaxDuration {
		return Snapshot{}, fmt.Errorf("%w: steps × interval must be at most %v, got %v", ErrBadArgs, MaxDuration, total)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Snapshot{}, ErrClosed
	}

	convID, turn := "", 1
	if resumeToken != "" {
		tok, ok := s.tokens[resumeToken]
		if !ok {
			tok, ok = s.mirroredToken(resumeToken)
		}
		// Checked here as well as in Sweep so validity does not depend on
		// when the last sweep ran.
		// Another principal's token is as unknown as a forged one.
		if !ok || tok.principal != owner.Principal || !s.clk.Now().Before(tok.expires) {
			return Snapshot{}, ErrInvalidToken
		}
		convID, turn = tok.convID, tok.turn+1
	}
	if s.running >= s.maxRunning {
		return Snapshot{}, fmt.Errorf("%w (limit %d)", ErrTooMany, s.maxRunning)
	}
	oj := s.owners[owner.Key()]
	if oj == nil {
		oj = &ownerJobs{}
		s.owners[owner.Key()] = oj
	}
	if oj.running >= s.maxRunningPerOwner {
		return Snapshot{}, fmt.Errorf("%w for one client (limit %d)", ErrTooMany, s.maxRunningPerOwner)
	}
	if convID == "" {
		convID = rand.Text()
	}

	j := &job{
		id:       rand.Text(),
		owner:    owner,
		stop:     make(chan struct{}),
		convID:   convID,
		turn:     turn,
		steps:    steps,
		interval: interval,
		status:   StatusRunning,
		finished: make(chan struct{}),
	}
	s.jobs[j.id] = j
	s.running++
	oj.running++
	if interval == 0 {
		j.progress = steps
		s.completeLocked(j)
		snap := s.snapshotLocked(j)
		s.mirrorJob(j, snap)
		return snap, nil
	}
	// Added under mu so Close, which sets closed under mu, never races a
	// late Add with its Wait.
	s.wg.Add(1)
	go s.run(j)
	snap := s.snapshotLocked(j)
	s.mirrorJob(j, snap)
	return snap, nil
}

// Get returns the current state of a job started by principal; another
// principal's job is unknown.
func (s *Store) Get(principal, jobID string) (Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.lookupLocked(jobID)
	if !ok && s.mirror != nil {
		// Started by another replica.
		if p, snap, found := s.mirror.LoadJob(jobID); found && p == principal {
			return snap, nil
		}
	}
	if !ok || j.owner.Principal != principal {
		return Snapshot{}, ErrUnknownJob
	}
	return s.snapshotLocked(j), nil
}

// Wait blocks until the job completes, ctx is done, or the store is closed.
// On ctx expiry it returns the job's current snapshot with ctx.Err().
func (s *Store) Wait(ctx context.Context, jobID string) (Snapshot, error) {
	s.mu.Lock()
	j, ok := s.lookupLocked(jobID)
	s.mu.Unlock()
	if !ok {
		return Snapshot{}, ErrUnknownJob
	}

	var err error
	select {
	case <-j.finished:
	case <-ctx.Done():
		err = ctx.Err()
	case <-s.done:
		err = ErrClosed
	}
	// select picks at random among ready cases; a finished job wins.
	select {
	case <-j.finished:
		err = nil
	default:
	}
	// Read from the job itself: a sweep may already have dropped it from
	// the map, but the caller was waiting for exactly this job.
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked(j), err
}

// Close stops all job goroutines and Run, and waits for the job goroutines
// to exit. Jobs interrupted by Close stay "running". Close is idempotent.
func (s *Store) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// lookupLocked treats a job past its retention period as gone even if no
// sweep has removed it yet.
func (s *Store) lookupLocked(jobID string) (*job, bool) {
	j, ok := s.jobs[jobID]
	if !ok || s.jobExpiredLocked(j, s.clk.Now()) {
		return nil, false
	}
	return j, true
}

func (s *Store) jobExpiredLocked(j *job, now time.Time) bool {
	return j.status != StatusRunning && !now.Before(j.completedAt.Add(s.jobTTL))
}

func (s *Store) snapshotLocked(j *job) Snapshot {
	return Snapshot{
		JobID:          j.id,
		ConversationID: j.convID,
		Turn:           j.turn,
		Status:         j.status,
		Progress:       j.progress,
		Steps:          j.steps,
		Result:         j.result,
		ResumeToken:    j.token,
	}
}
