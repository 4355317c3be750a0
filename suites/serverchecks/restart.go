package serverchecks

import (
	"context"
	"crypto/rand"
	"net/http"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

// restartChecks are the restart checks.
func restartChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "RESTART-404", Level: catalogue.Res, Section: "restart", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "restart-recovery", Restarts: true, Exclusive: true, DependsOn: []string{"SESS-UNKNOWN-404"},
			Summary: "After a server restart the old id gets the 404 envelope and a new initialize works."},
			body: func(ctx context.Context, e *env) {
				if len(e.target.Replicas) > 0 {
					e.Skip(report.NotApplicable, "not applicable to a replicated deployment (--replica-url): its sessions are meant to outlive one replica's restart (REPLICA-LOSS grades that)")
				}
				sid := e.connect(ctx, e.C)
				e.Logf("!! F-RESTART: restarting the target")
				e.Expect(e.target.Restart(ctx)).To(Succeed(), "restart the target")
				e.tr.CloseIdleConnections()
				gone := e.gone404(ctx, sid)
				e.expectWorks(ctx, e.C, e.connect(ctx, e.C))
				e.envelopeOf(gone) // last: its shape is ENVELOPE-404's to grade

			}},

		{Entry: catalogue.Entry{ID: "RESTART-HINT", Level: catalogue.Res, Section: "restart", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "restart-recovery", Needs: []catalogue.Key{catalogue.KeyRecoveryHint}, Exclusive: true, DependsOn: []string{"RESTART-404"},
			Summary: "The 404 for a stale id carries a new Mcp-Session-Id of an initialized session that works at once."},
			body: func(ctx context.Context, e *env) {
				stale := rand.Text()
				resp, err := e.C.Call(ctx, stale, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				e.Expect(resp.Status).To(Equal(http.StatusNotFound), "tools/list with stale session id")
				fresh := resp.SessionID()
				e.Expect(fresh).NotTo(BeEmpty(), "the 404 carries no new Mcp-Session-Id")
				e.Expect(fresh).NotTo(Equal(stale))
				e.Cleanup(func(ctx context.Context) { _, _ = e.C.Delete(ctx, fresh) })
				e.expectWorks(ctx, e.C, fresh)
			}},
	}
}
