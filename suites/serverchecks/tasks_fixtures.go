package serverchecks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures whose tasks (2025-11-25) lack one durable property.
func init() {
	servers.Register(
		servers.Fixture{
			Name:  "task-create-slow",
			About: "a tools/call with params.task answers its CreateTaskResult only once the task's work is done, so no task can be cancelled while it works",
			// TASK-CANCEL-TERMINAL wants a working task to cancel.
			Breaks:       []string{"TASK-CREATE-FAST", "TASK-CANCEL-TERMINAL"},
			ModernBreaks: []string{"TASK-CREATE-FAST", "TASK-CANCEL-TERMINAL"},
			Wrap:         taskCreateSlow,
		},
		servers.Fixture{
			Name:         "task-lazy-create",
			About:        "the task is written to the store after the CreateTaskResult is sent: tasks/get does not find it for 180 ms (less than any poll interval a check waits first)",
			Breaks:       []string{"TASK-DURABLE-CREATE"},
			ModernBreaks: []string{"TASK-DURABLE-CREATE"},
			Wrap:         taskLazyCreate,
		},
		servers.Fixture{
			Name:   "task-cancel-on-drop",
			About:  "a tasks/result whose client goes away cancels the task",
			Breaks: []string{"TASK-SURVIVES-CUT"},
			Wrap:   taskCancelOnDrop,
		},
		servers.Fixture{
			Name:   "task-result-once",
			About:  "tasks/result hands a task's result out once, later ones answer -32602 (2026-07-28: tasks/get carries the result inline once)",
			Breaks: []string{"TASK-RESULT-REPEATABLE"},
			// Polling sees the inline result first, so it is gone when
			// TASK-TTL-KEPT asks again.
			ModernBreaks: []string{"TASK-RESULT-REPEATABLE", "TASK-TTL-KEPT"},
			Wrap:         taskResultOnce,
		},
		servers.Fixture{
			Name: "task-result-not-blocking",
			About: "tasks/result of a task still working answers -32603 \"not completed\" at once instead of blocking until it ends " +
				"(mcp-framework 0.2.22 does): every check that reads a task's result stands on it",
			Breaks:   []string{"TASK-RESULT-REPEATABLE"},
			Premises: []catalogue.Premise{catalogue.PremiseTaskResult},
			Wrap:     taskResultNotBlocking,
		},
		servers.Fixture{
			Name:   "task-session-scoped",
			About:  "tasks belong to the session that created them, as in the TypeScript and Python SDKs: another session of the same principal gets -32602",
			Breaks: []string{"TASK-SURVIVES-REFRESH"},
			Wrap:   sessionOrNoneScoped,
		},
		servers.Fixture{
			Name:         "task-any-principal",
			About:        "any principal who knows a task id reads, awaits and cancels the task",
			Breaks:       []string{"TASK-PRINCIPAL-BOUND"},
			ModernBreaks: []string{"TASK-PRINCIPAL-BOUND"},
			Wrap:         taskAnyPrincipal,
		},
		servers.Fixture{
			Name: "task-unknown-500",
			About: "a task request for an id not shaped like the server's own answers HTTP 500 " +
				"(and a task created with a ttl is granted and kept 300000 ms, whatever was asked, as the spec allows)",
			Breaks:       []string{"TASK-UNKNOWN-ID"},
			ModernBreaks: []string{"TASK-UNKNOWN-ID"},
			// The long grant is no defect: TASK-TTL-KEPT passes, in its budget.
			Wrap: func(next http.Handler, cfg server.Config) http.Handler {
				return taskUnknown500(grantTTL(next, grantedTTL), cfg)
			},
		},
		servers.Fixture{
			Name:         "task-cancel-terminal-ok",
			About:        "tasks/cancel of a finished task succeeds (2025-11-25: instead of -32602) and the task reads cancelled from then on",
			Breaks:       []string{"TASK-CANCEL-TERMINAL"},
			ModernBreaks: []string{"TASK-CANCEL-TERMINAL"},
			Wrap:         taskCancelTerminalOK,
		},
		servers.Fixture{
			Name:         "task-ttl-halved",
			About:        "a task created with a ttl is deleted when half of it has passed, though the full ttl is reported",
			Breaks:       []string{"TASK-TTL-KEPT"},
			ModernBreaks: []string{"TASK-TTL-KEPT"},
			Wrap:         taskTTLHalved,
		},
		servers.Fixture{
			Name:         "task-lost-500",
			About:        "a task request for a task the store lost (a restart) answers HTTP 500 instead of -32602",
			Breaks:       []string{"TASK-RESTART"},
			ModernBreaks: []string{"TASK-RESTART"},
			Wrap:         taskLost500,
		},
	)
}

// taskCall is a task request as a fixture sees it.
type taskCall struct {
	method string // tasks/get, tasks/result, tasks/list, tasks/cancel, or tools/call (a task to create)
	id     json.RawMessage
	taskID string
	ttl    *int64 // params.task.ttl of a creation
}

// peekTask reports a task request: a tasks/* method or a tools/call with params.task.
func peekTask(r *http.Request) (taskCall, bool) {
	body := servers.PeekBody(r)
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			TaskID string `json:"taskId"`
			Task   *struct {
				TTL   *int64 `json:"ttl"`
				TTLMs *int64 `json:"ttlMs"`
			} `json:"task"`
		} `json:"params"`
	}
	if body == nil || json.Unmarshal(body, &m) != nil || len(m.ID) == 0 {
		return taskCall{}, false
	}
	k := taskCall{method: m.Method, id: m.ID, taskID: m.Params.TaskID}
	switch m.Method {
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return k, true
	case "tools/call":
		if m.Params.Task != nil {
			k.ttl = m.Params.Task.TTL
			if k.ttl == nil {
				k.ttl = m.Params.Task.TTLMs
			}
			return k, true
		}
	}
	return taskCall{}, false
}

// record serves r by next into a recorder (the reference answers task
// requests with one JSON body) and decodes the answer.
func record(next http.Handler, r *http.Request) (*httptest.ResponseRecorder, wire.Message) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	var m wire.Message
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	return rec, m
}

// replay writes a recorded answer.
func replay(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// writeTaskError answers a task request with a JSON-RPC error.
func writeTaskError(w http.ResponseWriter, id json.RawMessage, code int, message string) {
	writeRPC(w, wire.Message{JSONRPC: "2.0", ID: id, Error: &wire.RPCError{Code: code, Message: message}})
}

func writeRPC(w http.ResponseWriter, m wire.Message) {
	b, _ := json.Marshal(m)
	w.Header().Set("Content-Type", wire.MediaTypeJSON)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// createdTask is what a fixture remembers of a task it saw created.
type createdTask struct {
	session string
	auth    string
	at      time.Time
	ttl     *int64
}

// taskLedger remembers the tasks created through a fixture.
type taskLedger struct {
	clock clock.Clock
	mu    sync.Mutex
	tasks map[string]createdTask
}

func newTaskLedger(cfg server.Config) *taskLedger {
	var c clock.Clock = clock.RealClock{}
	if cfg.Clock != nil {
		c = cfg.Clock
	}
	return &taskLedger{clock: c, tasks: map[string]createdTask{}}
}

// create serves a task creation and notes the task; it returns the
// recorded answer unwritten.
func (l *taskLedger) create(next http.Handler, r *http.Request, k taskCall) (*httptest.ResponseRecorder, string) {
	rec, m := record(next, r)
	var res struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
		TaskID string `json:"taskId"` // the extension's flat CreateTaskResult
	}
	if m.Error == nil && json.Unmarshal(m.Result, &res) == nil && res.Task.TaskID == "" {
		res.Task.TaskID = res.TaskID
	}
	if m.Error == nil && res.Task.TaskID != "" {
		l.mu.Lock()
		l.tasks[res.Task.TaskID] = createdTask{session: r.Header.Get(wire.HeaderSessionID), auth: r.Header.Get("Authorization"), at: l.clock.Now(), ttl: k.ttl}
		l.mu.Unlock()
	}
	return rec, res.Task.TaskID
}

func (l *taskLedger) lookup(id string) (createdTask, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.tasks[id]
	return t, ok
}

// taskMiddleware hands task requests to serve with the fixture's ledger;
// other requests go to next untouched.
func taskMiddleware(next http.Handler, cfg server.Config, serve func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall)) http.Handler {
	l := newTaskLedger(cfg)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k, ok := peekTask(r); ok {
			serve(l, w, r, k)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveCreations serves a task creation through the ledger, answering as
// the reference did; it reports false for other task requests.
func serveCreations(l *taskLedger, next http.Handler, w http.ResponseWriter, r *http.Request, k taskCall) bool {
	if k.method != "tools/call" {
		return false
	}
	rec, _ := l.create(next, r, k)
	replay(w, rec)
	return true
}

// taskCreateSlow answers a task's creation only once the task has ended,
// polling it in-process.
func taskCreateSlow(next http.Handler, cfg server.Config) http.Handler {
	return taskMiddleware(next, cfg, func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall) {
		if k.method != "tools/call" {
			next.ServeHTTP(w, r)
			return
		}
		body := servers.PeekBody(r)
		rec, id := l.create(next, r, k)
		for id != "" {
			_, m := record(next, taskGet(r, body, id))
			if st := statusOf(m); st == "" || st == "completed" || st == "failed" || st == "cancelled" {
				break
			}
			select {
			case <-l.clock.After(20 * time.Millisecond):
				continue
			case <-r.Context().Done():
			}
			break
		}
		replay(w, rec)
	})
}

// taskGet is a tasks/get of task id with the headers and _meta of r
// (whose body was body): the same requestor, session and revision.
func taskGet(r *http.Request, body []byte, id string) *http.Request {
	var m struct {
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	params := map[string]any{"taskId": id}
	if len(m.Params.Meta) > 0 {
		params["_meta"] = m.Params.Meta
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "fixture-get", "method": "tasks/get", "params": params})
	g := r.Clone(context.WithoutCancel(r.Context()))
	g.Body = io.NopCloser(bytes.NewReader(b))
	g.ContentLength = int64(len(b))
	if g.Header.Get("Mcp-Method") != "" {
		g.Header.Set("Mcp-Method", "tasks/get")
		g.Header.Set("Mcp-Name", id)
	}
	return g
}

func taskLazyCreate(next http.Handler, cfg server.Config) http.Handler {
	hidden := 180 * time.Millisecond
	return taskMiddleware(next, cfg, func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall) {
		if serveCreations(l, next, w, r, k) {
			return
		}
		if t, ok := l.lookup(k.taskID); ok && k.method == "tasks/get" && l.clock.Since(t.at) < hidden {
			writeTaskError(w, k.id, -32602, "task not found: "+k.taskID)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func taskCancelOnDrop(next http.Handler, cfg server.Config) http.Handler {
	return taskMiddleware(next, cfg, func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall) {
		if serveCreations(l, next, w, r, k) {
			return
		}
		next.ServeHTTP(w, r)
		if k.method == "tasks/result" && r.Context().Err() != nil {
			servers.InProcess(next, http.MethodPost, r.Header.Get(wire.HeaderSessionID), r.Header,
				`{"jsonrpc":"2.0","id":`+servers.OwnID("cancel")+`,"method":"tasks/cancel","params":{"taskId":`+jsonString(k.taskID)+`}}`)
		}
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func taskResultOnce(next http.Handler, cfg server.Config) http.Handler {
	var mu sync.Mutex
	handed := map[string]bool{}
	return taskMiddleware(next, cfg, func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall) {
		if serveCreations(l, next, w, r, k) {
			return
		}
		modern := k.method == "tasks/get" && wire.Revision(r.Header.Get(wire.HeaderProtocolVersion)).Sessionless()
		if k.method != "tasks/result" && !modern {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		was := handed[k.taskID]
		mu.Unlock()
		rec, m := record(next, r)
		var t map[string]json.RawMessage
		switch {
		case modern && m.Error == nil && json.Unmarshal(m.Result, &t) == nil && t["result"] != nil:
			if was { // the inline result is gone after the first time
				delete(t, "result")
				m.Result, _ = json.Marshal(t)
				writeRPC(w, m)
				return
			}
		case modern:
			replay(w, rec)
			return
		case was:
			writeTaskError(w, k.id, -32602, "task not found: "+k.taskID)
			return
		}
		if m.Error == nil && m.Result != nil {
			mu.Lock()
			handed[k.taskID] = true
			mu.Unlock()
		}
		replay(w, rec)
	})
}

func sessionOrNoneScoped(next http.Handler, cfg server.Config) http.Handler {
	return taskMiddleware(next, cfg, func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall) {
		if serveCreations(l, next, w, r, k) {
			return
		}
		if t, ok := l.lookup(k.taskID); ok && t.session != r.Header.Get(wire.HeaderSessionID) {
			writeTaskError(w, k.id, -32602, "Task not found")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func taskAnyPrincipal(next http.Handler, cfg server.Config) http.Handler {
	return taskMiddleware(next, cfg, func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall) {
		if serveCreations(l, next, w, r, k) {
			return
		}
		if t, ok := l.lookup(k.taskID); ok && t.auth != r.Header.Get("Authorization") {
			// Answer as the owner would be answered, on the owner's session.
			r.Header.Set("Authorization", t.auth)
			r.Header.Set(wire.HeaderSessionID, t.session)
		}
		next.ServeHTTP(w, r)
	})
}

// issuedID is the shape of the reference's task ids (rand.Text).
var issuedID = regexp.MustCompile(`^[A-Z2-7]{26}$`)

func taskUnknown500(next http.Handler, cfg server.Config) http.Handler {
	return taskMiddleware(next, cfg, func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall) {
		if k.method != "tools/call" && k.method != "tasks/list" && !issuedID.MatchString(k.taskID) {
			writeError(w, http.StatusInternalServerError, "internal error: malformed task id")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// asGet is r, a tasks/cancel, turned into a tasks/get of the same task
// with the same headers, to see the task before the cancel.
func asGet(r *http.Request) *http.Request {
	body := bytes.Replace(servers.PeekBody(r), []byte(`"method":"tasks/cancel"`), []byte(`"method":"tasks/get"`), 1)
	g := r.Clone(r.Context())
	g.Body = io.NopCloser(bytes.NewReader(body))
	g.ContentLength = int64(len(body))
	if g.Header.Get("Mcp-Method") != "" {
		g.Header.Set("Mcp-Method", "tasks/get")
	}
	return g
}

// withStatus returns a task answer with its status replaced.
func withStatus(m wire.Message, status string) wire.Message {
	var t map[string]json.RawMessage
	if m.Error != nil || json.Unmarshal(m.Result, &t) != nil {
		return m
	}
	t["status"], _ = json.Marshal(status)
	delete(t, "result")
	m.Result, _ = json.Marshal(t)
	return m
}

func taskCancelTerminalOK(next http.Handler, cfg server.Config) http.Handler {
	var mu sync.Mutex
	overwritten := map[string]bool{}
	return taskMiddleware(next, cfg, func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall) {
		if serveCreations(l, next, w, r, k) {
			return
		}
		mu.Lock()
		over := overwritten[k.taskID]
		mu.Unlock()
		t, ok := l.lookup(k.taskID)
		switch {
		case k.method == "tasks/get" && over:
			_, m := record(next, r)
			writeRPC(w, withStatus(m, "cancelled"))
		case k.method == "tasks/cancel" && ok && t.auth == r.Header.Get("Authorization"):
			_, before := record(next, asGet(r))
			st := statusOf(before)
			if st != "completed" && st != "failed" {
				next.ServeHTTP(w, r)
				return
			}
			mu.Lock()
			overwritten[k.taskID] = true
			mu.Unlock()
			rec, m := record(next, r)
			if m.Error == nil { // the extension's acknowledgement
				replay(w, rec)
				return
			}
			before.ID = k.id
			writeRPC(w, withStatus(before, "cancelled"))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// statusOf is a task answer's status, "" if it has none.
func statusOf(m wire.Message) string {
	var t struct {
		Status string `json:"status"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &t) != nil {
		return ""
	}
	return t.Status
}

func taskTTLHalved(next http.Handler, cfg server.Config) http.Handler {
	return taskMiddleware(next, cfg, func(l *taskLedger, w http.ResponseWriter, r *http.Request, k taskCall) {
		if serveCreations(l, next, w, r, k) {
			return
		}
		t, ok := l.lookup(k.taskID)
		if ok && t.ttl != nil && l.clock.Since(t.at) >= time.Duration(*t.ttl)*time.Millisecond/2 {
			writeTaskError(w, k.id, -32602, "task not found: "+k.taskID)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// taskIDField is a task id in an answer, to tag with the process's boot.
var taskIDField = regexp.MustCompile(`"taskId":"([^"~]+)"`)

// taskLost500 shows task ids tagged with a random boot id of the process
// ("ID~BOOT"), so that after a process restart it knows, without memory,
// that a task was made before: it answers those with 500.
func taskLost500(next http.Handler, _ server.Config) http.Handler {
	boot := rand.Text()[:8]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, ok := peekTask(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if real, b, tagged := strings.Cut(k.taskID, "~"); tagged {
			if b != boot {
				writeError(w, http.StatusInternalServerError, "internal error: task "+k.taskID+" lost")
				return
			}
			body := bytes.Replace(servers.PeekBody(r), []byte(jsonString(k.taskID)), []byte(jsonString(real)), 1)
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			if r.Header.Get("Mcp-Name") == k.taskID {
				r.Header.Set("Mcp-Name", real)
			}
		}
		rec, _ := record(next, r)
		out := taskIDField.ReplaceAll(rec.Body.Bytes(), []byte(`"taskId":"${1}~`+boot+`"`))
		rec.Body = bytes.NewBuffer(out)
		rec.Header().Del("Content-Length")
		replay(w, rec)
	})
}

// taskResultNotBlocking answers tasks/result of a task that tasks/get
// still shows working with a JSON-RPC error, at once.
func taskResultNotBlocking(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := servers.PeekRPC(r)
		if m.Method != "tasks/result" {
			next.ServeHTTP(w, r)
			return
		}
		var p struct {
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(servers.PeekBody(r), &p)
		id, _ := json.Marshal(p.Params.TaskID)
		got := servers.InProcess(next, http.MethodPost, r.Header.Get(wire.HeaderSessionID), r.Header,
			`{"jsonrpc":"2.0","id":`+servers.OwnID("get")+`,"method":"tasks/get","params":{"taskId":`+string(id)+`}}`)
		if strings.Contains(got.Body.String(), `"status":"working"`) {
			w.Header().Set("Content-Type", wire.MediaTypeJSON)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"Task %s is not completed (status: working). Poll tasks/get until status is 'completed' before requesting the result."}}`, m.ID, p.Params.TaskID)
			return
		}
		next.ServeHTTP(w, r)
	})
}
