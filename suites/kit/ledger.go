package kit

import (
	"fmt"
	"sync"
)

// Ledger is a run's record of the progress tokens its running checks
// sent. Each check's tokens are unique in the run, so a progress
// notification read by one check with another running check's token
// crossed between them: the target sent a call's notifications to
// another request's stream. Both checks then saw something they would not
// have seen alone (one an extra notification, the other a missing one),
// so neither verdict is the target's alone: T.run ends both as skipped
// for report.Interfered, and the runner has them again alone. A check
// that ended has left the ledger: a running check is what --parallel
// changes.
type Ledger struct {
	mu sync.Mutex
	// owner maps a token, as its JSON text, to the check that sent it.
	owner map[string]*Log
	// name names each joined check for the other's message.
	name map[*Log]string
	// crossed is, for each joined check, the first crossing it was in.
	crossed map[*Log]string
}

// NewLedger returns an empty ledger for one run.
func NewLedger() *Ledger {
	return &Ledger{owner: map[string]*Log{}, name: map[*Log]string{}, crossed: map[*Log]string{}}
}

// Join enters t in the ledger until it ends: the tokens its requests
// carry are its own, and those its streams carry are watched.
func (l *Ledger) Join(t *T) {
	l.mu.Lock()
	l.name[t.log] = t.Entry.ID
	l.mu.Unlock()
	t.log.groups.setLedger(l, t.log)
	t.ledger = l
}

// leave takes t's check out of the ledger and returns the first crossing
// it was in, "" if none.
func (l *Ledger) leave(log *Log) string {
	log.groups.setLedger(nil, nil)
	l.mu.Lock()
	defer l.mu.Unlock()
	for tok, o := range l.owner {
		if o == log {
			delete(l.owner, tok)
		}
	}
	why := l.crossed[log]
	delete(l.crossed, log)
	delete(l.name, log)
	return why
}

// sent records token, carried by a request of log's check, as its own.
func (l *Ledger) sent(log *Log, token string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.name[log]; ok {
		if _, taken := l.owner[token]; !taken {
			l.owner[token] = log
		}
	}
}

// read records a progress notification with token read by log's check.
func (l *Ledger) read(log *Log, token string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.owner[token]
	if !ok || o == log {
		return
	}
	tok := Clip(token, 60)
	if _, ok := l.crossed[log]; !ok {
		l.crossed[log] = fmt.Sprintf("a progress notification of %s's call (token %s) came on one of this check's streams", l.name[o], tok)
	}
	if _, ok := l.crossed[o]; !ok {
		l.crossed[o] = fmt.Sprintf("a progress notification of this check's call (token %s) came on a stream of %s, which ran beside it", tok, l.name[log])
	}
}
