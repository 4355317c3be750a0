package kit_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	. "github.com/mcp-conform/mcp-conform/suites/kit"
)

// call and progress are what a check sends and reads, as the Recorder
// hands them to the log.
func call(k *T, lane, token string) {
	k.Log().RequestGroup(lane, "", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"`+token+`"}}}`)
}

func progress(k *T, lane, token string) {
	k.Log().EventGroup(lane, "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"`+token+`","progress":1}}`)
}

// TestLedgerCrossedCalls: when one running check reads a progress
// notification of another running check's call, both end as interfered,
// whatever they would have given, and a third check beside them, whose
// notifications stayed its own, keeps its verdict.
func TestLedgerCrossedCalls(t *testing.T) {
	l := NewLedger()
	sentA, readB := make(chan struct{}), make(chan struct{})
	check := func(id string, body func(*T)) Check {
		return Check{Entry: catalogue.Entry{ID: id}, Run: func(k *T) { l.Join(k); body(k) }}
	}
	var wg sync.WaitGroup
	results := map[string]Result{}
	var mu sync.Mutex
	for _, c := range []Check{
		check("A-OWNER", func(k *T) {
			call(k, "#1", "tok-a")
			close(sentA)
			<-readB
		}),
		check("B-READER", func(k *T) {
			<-sentA
			call(k, "#1", "tok-b")
			progress(k, "#1", "tok-a")
			progress(k, "#1", "tok-b")
			close(readB)
			k.Fail("call B's stream carried a notification of another call")
		}),
		check("C-BESIDE", func(k *T) {
			<-readB
			call(k, "#1", "tok-c")
			progress(k, "#1", "tok-c")
		}),
	} {
		wg.Go(func() {
			r := Execute(context.Background(), c, 5*time.Second)
			mu.Lock()
			results[c.Entry.ID] = r
			mu.Unlock()
		})
	}
	wg.Wait()
	for id, want := range map[string]string{
		"A-OWNER":  "a progress notification of this check's call (token tok-a) came on a stream of B-READER",
		"B-READER": "a progress notification of A-OWNER's call (token tok-a) came on one of this check's streams",
	} {
		r := results[id]
		if r.State != Skipped || r.Cause != report.Interfered || !strings.Contains(r.Message, want) {
			t.Errorf("%s: %v %q %q, want skipped, interfered, saying %q", id, r.State, r.Cause, r.Message, want)
		}
	}
	if !strings.Contains(results["B-READER"].Message, "with them it failed: call B's stream carried") {
		t.Errorf("B-READER's message does not say how it would have ended: %q", results["B-READER"].Message)
	}
	if r := results["C-BESIDE"]; r.State != Passed {
		t.Errorf("C-BESIDE: %v %q, want passed", r.State, r.Message)
	}
}

// TestLedgerEndedCheck: a notification of a check that has ended is no
// crossing: --parallel 1 runs checks one after another, and what an
// earlier check left behind is the target's doing, not a neighbour's.
func TestLedgerEndedCheck(t *testing.T) {
	l := NewLedger()
	r := Execute(context.Background(), Check{Entry: catalogue.Entry{ID: "EARLIER"}, Run: func(k *T) {
		l.Join(k)
		call(k, "#1", "tok-early")
	}}, time.Second)
	if r.State != Passed {
		t.Fatalf("EARLIER: %v %q", r.State, r.Message)
	}
	r = Execute(context.Background(), Check{Entry: catalogue.Entry{ID: "LATER"}, Run: func(k *T) {
		l.Join(k)
		call(k, "#1", "tok-late")
		progress(k, "#1", "tok-early")
		progress(k, "#1", "tok-late")
	}}, time.Second)
	if r.State != Passed {
		t.Errorf("LATER: %v %q %q, want passed", r.State, r.Cause, r.Message)
	}
}
