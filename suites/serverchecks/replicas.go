package serverchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// NoReplicas is why the replica checks skip without --replica-url.
const NoReplicas = "needs a replicated target: run with --replica-url (the endpoint of a second replica of the same deployment)"

// replicas returns a client per replica, the check's own (replica A,
// --url) first; each other replica is reached through a fault proxy of
// its own, as a round-robin balancer would send requests.
func (e *env) replicas() []*wire.Client {
	if len(e.target.Replicas) == 0 {
		e.Skip(report.NeedsReplica, NoReplicas)
	}
	out := []*wire.Client{e.C}
	for i, raw := range e.target.Replicas {
		u, err := url.Parse(raw)
		if err != nil {
			e.Failf("replica URL %q: %v", raw, err)
		}
		if e.target.Faults != nil {
			p, err := e.target.Faults.NewProxy(fmt.Sprintf("%s-replica-%d", strings.ToLower(e.Entry.ID), i+2), toxics.UpstreamOf(u))
			if err != nil {
				e.Failf("fault proxy for replica %s: %v", raw, err)
			}
			e.Cleanup(func(context.Context) { p.Close() })
			u.Host = p.Addr()
		}
		out = append(out, e.client(u.String(), e.Config.RequestHeader()))
	}
	return out
}

// expectServes expects every replica after A to serve sid, a session
// initialized on A: what every replica check builds on.
func (e *env) expectServes(ctx context.Context, cs []*wire.Client, sid string) {
	for i, c := range cs[1:] {
		resp, err := c.Call(ctx, sid, "tools/list", nil)
		e.Expect(err).NotTo(HaveOccurred())
		e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/list on replica %s of a session initialized on replica A: %s", replicaName(i+1), resp.Body)
	}
}

// replicaName names replica i (0: the --url one) in messages.
func replicaName(i int) string { return string(rune('A' + i)) }

// replicaNeed is what REPLICA-EXPIRE-ONCE needs: an active spell as long as
// a silent session's life, then that life again.
func replicaNeed(c *target.Profile) time.Duration { return 2*expiry(c) + graceSlack }

// lossNeed is what REPLICA-LOSS needs: the call's run, then the time a
// replica may take to notice that another died (five reaper intervals, at
// least 2 s, as the reference's call leases).
func lossNeed(c *target.Profile) time.Duration {
	return notifyNeed(c) + max(5*c.Timings.ReaperInterval.D(), 2*time.Second)
}

// replicaChecks are the checks of a replicated deployment.
func replicaChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "REPLICA-SESSION-SHARED", Level: catalogue.Res, Section: "replicas", Revisions: catalogue.WithSessions, Replicas: true, SpecRef: catalogue.ResilienceProfile + "horizontal-scale",
			Summary: "A session initialized on one replica is served by every other, with its state (tools.stateful, if declared)."},
			body: func(ctx context.Context, e *env) {
				cs := e.replicas()
				sid := e.connect(ctx, cs[0])
				tool := e.Config.Tools.Stateful
				if tool == nil {
					e.Logf("no tools.stateful declared: only that every replica serves the session (tools/list) is checked")
				}
				prev, numeric := int64(0), true
				for round := range 2 {
					for i, c := range cs {
						if tool == nil {
							resp, err := c.Call(ctx, sid, "tools/list", nil)
							e.Expect(err).NotTo(HaveOccurred())
							e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/list on replica %s (round %d) of a session initialized on replica A: %s", replicaName(i), round+1, resp.Body)
							continue
						}
						resp, err := c.Call(ctx, sid, "tools/call", wire.ToolParams(tool.Name, tool.Arguments, ""))
						e.Expect(err).NotTo(HaveOccurred(), "tools/call on replica %s", replicaName(i))
						e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/call %s on replica %s (round %d) of a session initialized on replica A: %s",
							tool.Name, replicaName(i), round+1, resp.Body)
						m, err := resp.Result()
						e.Expect(err).NotTo(HaveOccurred())
						e.Expect(m.Error).To(BeNil(), "tools/call on replica %s", replicaName(i))
						text, _ := wire.ResultText(m.Result)
						n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
						if err != nil {
							numeric = false
							continue
						}
						if numeric {
							e.Expect(n).To(BeNumerically(">", prev), "the stateful tool's value on replica %s went from %d to %d: the replicas do not share the session's state", replicaName(i), prev, n)
						}
						prev = n
					}
				}
				if tool != nil && !numeric {
					e.Logf("the stateful tool's results are not numbers; only that every replica serves the session was checked")
				}
			}},

		{Entry: catalogue.Entry{ID: "REPLICA-NOTIFY-ROUTED", Level: catalogue.Res, Section: "replicas", Revisions: catalogue.WithSessions, Replicas: true, SpecRef: catalogue.ResilienceProfile + "horizontal-scale", Needs: []catalogue.Key{catalogue.KeyNotifying}, DependsOn: []string{"REPLICA-SESSION-SHARED"},
			Summary: "A standalone GET held on replica B receives the notifications of a call running on replica A after the call's stream is cut."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				cs := e.replicas()
				sid := e.connect(ctx, cs[0])
				e.expectServes(ctx, cs, sid)
				get := e.openGET(ctx, cs[1], sid, "")
				get.name = "the GET stream on replica B"
				k := e.startNotifying(ctx, cs[0], sid, "routed")
				k.post.name = "the POST stream on replica A"
				e.awaitPostNotes(ctx, k, 1)
				e.refresh() // replica A's connections only: the call runs on
				want := e.wantNotes()
				e.WaitUntil(toolRun(e.Config)+quiet(e.Config), func() bool { return e.countNotes(k, k.post, get) >= want })
				e.Pause(quiet(e.Config))
				streams := []*collector{k.post, get}
				// Written to A's connection before A noticed the cut: the client
				// gets those back by resuming the stream (on B).
				if e.countNotes(k, streams...) < want && k.post.LastID() != "" {
					if s, err := e.get(ctx, cs[1], sid, k.post.LastID()); err == nil {
						resumed := e.collect("the POST stream resumed on replica B", s)
						e.WaitUntil(toolRun(e.Config), func() bool { _, ok := k.response(resumed.Messages()); return ok })
						streams = append(streams, resumed)
					} else {
						e.Logf("resuming the POST stream on replica B failed (%v)", err)
					}
				}
				e.expectRedirected(k, get, streams, func() string {
					return "no notification of the call running on replica A reached the GET stream held on replica B after the call's stream was cut; " + e.byStream(k, streams...)
				})
				e.expectDelivered(k, streams...)
			}},

		{Entry: catalogue.Entry{ID: "REPLICA-RESUME", Level: catalogue.Res, Section: "replicas", Revisions: catalogue.WithSessions, Replicas: true, SpecRef: catalogue.ResilienceProfile + "horizontal-scale", Needs: []catalogue.Key{catalogue.KeyNotifying}, ResumeRequired: true, DependsOn: []string{"REPLICA-SESSION-SHARED"},
			Summary: "A POST stream cut on replica A is resumed on replica B with Last-Event-ID: every missed notification, then the response, exactly once."},
			need: func(c *target.Profile) time.Duration { return notifyNeed(c) }, body: func(ctx context.Context, e *env) {
				cs := e.replicas()
				sid := e.connect(ctx, cs[0])
				e.expectServes(ctx, cs, sid)
				e.cutAfter(3)
				k := e.startNotifying(ctx, cs[0], sid, "replica-resume")
				k.post.name = "the POST stream on replica A"
				e.await(e.noResponse(), func() bool { _, done := k.response(k.post.Messages()); return done || k.post.Ended() },
					"the POST stream on replica A cut after 3 events, or its response")
				if _, done := k.response(k.post.Messages()); done {
					e.Skip(report.Unobservable, "the call's POST stream carried its response within 3 events, so it could not be cut before it: "+notesElsewhere)
				}
				e.needIDs(k.post)
				s, err := e.get(ctx, cs[1], sid, k.post.LastID())
				e.Expect(err).NotTo(HaveOccurred(), "GET with Last-Event-ID %q on replica B", k.post.LastID())
				resumed := e.collect("the POST stream resumed on replica B", s)
				e.awaitResponse(ctx, k, resumed)
				e.Pause(quiet(e.Config))
				e.expectDelivered(k, k.post, resumed)
				msgs := resumed.Messages()
				for i, m := range msgs {
					if k.isResponse(m) {
						e.Expect(e.notes(msgs[i+1:], k)).To(BeEmpty(), "%s carried notifications after the call's response", resumed.name)
						e.Expect(msgs[i+1:]).NotTo(ContainElement(Satisfy(k.isResponse)), "%s carried the response twice", resumed.name)
					}
				}
			}},

		{Entry: catalogue.Entry{ID: "REPLICA-EXPIRE-ONCE", Level: catalogue.Res, Section: "replicas", Revisions: catalogue.WithSessions, Replicas: true, SpecRef: catalogue.ResilienceProfile + "horizontal-scale", Needs: []catalogue.Key{catalogue.KeyGraceTimings}, Idle: true, DependsOn: []string{"REPLICA-SESSION-SHARED"},
			Summary: "Expiry is decided once for all replicas: a session kept active through one replica lives on every other; once silent it is gone from all."},
			need: replicaNeed, body: func(ctx context.Context, e *env) {
				cs := e.replicas()
				sid, err := cs[0].Connect(ctx)
				e.Expect(err).NotTo(HaveOccurred(), "initialize handshake on replica A")
				e.Cleanup(func(ctx context.Context) { _, _ = cs[0].Delete(ctx, sid) })
				e.expectServes(ctx, cs, sid)
				every := max(e.Config.Timings.IdleThreshold.D()/3, 50*time.Millisecond)
				e.Logf("for %v: tools/list on replica A only, every %v", expiry(e.Config), every)
				for end := time.Now().Add(expiry(e.Config)); time.Now().Before(end); {
					e.Pause(every)
					e.expectWorks(ctx, cs[0], sid)
				}
				for i, c := range cs[1:] {
					resp, err := c.Call(ctx, sid, "tools/list", nil)
					e.Expect(err).NotTo(HaveOccurred())
					e.Expect(resp.Status).To(Equal(http.StatusOK),
						"replica %s expired a session kept active through replica A: each replica decided expiry on its own view", replicaName(i+1))
				}
				e.Logf("silent for %v (idle threshold + grace period + reaper interval + slack)", expiry(e.Config))
				e.Pause(expiry(e.Config))
				for i, c := range cs {
					resp, err := c.Call(ctx, sid, "tools/list", nil)
					e.Expect(err).NotTo(HaveOccurred())
					e.Expect(resp.Status).To(Equal(http.StatusNotFound),
						"tools/list on replica %s of a session silent past its grace period: a replica still serves an expired session", replicaName(i))
				}
			}},

		{Entry: catalogue.Entry{ID: "REPLICA-LOSS", Level: catalogue.Res, Section: "replicas", Revisions: catalogue.WithSessions, Replicas: true, SpecRef: catalogue.ResilienceProfile + "horizontal-scale", Needs: []catalogue.Key{catalogue.KeyNotifying}, Restarts: true, Exclusive: true, DependsOn: []string{"REPLICA-SESSION-SHARED"},
			Summary: "Replica A (--server-cmd) killed with SIGKILL mid-call: the session goes on on replica B, and the call's stream resumed there is answered (a result, or an error naming its resume path in data.resume)."},
			need: lossNeed, body: func(ctx context.Context, e *env) {
				cs := e.replicas()
				if e.target.Kill == nil {
					e.Skip(report.NeedsRestart, "needs replica A started by --server-cmd, so that it can be killed")
				}
				sid := e.connect(ctx, cs[0])
				e.expectServes(ctx, cs, sid)
				k := e.startNotifying(ctx, cs[0], sid, "replica-loss")
				k.post.name = "the POST stream on replica A"
				e.awaitPostNotes(ctx, k, 1)
				e.needIDs(k.post)
				e.Logf("!! F-KILL: replica A killed with SIGKILL in the middle of the call")
				e.Expect(e.target.Kill(ctx)).To(Succeed(), "kill replica A")
				e.Cleanup(func(ctx context.Context) {
					if err := e.target.Restart(ctx); err != nil {
						e.Logf("restarting replica A: %v", err)
					}
				})
				resp, err := cs[1].Call(ctx, sid, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/list on replica B after replica A was killed: %s", resp.Body)
				s, err := e.get(ctx, cs[1], sid, k.post.LastID())
				e.Expect(err).NotTo(HaveOccurred(), "GET with Last-Event-ID %q on replica B after replica A was killed", k.post.LastID())
				resumed := e.collect("the POST stream resumed on replica B", s)
				m := e.awaitRecovered(k, resumed)
				if m.Error != nil {
					var data struct {
						Resume *struct{ Method, Via string } `json:"resume"`
					}
					_ = json.Unmarshal(m.Error.Data, &data)
					e.Expect(data.Resume != nil && data.Resume.Method != "" && data.Resume.Via != "").To(BeTrue(),
						"the call lost with replica A was answered with an error that names no resume path (data.resume {method, via}): %s", m.Error.Message)
					e.Logf("the lost call was answered with %d %q, resume with %s via %s", m.Error.Code, m.Error.Message, data.Resume.Method, data.Resume.Via)
				}
			}},
	}
}
