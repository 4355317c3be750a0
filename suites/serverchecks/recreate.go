package serverchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// recreateChecks are the recreate checks.
func recreateChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "RECREATE-REINIT-200", Level: catalogue.Res, Section: "recreate", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "transport-recreation",
			Summary: "initialize carrying a live session id gets a real InitializeResult (200) with the same Mcp-Session-Id."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				e.reinitialize(ctx, e.C, sid)
			}},

		{Entry: catalogue.Entry{ID: "RECREATE-STATE-KEPT", Level: catalogue.Res, Section: "recreate", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "transport-recreation", Needs: []catalogue.Key{catalogue.KeyStateful}, DependsOn: []string{"RECREATE-REINIT-200"},
			Summary: "Session state survives the re-initialize."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				v1 := e.stateful(ctx, e.C, sid)
				v2 := e.stateful(ctx, e.C, sid)
				e.Expect(v2).NotTo(Equal(v1), "tools.stateful %s must return a different value on each call", e.Config.Tools.Stateful.Name)
				e.reinitialize(ctx, e.C, sid)
				v3 := e.stateful(ctx, e.C, sid)
				e.Expect(v3).NotTo(Equal(v1), "after re-initialize %s started over (%q again): the session's state was lost", e.Config.Tools.Stateful.Name, v1)
				e.Expect(v3).NotTo(Equal(v2), "after re-initialize %s did not advance", e.Config.Tools.Stateful.Name)
			}},

		{Entry: catalogue.Entry{ID: "RECREATE-WORKS-AFTER", Level: catalogue.Res, Section: "recreate", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "transport-recreation", DependsOn: []string{"RECREATE-REINIT-200"},
			Summary: "After the re-initialize, tools/list (listing the same tools as before it), tools/call and a new GET stream work on the same id."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				before := e.toolNames(ctx, e.C, sid)
				e.reinitialize(ctx, e.C, sid)
				e.Expect(e.toolNames(ctx, e.C, sid)).To(Equal(before), "the tools tools/list lists after the re-initialize; before it they were %v (the seeds: \"verify listTools() returns the same tools as before the refresh\")", before)
				e.expectCall(ctx, e.C, sid)
				e.openGET(ctx, e.C, sid, "")
			}},

		{Entry: catalogue.Entry{ID: "RECREATE-INFLIGHT", Level: catalogue.Res, Section: "recreate", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "transport-recreation", Needs: []catalogue.Key{catalogue.KeyNotifying}, DependsOn: []string{"RECREATE-REINIT-200"},
			Summary: "The page refresh of the seeds, as it happens: a call in flight, every stream cut, initialize carrying the stored session id, a new GET stream; the call goes on, every notification of it arrives once (the rest on the new GET stream or by resuming its POST stream from the last event seen) and so does its result."},
			need: notifyNeed, body: func(ctx context.Context, e *env) { e.refreshInFlight(ctx) }},

		{Entry: catalogue.Entry{ID: "RECREATE-OWNER-ONLY", Level: catalogue.Res, Section: "recreate", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "session-ownership", Needs: []catalogue.Key{catalogue.KeyPrincipals}, DependsOn: []string{"SESS-UNKNOWN-404"},
			Summary: "A request for a session made with another principal's token is refused (403/404) and the session is untouched."},
			body: func(ctx context.Context, e *env) {
				owner, other := e.as(0), e.as(1)
				sid := e.connect(ctx, owner)
				resp, err := other.Initialize(ctx, sid)
				e.Expect(err).NotTo(HaveOccurred())
				e.expectNotServed(resp, "re-initialize of another principal's session")
				resp, err = other.Call(ctx, sid, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				e.expectNotServed(resp, "tools/list on another principal's session")
				e.expectWorks(ctx, owner, sid)
			}},

		{Entry: catalogue.Entry{ID: "RECREATE-CONCURRENT", Level: catalogue.Res, Section: "recreate", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "transport-recreation", DependsOn: []string{"RECREATE-REINIT-200"},
			Summary: "Parallel re-initializes of one live session id all get a 200 InitializeResult with that id and leave one working session."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				var before string
				if e.Config.Tools.Stateful != nil {
					before = e.stateful(ctx, e.C, sid)
				}
				// Two refreshed tabs, or a retry racing the first attempt: the
				// re-initializes go out together.
				resps := make([]*wire.Response, concurrentReinits)
				errs := make([]error, concurrentReinits)
				atOnce(concurrentReinits, func(i int) { resps[i], errs[i] = e.C.Initialize(ctx, sid) })
				for i, resp := range resps {
					e.Expect(errs[i]).NotTo(HaveOccurred(), "re-initialize %d of %d", i+1, concurrentReinits)
					e.Expect(resp.Status).To(Equal(http.StatusOK), "re-initialize %d of %d, sent together, carrying live session id %q: %s", i+1, concurrentReinits, sid, resp.Body)
					m, err := resp.Result()
					e.Expect(err).NotTo(HaveOccurred(), "re-initialize %d of %d", i+1, concurrentReinits)
					e.Expect(m.Error).To(BeNil(), "re-initialize %d of %d", i+1, concurrentReinits)
					e.Expect(string(m.Result)).To(ContainSubstring("protocolVersion"), "an InitializeResult")
					e.Expect(resp.SessionID()).To(Equal(sid), "Mcp-Session-Id of re-initialize %d of %d", i+1, concurrentReinits)
				}
				n, err := e.C.Post(ctx, sid, wire.Notification("notifications/initialized"))
				e.Expect(err).NotTo(HaveOccurred())
				e.expectAccepted(n, "notifications/initialized after the re-initializes")
				e.expectWorks(ctx, e.C, sid)
				if e.Config.Tools.Stateful != nil {
					after := e.stateful(ctx, e.C, sid)
					e.Expect(after).NotTo(Equal(before), "after the re-initializes %s did not advance: the session's state was lost", e.Config.Tools.Stateful.Name)
				} else {
					e.expectCall(ctx, e.C, sid)
				}
				e.openGET(ctx, e.C, sid, "")
				e.expectWorks(ctx, e.C, sid)
			}},

		{Entry: catalogue.Entry{ID: "RESUME-NO-INIT", Level: catalogue.Res, Section: "recreate", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "page-refresh",
			Summary: "After every connection is cut, reusing the id without initialize (new GET, then POSTs) works."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				e.openGET(ctx, e.C, sid, "")
				e.refresh()
				e.openGET(ctx, e.C, sid, "")
				e.expectWorks(ctx, e.C, sid)
				e.expectCall(ctx, e.C, sid)
			}},
	}
}

// concurrentReinits is how many re-initializes RECREATE-CONCURRENT sends
// at once.
const concurrentReinits = 4

// reinitialize sends initialize with a live session id and expects a real
// InitializeResult for the same id, then completes the handshake.
func (e *env) reinitialize(ctx context.Context, c *wire.Client, sid string) {
	resp, err := c.Initialize(ctx, sid)
	e.Expect(err).NotTo(HaveOccurred())
	e.Expect(resp.Status).To(Equal(http.StatusOK), "initialize carrying live session id %q: %s", sid, resp.Body)
	m, err := resp.Result()
	e.Expect(err).NotTo(HaveOccurred())
	e.Expect(m.Error).To(BeNil(), "initialize carrying live session id %q", sid)
	e.Expect(string(m.Result)).To(ContainSubstring("protocolVersion"), "an InitializeResult")
	e.Expect(resp.SessionID()).To(Equal(sid), "Mcp-Session-Id of the re-initialize answer")
	n, err := c.Post(ctx, sid, wire.Notification("notifications/initialized"))
	e.Expect(err).NotTo(HaveOccurred())
	e.expectAccepted(n, "notifications/initialized after re-initialize")
}

// stateful calls the profile's stateful tool and returns its text.
func (e *env) stateful(ctx context.Context, c *wire.Client, sid string) string {
	t := e.Config.Tools.Stateful
	text, err := c.ToolText(ctx, sid, t.Name, t.Arguments)
	e.Expect(err).NotTo(HaveOccurred(), "tools/call %s", t.Name)
	return text
}

// expectCall calls a declared tool, if the profile declares one, and
// expects a result.
func (e *env) expectCall(ctx context.Context, c *wire.Client, sid string) {
	switch {
	case e.Config.Tools.Stateful != nil:
		e.stateful(ctx, c, sid)
	case e.Config.Tools.Notifying != nil:
		t := e.Config.Tools.Notifying
		_, err := c.ToolText(ctx, sid, t.Name, t.Arguments)
		e.Expect(err).NotTo(HaveOccurred(), "tools/call %s", t.Name)
	default:
		e.Logf("no tool declared in the target profile; tools/call not exercised")
	}
}

// refreshInFlight replays the seeds' acceptance test (a refresh while a
// tool runs): the call's first notification read, every connection cut,
// the session re-initialized with its id, a new standalone GET stream
// opened and the call's POST stream resumed from the last event read.
// Every notification of the call must then have arrived once, on some
// stream the client held, and its result too.
func (e *env) refreshInFlight(ctx context.Context) {
	sid := e.connect(ctx, e.C)
	first := e.openGET(ctx, e.C, sid, "")
	k := e.startNotifying(ctx, e.C, sid, "refresh")
	e.awaitPostNotes(ctx, k, 1)
	e.refresh() // the page goes: every stream it held is cut
	e.reinitialize(ctx, e.C, sid)
	get := e.openGET(ctx, e.C, sid, "")
	get.name = "the GET stream after the re-initialize"
	streams := []*collector{first, k.post, get}
	// A POST stream whose events carry ids is resumed from the last one
	// read, as the seeds' client does; one without cannot be.
	var err error
	if k.post.LastID() != "" {
		var resumed *collector
		if resumed, err = e.resumeAsClient(ctx, sid, k.post, "the POST stream resumed after the re-initialize"); err == nil {
			streams = append(streams, resumed)
		}
	}
	held := len(streams) // the streams before any second resume
	var got bool
	var resp wire.Message
	await := func() {
		e.WaitUntil(toolRun(e.Config)+quiet(e.Config), func() bool {
			for _, c := range streams {
				if m, ok := k.response(c.Messages()); ok {
					got, resp = true, m
				}
			}
			return got
		})
	}
	await()
	if !got && err == nil && k.post.LastID() != "" {
		// As DISCONNECT-NOT-CANCEL does: a replay store that lost the
		// response once is not a call aborted; a client resumes again.
		// It replays from the same id: it stands for the first resume,
		// whose replay the client drops.
		if again, err2 := e.resumeAsClient(ctx, sid, k.post, "the POST stream resumed a second time"); err2 == nil {
			streams = append(streams[:held-1:held-1], again)
			await()
		}
	}
	e.Pause(quiet(e.Config)) // what else the server sends arrives meanwhile
	if !got && k.post.LastID() == "" {
		// The response may go only on the call's own stream, which no
		// event id lets a client resume: it cannot come back.
		e.Skipf(report.NotOffered, "the call's POST stream carried no event ids, so after the refresh its result could come back only by resuming it; %s", e.byStream(k, streams...))
	}
	// The refresh cuts the call's stream before the re-initialize: a
	// target that cancels a call on its stream's cut (DISCONNECT-NOT-CANCEL)
	// loses it here for that reason, whatever the re-initialize does.
	e.OnPremise(catalogue.PremiseSurvivesCut, func() {
		if !got {
			why := ""
			if err != nil {
				why = fmt.Sprintf("; resuming its POST stream from %s failed: %v", k.post.LastID(), err)
			}
			e.Failf("the call running when the page refreshed never returned its result after the cut and the re-initialize (neither may abort the session's calls)%s; %s", why, e.byStream(k, streams...))
		}
		if failed := callFailed(resp); failed != "" && e.countNotes(k, streams...) < e.wantNotes() {
			e.Failf("the call running when the page refreshed ended after the cut and the re-initialize, with %s: neither may abort the session's calls; %s", failed, e.byStream(k, streams...))
		}
	})
	e.expectDelivered(k, streams...)
}

// callFailed says how a tools/call's response reports a failure (a
// JSON-RPC error, or a result with isError), bounded; "" for a success.
func callFailed(m wire.Message) string {
	if m.Error != nil {
		return fmt.Sprintf("JSON-RPC error %d %s", m.Error.Code, quoted(m.Error.Message, 200))
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(m.Result, &r) == nil && r.IsError {
		return "an error result " + quoted(string(m.Result), 200)
	}
	return ""
}

// toolNames lists the tools of one page of tools/list on session sid,
// sorted.
func (e *env) toolNames(ctx context.Context, c *wire.Client, sid string) []string {
	resp, err := c.Call(ctx, sid, "tools/list", nil)
	e.Expect(err).NotTo(HaveOccurred(), "tools/list")
	e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/list %s: %s", onSession(sid), excerptOf(resp))
	m, err := resp.Result()
	e.Expect(err).NotTo(HaveOccurred(), "tools/list")
	e.Expect(m.Error).To(BeNil(), "tools/list %s", onSession(sid))
	var page struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	e.Expect(json.Unmarshal(m.Result, &page)).To(Succeed(), "tools/list result")
	names := []string{}
	for _, t := range page.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// expectNotServed expects another principal's request on a session to be
// refused with 403 or 404. Served (2xx) is this check's own failure,
// whatever else failed: the session was open to someone else. Refused in
// another form (a 400) is the 404 of SESS-UNKNOWN-404 showing through.
func (e *env) expectNotServed(resp *wire.Response, what string) {
	e.Helper()
	step := func() { e.Expect(resp.Status).To(BeElementOf(http.StatusForbidden, http.StatusNotFound), "%s", what) }
	if resp.Status < 300 {
		e.OnPremise(catalogue.Own, func() {
			e.Failf("%s was served (HTTP %d): the session is open to a principal that did not create it", what, resp.Status)
		})
	}
	step()
}
